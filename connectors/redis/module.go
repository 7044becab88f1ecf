package redis

import (
	"context"

	"github.com/caddyserver/caddy/v2"

	"github.com/edgemcp/edgemcp/pipeline"
	"github.com/edgemcp/edgemcp/pipeline/cmdtemplate"
)

func init() { caddy.RegisterModule(Driver{}) }

// Driver is the guest module mcp.connectors.redis: `connector <name>
// redis <url> { ... }`.
type Driver struct{}

var _ pipeline.CommandDriver = Driver{}

// CaddyModule returns the Caddy module information.
func (Driver) CaddyModule() caddy.ModuleInfo {
	return caddy.ModuleInfo{ID: "mcp.connectors.redis", New: func() caddy.Module { return Driver{} }}
}

// OpenCommand implements pipeline.CommandDriver.
func (Driver) OpenCommand(ctx context.Context, s pipeline.ConnectorSpec) (pipeline.CommandConnector, func(), error) {
	conn, err := Open(ctx, Config{URL: s.DSN, MaxConns: s.MaxConns, ReadOnly: s.ReadOnly, StatementTimeout: s.StatementTimeout, MaxRows: s.MaxRows, MaxResultSize: s.MaxResultSize})
	if err != nil {
		return nil, nil, err
	}
	return conn, conn.Close, nil
}

// CheckCommand implements pipeline.CommandDriver.
func (Driver) CheckCommand(cmd *cmdtemplate.Command, readOnly bool) error {
	return CheckCommand(cmd, readOnly)
}
