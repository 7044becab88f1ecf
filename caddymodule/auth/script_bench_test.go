package auth

import (
	"context"
	"testing"
)

// What the script provider costs per authentication: a call into goja with
// the request's headers, and the same when the function throws (the
// message is then redacted against every header value). Run by hand:
// go test -run '^$' -bench BenchmarkScript -benchtime 2s -benchmem ./caddymodule/auth/
func BenchmarkScript(b *testing.B) {
	s := provisionScript(b, &Script{File: testScriptFile(b) + "#check"})
	headers := []string{
		"Accept", "application/json, text/event-stream", "Content-Type", "application/json",
		"Mcp-Protocol-Version", "2025-06-18", "Mcp-Session-Id", "mcp-session-3f2a9c1e-5b7d-4e8f-9a0b-1c2d3e4f5a6b",
		"User-Agent", "bench/1.0",
	}
	for _, c := range []struct {
		name  string
		token string
	}{{"admit", scriptToken}, {"refuse", "wrong-token-0123456789"}} {
		req := scriptRequest("reports", append(headers, "Authorization", "Bearer "+c.token)...)
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				_, err := s.Authenticate(context.Background(), req)
				if (err == nil) != (c.name == "admit") {
					b.Fatal(err)
				}
			}
		})
	}
}
