// Package sqlagent builds the tools that let an agent explore a database
// and run SQL it writes itself (docs/sql-agent.md): <prefix>_list_tables,
// <prefix>_describe_table, <prefix>_query and, optionally,
// <prefix>_explain, on any connector that implements pipeline.AgentSQL.
//
// Safety is the database's: the connector runs every statement read-only
// (a READ ONLY transaction that is rolled back; SQLite: a read-only
// connection that admits reads only), under a statement timeout, as the
// configured role and with the verified caller handed to the database as
// for declared tools, and cuts the answer at max_rows and
// max_result_size. Before it goes there, a statement passes the
// interceptor (a script that may rewrite or refuse it), the guard
// (sqltemplate.CheckAgentQuery: one query, no write the lexer can see, no
// blocked function, nothing it cannot read; no excluded table named) and,
// with max_cost or max_rows_estimate, the planner's estimate. The tools
// are ordinary pipeline.Tools: auth, approval and guardrails apply to them
// as to any tool.
package sqlagent
