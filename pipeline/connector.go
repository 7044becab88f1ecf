package pipeline

import (
	"context"
	"time"

	"github.com/edgemcp/edgemcp/pipeline/cmdtemplate"
	"github.com/edgemcp/edgemcp/pipeline/sqltemplate"
)

// A connector type is a driver: a guest module mcp.connectors.<type>
// (docs/architecture.md, Adding a connector) whose value implements
// SQLDriver or CommandDriver. The module's value holds the options only
// its type has (a Postgres connector's roles, an SQLite connector's seed)
// and reads them from the connector's block in its own UnmarshalCaddyfile;
// the options every connector has come in the ConnectorSpec. The gateway
// opens one pool per distinct spec and options, and shares it across
// reloads.

// ConnectorSpec is the configuration every connector has, as its driver
// gets it, placeholders expanded.
type ConnectorSpec struct {
	DSN              string // connection string, URL or file path
	MaxConns         int    // 0: the driver's default
	ReadOnly         bool
	StatementTimeout time.Duration
	MaxRows          int   // 0: the driver's default
	MaxResultSize    int64 // bytes counted while a result is collected (pipeline.ValueSize); 0: DefaultMaxResultSize
}

// IdentityDriver is implemented by drivers that can hand the verified
// caller (Caller(ctx)) to the database with every statement (README,
// Database safety: claims_setting, role_claim and roles).
type IdentityDriver interface {
	// IdentityValues names what of the caller the connector hands the
	// database, as a tool's identity values are named (auth.claims,
	// auth.claims.<claim>); none when its options hand nothing.
	IdentityValues() []string
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

// ResetProver is implemented by drivers that reset a connection's session
// after every call and can skip that after a statement proven unable to
// change the session (their option session_reset).
type ResetProver interface {
	ProvesResets()
}

// Seeder is implemented by drivers that can create their database from a
// seed file (their option seed).
type Seeder interface {
	Seeds()
}
