// Output mapper: gets {results, tool, auth}; results are the rows, keys in
// column order, timestamps as RFC 3339 strings. Its return value is the
// tool's result.
import { eur, sum } from '../lib/money.js'

export default function ({ results }) {
	if (results.length === 0) throw new Error('no orders for that customer')
	const byCategory = {}
	for (const r of results) {
		byCategory[r.category] = (byCategory[r.category] ?? 0) + r.quantity * r.price
	}
	console.info(`summarized ${results.length} orders`)
	return {
		customer: results[0].customer,
		orders: results.length,
		first_order: results[0].ordered_at,
		total: eur(sum(results.map((r) => r.quantity * r.price))),
		per_category: Object.fromEntries(Object.entries(byCategory).map(([k, v]) => [k, eur(v)])),
	}
}
