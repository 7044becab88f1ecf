// Scripts have no btoa: a small UTF-8 → base64 encoder.
const abc = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/'

function utf8(s) {
	const out = []
	for (const ch of s) {
		let c = ch.codePointAt(0)
		if (c < 0x80) out.push(c)
		else if (c < 0x800) out.push(0xc0 | (c >> 6), 0x80 | (c & 63))
		else if (c < 0x10000) out.push(0xe0 | (c >> 12), 0x80 | ((c >> 6) & 63), 0x80 | (c & 63))
		else out.push(0xf0 | (c >> 18), 0x80 | ((c >> 12) & 63), 0x80 | ((c >> 6) & 63), 0x80 | (c & 63))
	}
	return out
}

export function base64(s) {
	const b = utf8(s)
	let out = ''
	for (let i = 0; i < b.length; i += 3) {
		const n = (b[i] << 16) | ((b[i + 1] ?? 0) << 8) | (b[i + 2] ?? 0)
		out += abc[(n >> 18) & 63] + abc[(n >> 12) & 63]
		out += i + 1 < b.length ? abc[(n >> 6) & 63] : '='
		out += i + 2 < b.length ? abc[n & 63] : '='
	}
	return out
}
