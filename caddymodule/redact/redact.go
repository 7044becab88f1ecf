// Package redact keeps a config's secrets out of what the gateway shows
// (docs/security.md, "What is shown"). A config holds secrets:
// credentials, static headers, keys in URLs, arguments and environment of
// child processes, and `{$VAR}` placeholders are expanded when the
// Caddyfile is adapted, so the JSON holds their values. Wherever the
// gateway shows its config (`caddy mcp tools`, text and JSON), its log
// lines and the errors of a load, it goes through a Redaction: values in
// secret positions are replaced by Mark, and every such value is then
// scrubbed from any other text (a description, an error quoting a URL).
// The catalog page shows tools/list only, never config.
package redact

import (
	"bytes"
	"encoding/json"
	"errors"
	"net/url"
	"regexp"
	"sort"
	"strings"

	"github.com/caddyserver/caddy/v2"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
)

// Mark stands where a secret was.
const Mark = "[redacted]"

// minScrubLen: a secret shorter than this is redacted where it stands but
// not searched for in other text, where it would hide ordinary words.
const minScrubLen = 8

// secretKey matches JSON keys whose string values may be credentials or
// connection strings.
var secretKey = regexp.MustCompile(`(?i)(key|secret|passw|token|credential|dsn|cookie|authorization|header|hash|user|redis)`)

// placeholder is a value that is one Caddy placeholder ({env.X},
// {file.path}): a name, not a secret, shown as written.
var placeholder = regexp.MustCompile(`^\{[A-Za-z0-9_.\-/]+\}$`)

// publicCredentialField are the fields of a credential that say how it is
// sent, not what it is.
var publicCredentialField = map[string]bool{"kind": true, "in": true, "name": true, "as": true,
	"scopes": true, "file": true, "claim": true, "token_url": true, "client_id": true}

// Redaction redacts one config and remembers what it redacted.
type Redaction struct {
	secrets map[string]bool
	rep     *strings.Replacer // of secrets; nil until needed
}

// JSON returns raw with every secret redacted, and the
// redaction (to scrub other text with).
func JSON(raw json.RawMessage) (json.RawMessage, *Redaction) {
	r := &Redaction{secrets: map[string]bool{}}
	var v any
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	if dec.Decode(&v) != nil {
		return json.RawMessage(`"[unreadable]"`), r
	}
	v = r.scrubAll(r.value("", v))
	out, err := json.Marshal(v)
	if err != nil {
		return json.RawMessage(`"[unreadable]"`), r
	}
	return out, r
}

// value redacts v, found under key.
func (r *Redaction) value(key string, v any) any {
	switch x := v.(type) {
	case map[string]any:
		for k, val := range x {
			switch {
			case k == "headers" || k == "env":
				x[k] = r.all(val) // name → value: every value
			case k == "credentials" || k == "credential":
				x[k] = r.credentials(val)
			case k == "args":
				x[k] = r.args(val)
			default:
				x[k] = r.value(k, val)
			}
		}
		return x
	case []any:
		for i, val := range x {
			x[i] = r.value(key, val)
		}
		return x
	case string:
		switch {
		case placeholder.MatchString(x):
			return x
		case isURL(x):
			return r.url(x)
		case secretKey.MatchString(key):
			return r.secret(x)
		}
	}
	return v
}

// all redacts every string in v.
func (r *Redaction) all(v any) any {
	switch x := v.(type) {
	case map[string]any:
		for k, val := range x {
			x[k] = r.all(val)
		}
		return x
	case []any:
		for i, val := range x {
			x[i] = r.all(val)
		}
		return x
	case string:
		if placeholder.MatchString(x) {
			return x
		}
		return r.secret(x)
	}
	return v
}

