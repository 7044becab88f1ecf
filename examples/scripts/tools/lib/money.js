// Helpers shared by several scripts; esbuild bundles them into each script
// that imports them when the configuration loads.
export const sum = (xs) => xs.reduce((a, b) => a + b, 0)
export const eur = (n) => `€${n.toFixed(2)}`
