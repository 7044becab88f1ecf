package caddymodule

import (
	"fmt"
	"strings"

	"github.com/caddyserver/caddy/v2"

	"github.com/edgemcp/edgemcp/pipeline"
	"github.com/edgemcp/edgemcp/pipeline/sqltemplate"
)

// connectorRef is a provisioned connector as tools see it.
type connectorRef struct {
	config ConnectorConfig
	conn   pipeline.SQLConnector
	cmd    pipeline.CommandConnector // set instead of conn for command connectors (redis)
}

// buildTool compiles a ToolConfig: inputs parsed and checked, statement
// compiled to bound parameters for its connector's dialect.
func buildTool(tc ToolConfig, conns map[string]connectorRef, repl *caddy.Replacer, lookupEnv func(string) (string, bool)) (*pipeline.Tool, error) {
	t := &pipeline.Tool{
		Name:        tc.Name,
		Title:       repl.ReplaceKnown(tc.Title, ""),
		Description: repl.ReplaceKnown(tc.Description, ""),
	}
	if strings.TrimSpace(t.Description) == "" {
		return nil, fmt.Errorf("tool %q: missing description (the model reads it to decide when to call the tool)", tc.Name)
	}
	inputs, err := buildInputs(tc)
	if err != nil {
		return nil, err
	}
	t.Inputs = inputs
	if a := tc.Annotations; a != nil {
		t.Annotations = pipeline.Annotations{ReadOnly: a.ReadOnly, Destructive: a.Destructive, Idempotent: a.Idempotent, OpenWorld: a.OpenWorld}
	}

	if tc.Use == "" {
		// Script-backed: attachScripts sets the executor.
		return t, nil
	}
	ref, ok := conns[tc.Use]
	if !ok {
		return nil, fmt.Errorf("tool %q: use %q: no connector of that name", tc.Name, tc.Use)
	}
	if ref.cmd != nil {
		return buildCommandTool(t, tc, ref, repl, lookupEnv)
	}
	params := make(map[string]sqltemplate.Param, len(inputs.List()))
	for _, in := range inputs.List() {
		params[in.Name] = sqltemplate.Param{Enum: in.EnumText}
	}
	stmt, err := sqltemplate.Compile(repl.ReplaceKnown(tc.Statement, ""), sqltemplate.Options{
		Dialect:   ref.conn.Dialect(),
		Inputs:    params,
		LookupEnv: lookupEnv,
		Safety:    statementRules(ref.config, ref.conn.ReadOnly()),
	})
	if err != nil {
		return nil, fmt.Errorf("tool %q: statement: %v", tc.Name, err)
	}
	t.Executor = &pipeline.DBExecutor{Connector: ref.conn, Statement: stmt}
	t.Source = tc.Use
	t.FromIdentity = append(stmt.IdentityValues(), connectorIdentity(ref.config)...)
	if ref.conn.ReadOnly() {
		// The database refuses writes, so the hint is a fact.
		yes := true
		t.Annotations.ReadOnly = &yes
	}
	return t, nil
}

// buildInputs parses the declared inputs of a tool.
func buildInputs(tc ToolConfig) (*pipeline.InputSet, error) {
	list := make([]*pipeline.Input, 0, len(tc.Inputs))
	for _, ic := range tc.Inputs {
		in, err := pipeline.NewInput(inputSpec(ic))
		if err != nil {
			return nil, fmt.Errorf("tool %q: %v", tc.Name, err)
		}
		list = append(list, in)
	}
	set, err := pipeline.NewInputSet(list)
	if err != nil {
		return nil, fmt.Errorf("tool %q: %v", tc.Name, err)
	}
	return set, nil
}

func inputSpec(ic InputConfig) pipeline.InputSpec {
	return pipeline.InputSpec{
		Name: ic.Name, Type: ic.Type, Required: ic.Required,
		Default: ic.Default, Enum: ic.Enum, Description: ic.Description,
	}
}

// checkIdentityValues refuses, at load, a tool whose statement reads the
// caller's identity but that has no auth provider to verify one (README,
// Statement templates): every call would fail.
func checkIdentityValues(t *pipeline.Tool) error {
	if len(t.FromIdentity) == 0 || t.Auth != nil {
		return nil
	}
	return fmt.Errorf("tool %q: the statement binds the caller's identity (%s) but the tool has no auth provider: give it an auth block or set default_auth", t.Name, strings.Join(t.FromIdentity, ", "))
}
