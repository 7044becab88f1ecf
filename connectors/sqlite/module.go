package sqlite

import (
	"context"

	"github.com/caddyserver/caddy/v2"
	"github.com/caddyserver/caddy/v2/caddyconfig/caddyfile"

	"github.com/edgemcp/edgemcp/connectors/internal/block"
	"github.com/edgemcp/edgemcp/internal/caddyargs"
	"github.com/edgemcp/edgemcp/pipeline"
	"github.com/edgemcp/edgemcp/pipeline/sqltemplate"
)

func init() { caddy.RegisterModule(Driver{}) }

// Driver is the guest module mcp.connectors.sqlite: `connector <name>
// sqlite <path> { ... }`.
type Driver struct {
	// Seed is an SQL file that creates the database file when it does not
	// exist yet. Caddy placeholders such as {env.SEED} are expanded at
	// provision.
	Seed string `json:"seed,omitempty"`
}

var (
	_ pipeline.SQLDriver    = (*Driver)(nil)
	_ pipeline.Seeder       = (*Driver)(nil)
	_ caddy.Provisioner     = (*Driver)(nil)
	_ caddyfile.Unmarshaler = (*Driver)(nil)
)

// CaddyModule returns the Caddy module information.
func (Driver) CaddyModule() caddy.ModuleInfo {
	return caddy.ModuleInfo{ID: "mcp.connectors.sqlite", New: func() caddy.Module { return new(Driver) }}
}

// UnmarshalCaddyfile reads the driver's line of the connector block,
// `seed <file.sql>`.
func (drv *Driver) UnmarshalCaddyfile(d *caddyfile.Dispenser) error {
	name := block.Head(d)
	for d.NextBlock(0) {
		if d.Val() != "seed" {
			return block.Unrecognized(d, name)
		}
		if err := caddyargs.OneArg(d, &drv.Seed); err != nil {
			return err
		}
	}
	return nil
}

// Provision expands the seed's placeholders.
func (drv *Driver) Provision(caddy.Context) error {
	drv.Seed = caddy.NewReplacer().ReplaceKnown(drv.Seed, "")
	return nil
}

// Dialect implements pipeline.SQLDriver.
func (*Driver) Dialect() sqltemplate.Dialect { return sqltemplate.SQLite }

// Seeds implements pipeline.Seeder: `seed <file.sql>` creates the file.
func (*Driver) Seeds() {}

// OpenSQL implements pipeline.SQLDriver; the DSN is the database file.
func (drv *Driver) OpenSQL(ctx context.Context, s pipeline.ConnectorSpec) (pipeline.SQLConnector, func(), error) {
	conn, err := Open(ctx, Config{Path: s.DSN, ReadOnly: s.ReadOnly, MaxConns: s.MaxConns, StatementTimeout: s.StatementTimeout, Seed: drv.Seed, MaxRows: s.MaxRows, MaxResultSize: s.MaxResultSize})
	if err != nil {
		return nil, nil, err
	}
	return conn, conn.Close, nil
}
