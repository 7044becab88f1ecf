package redis

import (
	"context"

	"github.com/caddyserver/caddy/v2"
	"github.com/caddyserver/caddy/v2/caddyconfig/caddyfile"

	"github.com/edgemcp/edgemcp/connectors/internal/block"
	"github.com/edgemcp/edgemcp/pipeline"
	"github.com/edgemcp/edgemcp/pipeline/cmdtemplate"
)

func init() { caddy.RegisterModule(Driver{}) }

// Driver is the guest module mcp.connectors.redis: `connector <name>
// redis <url> { ... }`.
type Driver struct{}

// UnmarshalCaddyfile reads the connector block: this driver has no
// options of its own.
func (*Driver) UnmarshalCaddyfile(d *caddyfile.Dispenser) error { return block.None(d) }

var _ pipeline.CommandDriver = (*Driver)(nil)

// CaddyModule returns the Caddy module information.
func (Driver) CaddyModule() caddy.ModuleInfo {
	return caddy.ModuleInfo{ID: "mcp.connectors.redis", New: func() caddy.Module { return new(Driver) }}
}

// OpenCommand implements pipeline.CommandDriver.
func (*Driver) OpenCommand(ctx context.Context, s pipeline.ConnectorSpec) (pipeline.CommandConnector, func(), error) {
	conn, err := Open(ctx, Config{URL: s.DSN, MaxConns: s.MaxConns, ReadOnly: s.ReadOnly, StatementTimeout: s.StatementTimeout, MaxRows: s.MaxRows, MaxResultSize: s.MaxResultSize})
	if err != nil {
		return nil, nil, err
	}
	return conn, conn.Close, nil
}

// CheckCommand implements pipeline.CommandDriver.
func (*Driver) CheckCommand(cmd *cmdtemplate.Command, readOnly bool) error {
	return CheckCommand(cmd, readOnly)
}