// credentials redacts each credential but the fields that say how it is
// sent.
func (r *Redaction) credentials(v any) any {
	list, ok := v.([]any)
	if !ok {
		list = []any{v}
	}
	for _, c := range list {
		m, ok := c.(map[string]any)
		if !ok {
			continue
		}
		for k, val := range m {
			if publicCredentialField[k] {
				m[k] = r.value(k, val)
			} else {
				m[k] = r.all(val)
			}
		}
	}
	return v
}

// args redacts a child process's arguments but bare flags (-y,
// --stdio): any other may be, or hold, a secret.
func (r *Redaction) args(v any) any {
	list, ok := v.([]any)
	if !ok {
		return r.all(v)
	}
	for i, a := range list {
		s, _ := a.(string)
		if strings.HasPrefix(s, "-") && !strings.Contains(s, "=") && len(s) < minScrubLen*2 || placeholder.MatchString(s) {
			continue
		}
		list[i] = r.all(a)
	}
	return list
}

// isURL: s is one absolute URL (a connection string, an endpoint), not
// text that mentions one.
func isURL(s string) bool {
	if !strings.Contains(s, "://") || strings.ContainsAny(s, " \t\r\n") {
		return false
	}
	u, err := url.Parse(s)
	return err == nil && u.Scheme != ""
}

// url keeps where a URL points, as written, and redacts what it carries:
// the user information, the query and the fragment.
func (r *Redaction) url(s string) string {
	u, _ := url.Parse(s)
	if u.User != nil {
		// A user name alone is no secret (and often an ordinary word):
		// the password is, and the pair.
		if p, ok := u.User.Password(); ok {
			r.note(p)
			r.note(u.User.String())
		}
		scheme, rest, _ := strings.Cut(s, "://")
		end := strings.IndexAny(rest, "/?#")
		if end < 0 {
			end = len(rest)
		}
		at := strings.LastIndex(rest[:end], "@")
		s = scheme + "://" + Mark + rest[at:]
	}
	// The values are the secrets; a name (interpolateParams) is not.
	for _, v := range u.Query() {
		for _, q := range v {
			r.note(q)
		}
	}
	if u.Fragment != "" {
		r.note(u.Fragment)
	}
	if i := strings.IndexAny(s, "?#"); i >= 0 {
		s = s[:i+1] + Mark
	}
	return s
}

func (r *Redaction) secret(s string) string {
	r.note(s)
	return Mark
}

func (r *Redaction) note(s string) {
	if s != "" && s != Mark && !r.secrets[s] {
		r.secrets[s] = true
		r.rep = nil
	}
}

// scrubAll scrubs every string of v (not map keys) with r.
func (r *Redaction) scrubAll(v any) any {
	switch x := v.(type) {
	case map[string]any:
		for k, val := range x {
			x[k] = r.scrubAll(val)
		}
	case []any:
		for i, val := range x {
			x[i] = r.scrubAll(val)
		}
	case string:
		return r.scrub(x)
	}
	return v
}

// scrub replaces in s every secret of the config long enough to look for.
func (r *Redaction) scrub(s string) string {
	return r.replacer().Replace(s)
}

func (r *Redaction) replacer() *strings.Replacer {
	if r.rep != nil {
		return r.rep
	}
	var long []string
	for s := range r.secrets {
		if len(s) >= minScrubLen {
			long = append(long, s)
		}
	}
	// Longest first: a secret that contains another goes whole.
	sort.Slice(long, func(i, j int) bool { return len(long[i]) > len(long[j]) })
	pairs := make([]string, 0, 2*len(long))
	for _, s := range long {
		pairs = append(pairs, s, Mark)
	}
	r.rep = strings.NewReplacer(pairs...)
	return r.rep
}

// Provisioned is the redaction of a provisioned handler's config (raw,
// its JSON): its secrets as written and as the placeholders expand (a
// provider's error quotes the value, not {env.X}).
func Provisioned(raw json.RawMessage, repl *caddy.Replacer) *Redaction {
	_, r := JSON(raw)
	for s := range r.secrets {
		if strings.Contains(s, "{") {
			r.note(repl.ReplaceKnown(s, ""))
		}
	}
	return r
}

