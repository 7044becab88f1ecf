package auth

import (
	"cmp"
	"encoding/base64"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/edgemcp/edgemcp/pipeline"
)

// The message of an auth script's throw is shown to the caller (and goes
// into the WWW-Authenticate error_description and the logs), but goja's own
// errors quote the values they choke on: calling a header value as a
// function throws "TypeError: Value is not an object: <the token>". So,
// before a message leaves the plugin, every header value the request
// carried, each of its words, and the decoded parts of a base64 word
// (Basic credentials) are blotted out of it. Pieces shorter than
// minRedacted are left: they cannot be a credential worth the name, and
// blotting them would garble ordinary words.
const (
	minRedacted   = 4
	redactedMark  = "[redacted]"
	maxReasonSize = 256
)

// redact returns msg without any piece of req's header values, on one line
// of printable characters, at most maxReasonSize bytes.
func redact(msg string, req *pipeline.AuthRequest) string {
	var pieces []string
	add := func(p string) {
		if p = strings.TrimSpace(p); len(p) >= minRedacted {
			pieces = append(pieces, p)
		}
	}
	for _, values := range req.Header {
		for _, v := range values {
			add(v)
			for _, w := range strings.FieldsFunc(v, func(r rune) bool { return unicode.IsSpace(r) || strings.ContainsRune(",;=", r) }) {
				add(w)
				for _, enc := range []*base64.Encoding{base64.StdEncoding, base64.RawStdEncoding, base64.URLEncoding, base64.RawURLEncoding} {
					if raw, err := enc.DecodeString(w); err == nil && utf8.Valid(raw) {
						add(string(raw))
						for _, part := range strings.Split(string(raw), ":") {
							add(part)
						}
						break
					}
				}
			}
		}
	}
	// Longest first, so that a value is blotted whole, not around a word
	// of it that was blotted before.
	slices.SortFunc(pieces, func(a, b string) int { return cmp.Compare(len(b), len(a)) })
	for _, p := range pieces {
		msg = strings.ReplaceAll(msg, p, redactedMark)
	}
	// The runtime cuts long messages (ending them with "…"): the cut may
	// have left the start of a value, which the loop above cannot match.
	if body, cut := strings.CutSuffix(msg, "…"); cut {
		for _, p := range pieces {
			for k := len(p) - 1; k >= minRedacted; k-- {
				if strings.HasSuffix(body, p[:k]) {
					body = body[:len(body)-k] + redactedMark
					break
				}
			}
		}
		msg = body + "…"
	}
	msg = strings.Map(func(r rune) rune {
		if !unicode.IsPrint(r) {
			return ' '
		}
		return r
	}, msg)
	if len(msg) > maxReasonSize {
		cut := maxReasonSize
		for cut > 0 && !utf8.RuneStart(msg[cut]) {
			cut--
		}
		msg = msg[:cut] + "…"
	}
	return msg
}
