package sqlite

import (
	"context"

	"github.com/caddyserver/caddy/v2"

	"github.com/edgemcp/edgemcp/pipeline"
	"github.com/edgemcp/edgemcp/pipeline/sqltemplate"
)

func init() { caddy.RegisterModule(Driver{}) }

// Driver is the guest module mcp.connectors.sqlite: `connector <name>
// sqlite <path> { ... }`.
type Driver struct{}

var (
	_ pipeline.SQLDriver = Driver{}
	_ pipeline.Seeder    = Driver{}
)

// CaddyModule returns the Caddy module information.
func (Driver) CaddyModule() caddy.ModuleInfo {
	return caddy.ModuleInfo{ID: "mcp.connectors.sqlite", New: func() caddy.Module { return Driver{} }}
}

// Dialect implements pipeline.SQLDriver.
func (Driver) Dialect() sqltemplate.Dialect { return sqltemplate.SQLite }

// Seeds implements pipeline.Seeder: `seed <file.sql>` creates the file.
func (Driver) Seeds() {}

// OpenSQL implements pipeline.SQLDriver; the DSN is the database file.
func (Driver) OpenSQL(ctx context.Context, s pipeline.ConnectorSpec) (pipeline.SQLConnector, func(), error) {
	conn, err := Open(ctx, Config{Path: s.DSN, ReadOnly: s.ReadOnly, MaxConns: s.MaxConns, StatementTimeout: s.StatementTimeout, Seed: s.Seed, MaxRows: s.MaxRows, MaxResultSize: s.MaxResultSize})
	if err != nil {
		return nil, nil, err
	}
	return conn, conn.Close, nil
}