// Scrubber is what a provisioned handler scrubs its log lines and load
// errors with; nil when its config has no secret worth looking for.
type Scrubber struct {
	secrets []string // those of at least minScrubLen
	r       *strings.Replacer
}

func (r *Redaction) Scrubber() *Scrubber {
	var long []string
	for s := range r.secrets {
		if len(s) >= minScrubLen {
			long = append(long, s)
		}
	}
	if len(long) == 0 {
		return nil
	}
	return &Scrubber{secrets: long, r: r.replacer()}
}

// Scrub is text without the secrets. Most text holds none: looking for
// each costs no allocation, a Replace always does.
func (s *Scrubber) Scrub(text string) string {
	if s == nil {
		return text
	}
	for _, secret := range s.secrets {
		if strings.Contains(text, secret) {
			return s.r.Replace(text)
		}
	}
	return text
}

// Err is err with the secrets scrubbed from its text.
func (s *Scrubber) Err(err error) error {
	if s == nil || err == nil {
		return err
	}
	if msg := s.Scrub(err.Error()); msg != err.Error() {
		return errors.New(msg)
	}
	return err
}

// Logger wraps l so that no line it writes holds a secret: the message
// and every string or error field are scrubbed.
func (s *Scrubber) Logger(l *zap.Logger) *zap.Logger {
	if s == nil {
		return l
	}
	return l.WithOptions(zap.WrapCore(func(c zapcore.Core) zapcore.Core { return &scrubCore{c, s} }))
}

type scrubCore struct {
	zapcore.Core
	s *Scrubber
}

func (c *scrubCore) With(fs []zapcore.Field) zapcore.Core {
	return &scrubCore{c.Core.With(c.fields(fs)), c.s}
}

// Check lets the wrapped core decide (Caddy's cores filter by logger name
// and may sample) and writes through what it chose, scrubbed.
func (c *scrubCore) Check(e zapcore.Entry, ce *zapcore.CheckedEntry) *zapcore.CheckedEntry {
	inner := c.Core.Check(e, nil)
	if inner == nil {
		return ce
	}
	return ce.AddCore(e, &scrubbedWrite{Core: c.Core, inner: inner, s: c.s})
}

func (c *scrubCore) Write(e zapcore.Entry, fs []zapcore.Field) error {
	e.Message = c.s.Scrub(e.Message)
	return c.Core.Write(e, c.s.fields(fs))
}

func (c *scrubCore) fields(fs []zapcore.Field) []zapcore.Field { return c.s.fields(fs) }

// scrubbedWrite is one checked entry of the wrapped core, written
// scrubbed.
type scrubbedWrite struct {
	zapcore.Core // the wrapped core, for what a CheckedEntry does not call
	inner        *zapcore.CheckedEntry
	s            *Scrubber
}

func (w *scrubbedWrite) Write(e zapcore.Entry, fs []zapcore.Field) error {
	w.inner.Entry.Message = w.s.Scrub(e.Message)
	w.inner.Write(w.s.fields(fs)...)
	return nil
}

// fields are fs with string, error and Stringer values scrubbed (as
// strings); fs itself when nothing needs to change.
func (s *Scrubber) fields(fs []zapcore.Field) []zapcore.Field {
	out := fs
	for i, f := range fs {
		var str string
		switch f.Type {
		case zapcore.StringType:
			str = f.String
		case zapcore.ErrorType:
			if err, ok := f.Interface.(error); ok {
				str = err.Error()
			}
		case zapcore.StringerType:
			if st, ok := f.Interface.(interface{ String() string }); ok {
				str = st.String()
			}
		default:
			continue
		}
		if scrubbed := s.Scrub(str); scrubbed != str || f.Type != zapcore.StringType {
			if &out[0] == &fs[0] {
				out = append([]zapcore.Field(nil), fs...)
			}
			out[i] = zap.String(f.Key, scrubbed)
		}
	}
	return out
}
