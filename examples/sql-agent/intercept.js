// The interceptor of examples/sql-agent: it sees each statement the agent
// writes before the guard and the database do. Throwing refuses the
// statement with the message; returning a string runs that statement
// instead; returning nothing runs it as written.
export default function ({ sql, params, caller, tool }) {
	if (/\bemail\b/i.test(sql)) {
		throw new Error("email addresses are not for the agent: use export_customers");
	}
	// The agent's favourite shorthand, made a bounded query.
	if (sql.trim().toLowerCase() === "recent orders") {
		return "SELECT id, customer_id, total, ordered_at FROM sql_agent_demo.orders ORDER BY ordered_at DESC LIMIT 5";
	}
}
