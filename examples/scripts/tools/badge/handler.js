// Handler: returns a full MCP tool result ({content: [...]}), which the
// gateway passes through: here an image block and a text block.
import { base64 } from '../lib/base64.js'

const esc = (s) => s.replace(/[&<>"]/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;' })[c])

export default function ({ inputs }) {
	const { label, value, color } = inputs
	if (!/^#?[0-9a-zA-Z]+$/.test(color)) throw new Error(`not a colour: ${color}`)
	const lw = 6 * label.length + 10
	const vw = 6 * value.length + 10
	const svg = `<svg xmlns="http://www.w3.org/2000/svg" width="${lw + vw}" height="20">` +
		`<rect width="${lw}" height="20" fill="#555"/><rect x="${lw}" width="${vw}" height="20" fill="${color}"/>` +
		`<g fill="#fff" font-family="Verdana,sans-serif" font-size="11">` +
		`<text x="5" y="14">${esc(label)}</text><text x="${lw + 5}" y="14">${esc(value)}</text></g></svg>`
	return {
		content: [
			{ type: 'image', data: base64(svg), mimeType: 'image/svg+xml' },
			{ type: 'text', text: `${label}: ${value}` },
		],
	}
}
