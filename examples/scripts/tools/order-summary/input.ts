// Input mapper: gets {inputs, tool, auth} with the arguments as the client
// sent them; the returned object replaces them, and is then validated
// against the tool's declared inputs and bound into the statement.
type Args = { customer?: string | number }

export default function ({ inputs }: { inputs: Args }): Args {
	const c = String(inputs.customer ?? '').trim()
	if (c === '') throw new Error('customer is required: an id or an e-mail address')
	if (/^#?[0-9]+$/.test(c)) return { customer: String(Number(c.replace('#', ''))) }
	if (c.includes('@')) return { customer: c.toLowerCase() }
	throw new Error(`customer must be an id or an e-mail address, got "${c}"`)
}
