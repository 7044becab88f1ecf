package gate

import (
	"context"
	"net/http/httptest"
	"testing"

	"github.com/caddyserver/caddy/v2"
)

// The gate's cost per request: a named Host that is checked against
// allowed_hosts (the slowest admitted case) and an IP Host.
func BenchmarkGateAdmit(b *testing.B) {
	g, err := New(caddy.Context{Context: context.Background()}, nil, []string{"mcp.example.com", "*.corp.example"})
	if err != nil {
		b.Fatal(err)
	}
	for _, host := range []string{"a.corp.example:8080", "127.0.0.1:8080"} {
		b.Run(host, func(b *testing.B) {
			r := httptest.NewRequest("POST", "http://"+host+"/mcp", nil)
			r.Header.Set("Origin", "http://"+host)
			r = WithReplacer(r)
			w := httptest.NewRecorder()
			for b.Loop() {
				if !g.Admit(w, r) {
					b.Fatal("refused")
				}
			}
		})
	}
}
