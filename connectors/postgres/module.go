package postgres

import (
	"context"

	"github.com/caddyserver/caddy/v2"

	"github.com/edgemcp/edgemcp/pipeline"
	"github.com/edgemcp/edgemcp/pipeline/sqltemplate"
)

func init() { caddy.RegisterModule(Driver{}) }

// Driver is the guest module mcp.connectors.postgres: `connector <name>
// postgres <dsn> { ... }`.
type Driver struct{}

var (
	_ pipeline.SQLDriver      = Driver{}
	_ pipeline.IdentityDriver = Driver{}
)

// PassesIdentity implements pipeline.IdentityDriver: claims_setting,
// role_claim and roles (identity.go).
func (Driver) PassesIdentity() {}

// CaddyModule returns the Caddy module information.
func (Driver) CaddyModule() caddy.ModuleInfo {
	return caddy.ModuleInfo{ID: "mcp.connectors.postgres", New: func() caddy.Module { return Driver{} }}
}

// Dialect implements pipeline.SQLDriver.
func (Driver) Dialect() sqltemplate.Dialect { return sqltemplate.Postgres }

// OpenSQL implements pipeline.SQLDriver.
func (Driver) OpenSQL(ctx context.Context, s pipeline.ConnectorSpec) (pipeline.SQLConnector, func(), error) {
	conn, err := Open(ctx, Config{DSN: s.DSN, MaxConns: int32(s.MaxConns), ReadOnly: s.ReadOnly, StatementTimeout: s.StatementTimeout, MaxRows: s.MaxRows, MaxResultSize: s.MaxResultSize,
		ClaimsSetting: s.ClaimsSetting, RoleClaim: s.RoleClaim, Roles: s.Roles})
	if err != nil {
		return nil, nil, err
	}
	return conn, conn.Close, nil
}
