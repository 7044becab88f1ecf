package mysql

import (
	"context"

	"github.com/caddyserver/caddy/v2"

	"github.com/edgemcp/edgemcp/pipeline"
	"github.com/edgemcp/edgemcp/pipeline/sqltemplate"
)

func init() { caddy.RegisterModule(Driver{}) }

// Driver is the guest module mcp.connectors.mysql (MySQL and MariaDB):
// `connector <name> mysql <dsn> { ... }`.
type Driver struct{}

var _ pipeline.SQLDriver = Driver{}

// CaddyModule returns the Caddy module information.
func (Driver) CaddyModule() caddy.ModuleInfo {
	return caddy.ModuleInfo{ID: "mcp.connectors.mysql", New: func() caddy.Module { return Driver{} }}
}

// Dialect implements pipeline.SQLDriver.
func (Driver) Dialect() sqltemplate.Dialect { return sqltemplate.MySQL }

// OpenSQL implements pipeline.SQLDriver.
func (Driver) OpenSQL(ctx context.Context, s pipeline.ConnectorSpec) (pipeline.SQLConnector, func(), error) {
	conn, err := Open(ctx, Config{DSN: s.DSN, MaxConns: s.MaxConns, ReadOnly: s.ReadOnly, StatementTimeout: s.StatementTimeout, MaxRows: s.MaxRows, MaxResultSize: s.MaxResultSize})
	if err != nil {
		return nil, nil, err
	}
	return conn, conn.Close, nil
}
