// Output mapper of the customer-card tool (discovered: scripts_dir
// ./examples/tools, tool customer-card, file output.js). It gets
// {results, tool, auth} and its return value replaces the results.
const flags = { GB: '🇬🇧', US: '🇺🇸', NL: '🇳🇱' }

export default function ({ results }) {
	if (results.length === 0) throw new Error('no customer with that id')
	const c = results[0]
	return {
		name: c.name,
		contact: `${c.name} <${c.email}>`,
		country: `${flags[c.country] ?? ''} ${c.country}`.trim(),
		customer_since: c.created_at.slice(0, 10),
	}
}
