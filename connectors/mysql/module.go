package mysql

import (
	"context"

	"github.com/caddyserver/caddy/v2"
	"github.com/caddyserver/caddy/v2/caddyconfig/caddyfile"

	"github.com/edgemcp/edgemcp/connectors/internal/block"
	"github.com/edgemcp/edgemcp/pipeline"
	"github.com/edgemcp/edgemcp/pipeline/sqltemplate"
)

func init() { caddy.RegisterModule(Driver{}) }

// Driver is the guest module mcp.connectors.mysql (MySQL and MariaDB):
// `connector <name> mysql <dsn> { ... }`.
type Driver struct{}

// UnmarshalCaddyfile reads the connector block: this driver has no
// options of its own.
func (*Driver) UnmarshalCaddyfile(d *caddyfile.Dispenser) error { return block.None(d) }

var _ pipeline.SQLDriver = (*Driver)(nil)

// CaddyModule returns the Caddy module information.
func (Driver) CaddyModule() caddy.ModuleInfo {
	return caddy.ModuleInfo{ID: "mcp.connectors.mysql", New: func() caddy.Module { return new(Driver) }}
}

// Dialect implements pipeline.SQLDriver.
func (*Driver) Dialect() sqltemplate.Dialect { return sqltemplate.MySQL }

// OpenSQL implements pipeline.SQLDriver.
func (*Driver) OpenSQL(ctx context.Context, s pipeline.ConnectorSpec) (pipeline.SQLConnector, func(), error) {
	conn, err := Open(ctx, Config{DSN: s.DSN, MaxConns: s.MaxConns, ReadOnly: s.ReadOnly, StatementTimeout: s.StatementTimeout, MaxRows: s.MaxRows, MaxResultSize: s.MaxResultSize})
	if err != nil {
		return nil, nil, err
	}
	return conn, conn.Close, nil
}
