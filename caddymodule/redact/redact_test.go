package redact

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"

	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"go.uber.org/zap/zaptest/observer"
)

// Every line the handler logs is scrubbed: its message and its string,
// error and Stringer fields; other fields pass as they are. What the
// wrapped core refuses (a level it does not log) stays unwritten.
func TestScrubbedLogger(t *testing.T) {
	_, r := JSON(json.RawMessage(`{"headers":{"X-Key":"hdr-secret-0042"},"url":"https://x.example/a?k=query-secret-77"}`))
	core, logs := observer.New(zapcore.InfoLevel)
	l := r.Scrubber().Logger(zap.New(core)).With(zap.String("with", "w hdr-secret-0042"))
	l.Debug("below the level")
	l.Info("fetch https://x.example/a?k=query-secret-77 failed",
		zap.String("s", "a hdr-secret-0042 b"), zap.Error(errors.New("e query-secret-77")),
		zap.Stringer("st", stringer("query-secret-77")), zap.Int("n", 7))
	if logs.Len() != 1 {
		t.Fatalf("%d lines", logs.Len())
	}
	e := logs.All()[0]
	line := fmt.Sprint(e.Message, e.ContextMap())
	for _, s := range []string{"hdr-secret-0042", "query-secret-77"} {
		if strings.Contains(line, s) {
			t.Errorf("the line holds %s: %s", s, line)
		}
	}
	if e.ContextMap()["n"] != int64(7) || e.ContextMap()["s"] != "a [redacted] b" {
		t.Errorf("fields: %v", e.ContextMap())
	}
}

type stringer string

func (s stringer) String() string { return string(s) }

// What the redaction keeps and what it takes, by position.
func TestRedactConfigJSON(t *testing.T) {
	raw := `{"name":"gw","session_keys":["k-0123456789"],"description":"see https://docs.example/x for help",
	 "sources":[{"source":{"spec":"https://s.example/o.json?t=abc#frag","url":"https://u:pw@h.example/mcp",
	   "uri":"docs://kind/{kind}","args":["-y","--stdio","--key=v1","pos","{env.A}"],"env":{"A":"e1"},
	   "headers":{"X":"h1"},"credentials":[{"kind":"basic","username":"u1","password":"p1"},{"kind":"bearer","token":"{env.T}"}]}}],
	 "cache":{"redis":"redis://:pw2@r.example:6379/0","key_prefix":"p:"}}`
	out, r := JSON(json.RawMessage(raw))
	got := string(out)
	for _, want := range []string{`"name":"gw"`, `"session_keys":["[redacted]"]`, `"description":"see https://docs.example/x for help"`,
		`"spec":"https://s.example/o.json?[redacted]"`, `"url":"https://[redacted]@h.example/mcp"`, `"uri":"docs://kind/{kind}"`,
		`"args":["-y","--stdio","[redacted]","[redacted]","{env.A}"]`, `"env":{"A":"[redacted]"}`, `"headers":{"X":"[redacted]"}`,
		`{"kind":"basic","password":"[redacted]","username":"[redacted]"}`, `{"kind":"bearer","token":"{env.T}"}`,
		`"redis":"redis://[redacted]@r.example:6379/0"`} {
		if !strings.Contains(got, want) {
			t.Errorf("redacted config lacks %s:\n%s", want, got)
		}
	}
	for _, s := range []string{"k-0123456789", "abc", "frag", "--key=v1", "pw2", "e1", "h1", "p1", "pw", "u:pw"} {
		if !r.secrets[s] {
			t.Errorf("%q is not remembered as a secret", s)
		}
	}
	for _, s := range []string{"u", "t", "t=abc"} {
		if r.secrets[s] {
			t.Errorf("%q is remembered as a secret: a name, not a value", s)
		}
	}
}
