package caddymodule

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/caddyserver/caddy/v2/caddyconfig"
	_ "github.com/caddyserver/caddy/v2/caddyconfig/httpcaddyfile"
)

var update = flag.Bool("update", false, "rewrite the golden adapt outputs")

// Golden adapt tests. Each testdata/adapt/*.caddytest file holds a Caddyfile,
// a line of dashes, and either the JSON it adapts to or, for a case that
// must fail, "error: " and the exact message `caddy adapt` prints (file and
// line included).
func TestAdaptGolden(t *testing.T) {
	files, err := filepath.Glob("testdata/adapt/*.caddytest")
	if err != nil || len(files) == 0 {
		t.Fatalf("no golden files: %v", err)
	}
	for _, file := range files {
		t.Run(strings.TrimSuffix(filepath.Base(file), ".caddytest"), func(t *testing.T) {
			raw, err := os.ReadFile(file)
			if err != nil {
				t.Fatal(err)
			}
			input, want, ok := strings.Cut(string(raw), "\n----------\n")
			if !ok {
				t.Fatalf("%s: missing ---------- separator", file)
			}
			got := adaptForTest(t, input)
			if *update {
				if err := os.WriteFile(file, []byte(input+"\n----------\n"+got+"\n"), 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			if strings.TrimSpace(got) != strings.TrimSpace(want) {
				t.Errorf("adapt output differs\n--- got ---\n%s\n--- want ---\n%s", got, want)
			}
		})
	}
}

// adaptForTest adapts a Caddyfile named "Caddyfile" and returns indented
// JSON, or "error: <message>".
func adaptForTest(t *testing.T, input string) string {
	t.Helper()
	adapter := caddyconfig.GetAdapter("caddyfile")
	out, _, err := adapter.Adapt([]byte(input), map[string]any{"filename": "Caddyfile"})
	if err != nil {
		return "error: " + err.Error()
	}
	var buf bytes.Buffer
	if err := json.Indent(&buf, out, "", "\t"); err != nil {
		t.Fatal(err)
	}
	return buf.String()
}

// TestAdaptRoundTrip checks that the JSON produced from a Caddyfile decodes
// into the handler and encodes back to the same JSON: the Caddyfile and the
// JSON config are one model.
func TestAdaptRoundTrip(t *testing.T) {
	for _, name := range []string{"full", "sql-tools", "session-reset"} {
		t.Run(name, func(t *testing.T) { roundTrip(t, "testdata/adapt/"+name+".caddytest") })
	}
}

func roundTrip(t *testing.T, file string) {
	raw, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	input, _, _ := strings.Cut(string(raw), "\n----------\n")
	adapted := adaptForTest(t, input)
	var cfg struct {
		Apps struct {
			HTTP struct {
				Servers map[string]struct {
					Routes []struct {
						Handle []json.RawMessage `json:"handle"`
					} `json:"routes"`
				} `json:"servers"`
			} `json:"http"`
		} `json:"apps"`
	}
	if err := json.Unmarshal([]byte(adapted), &cfg); err != nil {
		t.Fatal(err)
	}
	found := 0
	var walk func(msgs []json.RawMessage)
	walk = func(msgs []json.RawMessage) {
		for _, m := range msgs {
			var probe struct {
				Handler string `json:"handler"`
				Routes  []struct {
					Handle []json.RawMessage `json:"handle"`
				} `json:"routes"`
			}
			_ = json.Unmarshal(m, &probe)
			for _, r := range probe.Routes {
				walk(r.Handle)
			}
			if probe.Handler != "mcp" {
				continue
			}
			found++
			var generic map[string]json.RawMessage
			_ = json.Unmarshal(m, &generic)
			delete(generic, "handler")
			stripped, _ := json.Marshal(generic)
			var h Handler
			dec := json.NewDecoder(bytes.NewReader(stripped))
			dec.DisallowUnknownFields() // every adapted field belongs to the model
			if err := dec.Decode(&h); err != nil {
				t.Fatal(err)
			}
			back, _ := json.Marshal(h)
			var a, b any
			_ = json.Unmarshal(stripped, &a)
			_ = json.Unmarshal(back, &b)
			ab, _ := json.Marshal(a)
			bb, _ := json.Marshal(b)
			if !bytes.Equal(ab, bb) {
				t.Errorf("round trip differs:\n%s\n%s", ab, bb)
			}
		}
	}
	for _, srv := range cfg.Apps.HTTP.Servers {
		for _, r := range srv.Routes {
			walk(r.Handle)
		}
	}
	if found == 0 {
		t.Fatal("no mcp handler in adapted config")
	}
}
