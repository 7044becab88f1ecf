package caddymodule

import (
	"strings"
	"testing"
)

// `caddy mcp call` against the example gateway: results, typed values, and
// the documented JSON-RPC codes with a non-zero exit.
func TestMCPCallExample(t *testing.T) {
	g := startGateway(t, exampleGatewayCaddyfile(t))
	for _, tc := range []struct {
		name    string
		args    []string
		fail    bool
		want    []string
		wantErr string
	}{
		{"row", []string{"get-customer", "customer_id=1"}, false, []string{`"name": "Ada Lovelace"`}, ""},
		{"typed by schema", []string{"search-products", "query=Desk", "limit=1", "sort=price"}, false, []string{`"name":`, `"price":`}, ""},
		{"string input that looks like a number", []string{"search-products", "query=42"}, false, []string{"[]"}, ""},
		{"json output", []string{"get-customer", "customer_id=2", "--json"}, false, []string{`"structuredContent"`, `"content"`}, ""},
		{"unknown tool", []string{"no-such-tool"}, true, nil, `error -32601: tool resolution: tool "no-such-tool" not found`},
		{"validation", []string{"get-customer", "customer_id=1.5"}, true, nil, "error -32000: input validation: input \"customer_id\""},
		{"unknown input", []string{"get-customer", "customer_id=1", "nope=1"}, true, nil, `input "nope": unknown input`},
		{"bad argument", []string{"get-customer", "customer_id"}, true, nil, "want key=value"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out, errOut, err := runMCPCommand(t, append([]string{"call", g.URL}, tc.args...)...)
			if (err != nil) != tc.fail {
				t.Fatalf("err = %v, want failure %v\nstdout: %s\nstderr: %s", err, tc.fail, out, errOut)
			}
			for _, w := range tc.want {
				if !strings.Contains(out, w) {
					t.Errorf("stdout lacks %q:\n%s", w, out)
				}
			}
			if tc.wantErr != "" && !strings.Contains(errOut+errString(err), tc.wantErr) {
				t.Errorf("stderr %q (err %v) lacks %q", errOut, err, tc.wantErr)
			}
		})
	}
}

// --header reaches the gateway (here a Caddy matcher in front of mcp), and
// an isError result (error_mode result) exits non-zero with its text shown.
func TestMCPCallHeadersAndIsError(t *testing.T) {
	src := exampleGatewayCaddyfile(t)
	src = strings.Replace(src, "\tmcp /mcp {", "\troute {\n\t@nokey not header X-Gateway-Key s3cret\n\trespond @nokey \"missing key\" 401\n\tmcp /mcp {\n\t\terror_mode result", 1)
	src += "}\n" // one more closing brace, for the route block
	g := startGateway(t, src)

	if _, errOut, err := runMCPCommand(t, "call", g.URL, "get-customer", "customer_id=1"); err == nil || !strings.Contains(errOut, "initialize: HTTP 401 Unauthorized: missing key") {
		t.Errorf("without the header: err %v, stderr %q; want the 401 and its body", err, errOut)
	}
	out, errOut, err := runMCPCommand(t, "call", g.URL, "get-customer", "customer_id=1", "--header", "X-Gateway-Key: s3cret")
	if err != nil || !strings.Contains(out, "Ada Lovelace") {
		t.Fatalf("with the header: err %v\nstdout %s\nstderr %s", err, out, errOut)
	}
	out, errOut, err = runMCPCommand(t, "call", g.URL, "get-customer", "customer_id=x", "-H", "X-Gateway-Key: s3cret")
	if err == nil || !strings.Contains(out, "input validation") || !strings.Contains(errOut, "isError") {
		t.Errorf("isError result: err %v\nstdout %s\nstderr %s", err, out, errOut)
	}
}

func errString(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}
