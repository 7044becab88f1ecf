package caddymodule

import (
	"context"
	"fmt"
	"strings"

	"github.com/caddyserver/caddy/v2"

	"github.com/edgemcp/edgemcp/pipeline"
	"github.com/edgemcp/edgemcp/pipeline/cmdtemplate"
)

// Command connectors (redis) run one command per call instead of an SQL
// statement. They share the pool registry and keys of the SQL connectors
// (acquireConnector) but open a pipeline.CommandConnector.

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
