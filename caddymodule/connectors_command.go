package caddymodule

import (
	"context"
	"fmt"
	"strings"

	"github.com/caddyserver/caddy/v2"
	"github.com/caddyserver/caddy/v2/caddyconfig/caddyfile"

	"github.com/edgemcp/edgemcp/pipeline"
	"github.com/edgemcp/edgemcp/pipeline/cmdtemplate"
)

// Command connectors (redis) run one command per call instead of an SQL
// statement. They share the pool registry and keys of the SQL connectors
// (acquireConnector) but open a pipeline.CommandConnector.

// checkCommandTool compiles and checks, while the Caddyfile is adapted, the
// statement of a tool that uses an already declared command connector, so
// that `caddy adapt` reports a refused command with file and line.
// Provision checks again (JSON configs do not come through here).
func checkCommandTool(d *caddyfile.Dispenser, conns []ConnectorConfig, t ToolConfig) error {
	for _, c := range conns {
		drv, ok := c.commandDriver()
		if c.Name != t.Use || !ok {
			continue
		}
		names := make(map[string]bool, len(t.Inputs))
		for _, in := range t.Inputs {
			names[in.Name] = true
		}
		// Environment values are not known yet: any text will do, the
		// command name must be literal anyway.
		anyEnv := func(string) (string, bool) { return "env", true }
		cmd, err := cmdtemplate.Compile(strings.TrimSpace(t.Statement), cmdtemplate.Options{Inputs: names, LookupEnv: anyEnv})
		if err != nil {
			return d.Errf("tool %q: statement: %v", t.Name, err)
		}
		if err := drv.CheckCommand(cmd, c.ReadOnly); err != nil {
			return d.Errf("tool %q: statement on connector %q: %s", t.Name, c.Name, pipeline.SafeText(err, "refused"))
		}
	}
	return nil
}

// sharedCommandConnector is a UsagePool value.
type sharedCommandConnector struct {
	pipeline.CommandConnector
	close func()
}

func (s *sharedCommandConnector) Destruct() error {
	s.close()
	return nil
}

// acquireCommandConnector is acquireConnector for command connectors; ok
// is false when c is not one (the caller then opens an SQL connector).
// The caller must releaseConnector(key) exactly once.
func acquireCommandConnector(c ConnectorConfig) (ref connectorRef, key string, ok bool, err error) {
	drv, ok := c.commandDriver()
	if !ok {
		return ref, "", false, nil
	}
	val, key, err := openShared(c, func(ctx context.Context) (caddy.Destructor, error) {
		conn, closeFn, err := drv.OpenCommand(ctx, connectorSpec(c))
		if err != nil {
			return nil, err
		}
		return &sharedCommandConnector{CommandConnector: conn, close: closeFn}, nil
	})
	if err != nil {
		return ref, "", true, err
	}
	return connectorRef{config: c, cmd: val.(*sharedCommandConnector).CommandConnector}, key, true, nil
}

// buildCommandTool compiles the statement of a tool that uses a command
// connector and checks it against the connector at load.
func buildCommandTool(t *pipeline.Tool, tc ToolConfig, ref connectorRef, repl *caddy.Replacer, lookupEnv func(string) (string, bool)) (*pipeline.Tool, error) {
	names := make(map[string]bool, len(t.Inputs.List()))
	for _, in := range t.Inputs.List() {
		names[in.Name] = true
	}
	cmd, err := cmdtemplate.Compile(strings.TrimSpace(repl.ReplaceKnown(tc.Statement, "")), cmdtemplate.Options{Inputs: names, LookupEnv: lookupEnv})
	if err != nil {
		return nil, fmt.Errorf("tool %q: statement: %v", tc.Name, err)
	}
	if err := ref.cmd.CheckCommand(cmd); err != nil {
		return nil, fmt.Errorf("tool %q: statement on connector %q: %s", tc.Name, tc.Use, pipeline.SafeText(err, "refused"))
	}
	t.Executor = &pipeline.CommandExecutor{Connector: ref.cmd, Command: cmd}
	t.Source = tc.Use
	t.FromIdentity = cmd.IdentityValues()
	if ref.cmd.ReadOnly() {
		// Only read-only commands passed CheckCommand: the hint is a fact.
		yes := true
		t.Annotations.ReadOnly = &yes
	}
	return t, nil
}
