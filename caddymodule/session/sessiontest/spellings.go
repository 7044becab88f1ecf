// Package sessiontest helps the tests of session ids.
package sessiontest

import "strings"

// idPrefix starts every session id (the format of session.IDs).
const idPrefix = "mcp-session-"

// OtherSpellings are the strings that decode, leniently, to the bytes of
// id: the last character of each part carries 2 bits of data and 4 that a
// lenient decoder ignores.
func OtherSpellings(id string) []string {
	rest := strings.TrimPrefix(id, idPrefix)
	n, tag, _ := strings.Cut(rest, ".")
	alphabet := "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"
	var out []string
	for _, part := range []int{0, 1} {
		p := []string{n, tag}[part]
		last := strings.IndexByte(alphabet, p[len(p)-1])
		for low := range 16 {
			c := alphabet[last&^15|low]
			if c == p[len(p)-1] {
				continue
			}
			q := []string{n, tag}
			q[part] = p[:len(p)-1] + string(c)
			out = append(out, idPrefix+q[0]+"."+q[1])
		}
	}
	return out
}
