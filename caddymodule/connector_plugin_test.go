package caddymodule

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/caddyserver/caddy/v2"
	"github.com/caddyserver/caddy/v2/caddyconfig/caddyfile"

	"github.com/edgemcp/edgemcp/pipeline"
	"github.com/edgemcp/edgemcp/pipeline/sqltemplate"
)

// echoDriver is a third party's connector type, as xcaddy --with would add
// it: a module mcp.connectors.echo_test whose "database" answers each
// statement with its text and bound values. Nothing else is wired.
type echoDriver struct{}

func init() { caddy.RegisterModule(echoDriver{}) }

func (echoDriver) CaddyModule() caddy.ModuleInfo {
	return caddy.ModuleInfo{ID: "mcp.connectors.echo_test", New: func() caddy.Module { return new(echoDriver) }}
}

// UnmarshalCaddyfile reads the connector block: no options of its own.
func (echoDriver) UnmarshalCaddyfile(d *caddyfile.Dispenser) error {
	d.Next()
	d.RemainingArgs()
	for d.NextBlock(0) {
		return d.Errf("unrecognized sub-directive %q", d.Val())
	}
	return nil
}

func (echoDriver) Dialect() sqltemplate.Dialect { return sqltemplate.Postgres }

func (echoDriver) OpenSQL(_ context.Context, s pipeline.ConnectorSpec) (pipeline.SQLConnector, func(), error) {
	return echoConn{readOnly: s.ReadOnly, dsn: s.DSN}, func() {}, nil
}

type echoConn struct {
	readOnly bool
	dsn      string
}

func (echoConn) Dialect() sqltemplate.Dialect { return sqltemplate.Postgres }
func (c echoConn) ReadOnly() bool             { return c.readOnly }
func (c echoConn) Query(_ context.Context, sql string, args []any) (*pipeline.Rows, error) {
	return &pipeline.Rows{Columns: []string{"dsn", "sql", "args"}, Values: [][]any{{c.dsn, sql, fmt.Sprint(args...)}}}, nil
}

// TestThirdPartyConnector: a connector type from another package plugs in
// through the mcp.connectors namespace alone: its statements are compiled
// in its dialect (values bound), checked at adapt like the built-in ones,
// and its pool gets the same guard.
func TestThirdPartyConnector(t *testing.T) {
	g := startGateway(t, `SITE {
	mcp /mcp {
		connector e echo_test memory://x {
			read_only
		}
		tool echo {
			description "Echo"
			use e
			statement "SELECT {{ inputs.word }} AS w"
			input word string required
		}
	}
}`)
	s := g.rawSession(t, "2025-06-18")
	text := s.call(t, "echo", map[string]any{"word": "x'; DROP TABLE t; --"}).tool(t).Content[0].Text
	if !strings.Contains(text, `"sql":"SELECT $1 AS w"`) || !strings.Contains(text, `DROP TABLE t`) || !strings.Contains(text, `"dsn":"memory://x"`) {
		t.Errorf("echo: %s", text)
	}
	got := adaptForTest(t, ":8080 {\n\tmcp {\n\t\tconnector e echo_test memory://x {\n\t\t\tread_only\n\t\t}\n\t\ttool w {\n\t\t\tdescription \"w\"\n\t\t\tuse e\n\t\t\tstatement \"DELETE FROM t\"\n\t\t}\n\t}\n}\n")
	if !strings.Contains(got, "DELETE is not a query") || !strings.Contains(got, "Caddyfile:") {
		t.Errorf("a write on the read_only plugin connector at adapt: %s", got)
	}
	if got := adaptForTest(t, ":8080 {\n\tmcp {\n\t\tconnector e nosuch_db x\n\t}\n}\n"); !strings.Contains(got, `unknown type "nosuch_db"`) || !strings.Contains(got, "echo_test") {
		t.Errorf("unknown type: %s", got)
	}
}
