package pipeline

import (
	"context"
	"time"

	"github.com/edgemcp/edgemcp/pipeline/cmdtemplate"
	"github.com/edgemcp/edgemcp/pipeline/sqltemplate"
)

// A connector type is a driver: a guest module mcp.connectors.<type>
// (docs/architecture.md, Adding a connector) whose value implements
// SQLDriver or CommandDriver. The gateway opens one pool per distinct
// ConnectorSpec and shares it across reloads.

// ConnectorSpec is a connector's configuration as its driver gets it,
// placeholders expanded.
type ConnectorSpec struct {
	DSN              string // connection string, URL or file path
	MaxConns         int    // 0: the driver's default
	ReadOnly         bool
	StatementTimeout time.Duration
	MaxRows          int    // 0: the driver's default
	MaxResultSize    int64  // bytes counted while a result is collected (pipeline.ValueSize); 0: DefaultMaxResultSize
	Seed             string // an SQL file that creates the database (drivers that are Seeders)
	// Identity settings (drivers that are IdentityDrivers; README,
	// Database safety): ClaimsSetting names the setting that receives the
	// verified claims as JSON for each statement, RoleClaim the claim whose
	// value, one of Roles, becomes the statement's role.
	ClaimsSetting string
	RoleClaim     string
	Roles         []string
}

// IdentityDriver is implemented by drivers that can hand the verified
// caller (Caller(ctx)) to the database with every statement: the
// ConnectorSpec's ClaimsSetting, RoleClaim and Roles.
type IdentityDriver interface {
	PassesIdentity()
}

// SQLDriver opens connectors whose tools run SQL statements.
type SQLDriver interface {
	// Dialect is how the statement templates are read (and checked) for
	// this connector type.
	Dialect() sqltemplate.Dialect
	// OpenSQL opens a pool; close releases it.
	OpenSQL(ctx context.Context, spec ConnectorSpec) (conn SQLConnector, close func(), err error)
}

// CommandDriver opens connectors whose tools run one command (redis).
type CommandDriver interface {
	OpenCommand(ctx context.Context, spec ConnectorSpec) (conn CommandConnector, close func(), err error)
	// CheckCommand checks a command template without a server, so that
	// `caddy adapt` refuses what the connector would refuse at load.
	CheckCommand(cmd *cmdtemplate.Command, readOnly bool) error
}

// Seeder is implemented by drivers that can create their database from a
// seed file (ConnectorSpec.Seed).
type Seeder interface {
	Seeds()
}
