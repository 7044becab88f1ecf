// Handler of the shipping-quote tool: a script-backed tool with no
// database. Inputs are validated and defaulted before it runs.
type Inputs = { weight_kg: number; country: string; express: boolean }

const perKg: Record<string, number> = { GB: 4.5, US: 9.0, NL: 3.75 }

export default function ({ inputs }: { inputs: Inputs }) {
	const rate = perKg[inputs.country]
	if (rate === undefined) {
		throw new Error(`we do not ship to ${inputs.country} (only ${Object.keys(perKg).join(', ')})`)
	}
	const base = Math.max(5, inputs.weight_kg * rate)
	const total = inputs.express ? base * 1.8 : base
	return {
		country: inputs.country,
		days: inputs.express ? 1 : 4,
		price_eur: Math.round(total * 100) / 100,
	}
}
