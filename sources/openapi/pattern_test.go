package openapi

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/edgemcp/edgemcp/internal/testservices"
)

// ecmaCases are patterns from real documents and what the gateway
// publishes for each ("" when it leaves the pattern out).
var ecmaCases = []struct{ in, out string }{
	{`^[a-zA-Z0-9\-\_]+$`, `^[a-zA-Z0-9\-_]+$`}, // 4 AWS documents: the TypeScript SDK's tools/list failed on it
	{`^[\w\-\.]+@[\w\-\.]+$`, `^[\w\-\.]+@[\w\-\.]+$`},
	{`^\d{3}\-\d{4}$`, `^\d{3}-\d{4}$`},
	{`^[\w-.]+$`, `^[\w\-.]+$`},
	{`^[a-\d]$`, `^[a\-\d]$`},
	{`^\:\@\#\%\&\=\!\,\ \"\'$`, `^:@#%&=!, "'$`},
	{`^{abc}$`, `^\{abc\}$`},
	{`a{2,3}b{4}c{5,}`, `a{2,3}b{4}c{5,}`},
	{`^x]$`, `^x\]$`},
	{`^[^\s/]+/\S+$`, `^[^\s/]+/\S+$`},
	{`^(?:[a-z]+)(?<name>\d)\k<name>(\1)?$`, `^(?:[a-z]+)(?<name>\d)\k<name>(\1)?$`},
	{`^(?=.*\d)(?!.*\s).{8,}$`, `^(?=.*\d)(?!.*\s).{8,}$`},
	{`^\p{L}+\p{Script=Latin}*$`, `^\p{L}+\p{Script=Latin}*$`},
	{`^\u00e9\u{1F600}\x41\/\t$`, `^\u00e9\u{1F600}\x41\/\t$`},
	{`a+?b*?`, `a+?b*?`},
	{`^abc\Z`, ``},        // \Z: an anchor elsewhere, a "Z" here
	{`(?i)^abc$`, ``},     // inline flags
	{`^(?P<n>a)$`, ``},    // Python's named group
	{`^\p{IsLatin}$`, ``}, // Java's property name
	{`^(a)\2$`, ``},       // a group that does not exist
	{`^[[:alpha:]]+$`, `^[[:alpha:]\]+$`},
	{`a**`, ``},
	{`^(?=a)*$`, ``},
	{`[abc`, ``},
	{`\012`, ``},
}

// TestECMAPattern: each pattern is published in a form that compiles as
// ECMAScript with the u flag (new RegExp(p, "u") in Node, as the
// TypeScript SDK's ajv compiles it), meaning what it meant in ECMAScript
// without flags, or left out; the patterns that need rewriting do not
// compile as they are (what the gateway published before).
func TestECMAPattern(t *testing.T) {
	var outs, ins []string
	for _, tc := range ecmaCases {
		got, ok := ecmaPattern(tc.in)
		if !ok {
			got = ""
		}
		if got != tc.out {
			t.Errorf("ecmaPattern(%q) = %q, %t; want %q", tc.in, got, ok, tc.out)
		}
		if got != "" {
			outs = append(outs, got)
		}
		if got != tc.in {
			ins = append(ins, tc.in)
		}
	}
	failures := compileInNode(t, outs)
	for _, f := range failures {
		t.Errorf("published pattern does not compile with the u flag: %v", f)
	}
	if got := compileInNode(t, ins); len(got) != len(ins) {
		t.Errorf("%d of the %d rewritten patterns compiled as they were (want none): %v", len(ins)-len(got), len(ins), got)
	}
}

// compileInNode compiles each pattern in Node (tests/node/schema-check.mjs)
// and returns the failures.
func compileInNode(t *testing.T, patterns []string) []map[string]string {
	t.Helper()
	dir := testservices.NodeDir(t)
	var lines []byte
	for i, p := range patterns {
		b, _ := json.Marshal(map[string]any{"name": fmt.Sprint(i), "inputSchema": map[string]any{"type": "string", "pattern": p}})
		lines = append(append(lines, b...), '\n')
	}
	file := filepath.Join(t.TempDir(), "patterns.ndjson")
	if err := os.WriteFile(file, lines, 0o600); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(testservices.Node22(t, dir), filepath.Join(dir, "schema-check.mjs"), file).Output()
	if err != nil {
		t.Fatalf("schema-check.mjs: %v", err)
	}
	var check struct {
		Patterns int
		Failures []map[string]string
	}
	if err := json.Unmarshal(out, &check); err != nil || check.Patterns != len(patterns) {
		t.Fatalf("schema-check.mjs output %s: %v", out, err)
	}
	var failures []map[string]string
	for _, f := range check.Failures {
		if f["pattern"] != "" {
			failures = append(failures, f)
		}
	}
	return failures
}

// TestArgumentPatterns: the gateway checks arguments against a pattern Go
// cannot run (a lookahead) by letting every value through rather than
// refusing every call, and against one it can, in its ECMAScript meaning.
func TestArgumentPatterns(t *testing.T) {
	for _, tc := range []struct {
		pattern, value string
		match          bool
	}{
		{`^(?=.*\d).{3,}$`, "abc", true}, // RE2 has no lookahead: the upstream checks
		{`^[a-z\-\_]+$`, "a-b_c", true},
		{`^[a-z\-\_]+$`, "a b", false},
		{`^\u00e9$`, "é", true},
	} {
		m, err := argumentPatterns(tc.pattern)
		if err != nil || m.MatchString(tc.value) != tc.match {
			t.Errorf("%q on %q: %v, want %t", tc.pattern, tc.value, err, tc.match)
		}
	}
}
