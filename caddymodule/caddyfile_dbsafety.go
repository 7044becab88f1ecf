package caddymodule

import (
	"fmt"
	"iter"
	"regexp"
	"strconv"

	"github.com/caddyserver/caddy/v2"
	"github.com/caddyserver/caddy/v2/caddyconfig/caddyfile"

	"github.com/edgemcp/edgemcp/pipeline/sqltemplate"
)

// Database safety in the Caddyfile: the connector sub-directives
// max_waiting, queue_timeout, required and block_functions, and the
// statement checks run by `caddy adapt` so that a write on a read_only
// connector, a second statement or a blocked function fails before the
// config is ever loaded (Provision runs the same checks on JSON configs).

// sqlDialect is the lexer dialect the checks read a connector's
// statements in; ok is false for connectors whose tools are not SQL.
func sqlDialect(c ConnectorConfig) (sqltemplate.Dialect, bool) {
	drv, ok := c.sqlDriver()
	if !ok {
		return 0, false
	}
	return drv.Dialect(), true
}

// functionName is what block_functions accepts: an unqualified name, or a
// pattern with one "*" (lo_*, pg_create_*_replication_slot).
var functionName = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_$]*(\*[A-Za-z0-9_$]*)?$`)

// The words that drop a read_only connector's default block list
// (README "Database safety"): `block_functions none` blocks nothing,
// `block_functions only <name...>` blocks exactly the names given.
const (
	blockNone = "none"
	blockOnly = "only"
)

// parseConnectorSafety reads one of the safety sub-directives of a
// connector block; d is on the sub-directive.
func parseConnectorSafety(d *caddyfile.Dispenser, c *ConnectorConfig, sub string) error {
	switch sub {
	case "max_waiting":
		var s string
		if err := oneArg(d, &s); err != nil {
			return err
		}
		n, err := strconv.Atoi(s)
		if err != nil || n < 0 {
			return d.Errf("connector %q: max_waiting must be a non-negative integer, got %q", c.Name, s)
		}
		c.MaxWaiting = &n
	case "queue_timeout":
		dur, err := durationArg(d)
		if err != nil {
			return err
		}
		c.QueueTimeout = caddy.Duration(dur)
	case "required":
		if d.NextArg() {
			return d.ArgErr()
		}
		c.Required = true
	case "block_functions":
		if _, ok := sqlDialect(*c); !ok {
			return d.Errf("connector %q: block_functions applies to SQL connectors, not %s", c.Name, c.Type)
		}
		names := d.RemainingArgs()
		if len(names) == 0 {
			return d.Errf("connector %q: block_functions needs at least one function name (or none)", c.Name)
		}
		if c.NoDefaultBlocks {
			return d.Errf("connector %q: block_functions: a connector with block_functions %s or %s has no other block_functions line", c.Name, blockNone, blockOnly)
		}
		switch names[0] {
		case blockNone:
			if len(names) > 1 {
				return d.Errf("connector %q: block_functions %s takes no names; to block exactly some functions write block_functions %s <name...>", c.Name, blockNone, blockOnly)
			}
		case blockOnly:
			if len(names) == 1 {
				return d.Errf("connector %q: block_functions %s needs function names; to block nothing write block_functions %s", c.Name, blockOnly, blockNone)
			}
		}
		if names[0] == blockNone || names[0] == blockOnly {
			if len(c.BlockFunctions) > 0 {
				return d.Errf("connector %q: block_functions %s replaces the list: it is the connector's only block_functions line", c.Name, names[0])
			}
			c.NoDefaultBlocks = true
			names = names[1:]
		}
		for _, n := range names {
			if n == blockNone || n == blockOnly {
				return d.Errf("connector %q: block_functions: %s comes first, as in block_functions %s ...", c.Name, n, n)
			}
			if !functionName.MatchString(n) {
				return d.Errf("connector %q: block_functions: %q is not a function name (write it without schema or quotes: a call is refused whatever qualifies it; one * stands for any characters)", c.Name, n)
			}
		}
		c.BlockFunctions = append(c.BlockFunctions, names...)
	}
	return nil
}

// dropDefaultError is the error for block_functions none or only on a
// connector that is not read_only, made while d is on that line (the
// block's end decides: read_only may come after it).
func dropDefaultError(d *caddyfile.Dispenser, c *ConnectorConfig) error {
	form := blockOnly
	if len(c.BlockFunctions) == 0 {
		form = blockNone
	}
	return d.Errf("connector %q: block_functions %s drops the default list of a read_only connector, but this connector is not read_only (it has no default list): write block_functions <name...>", c.Name, form)
}

// statementRules are the load-time checks for statements on connector c:
// a read_only one also refuses its dialect's default block list unless
// block_functions none/only dropped it.
func statementRules(c ConnectorConfig, readOnly bool) sqltemplate.Rules {
	r := sqltemplate.Rules{OneStatement: true, ReadOnly: readOnly, BlockFunctions: c.BlockFunctions}
	if d, ok := sqlDialect(c); ok && readOnly && !c.NoDefaultBlocks {
		r.DefaultBlocked = sqltemplate.ReadOnlyBlockList(d)
	}
	return r
}

// toolConnectors yields each declared tool that uses a declared
// connector, with that connector: what the adapt-time checks read.
func (h *Handler) toolConnectors() iter.Seq2[ToolConfig, ConnectorConfig] {
	return func(yield func(ToolConfig, ConnectorConfig) bool) {
		conns := make(map[string]ConnectorConfig, len(h.Connectors))
		for _, c := range h.Connectors {
			conns[c.Name] = c
		}
		for _, t := range h.Tools {
			if c, ok := conns[t.Use]; ok && !yield(t, c) {
				return
			}
		}
	}
}

// checkStatementsAtAdapt runs the statement checks on the Caddyfile's
// tools, against their connectors' dialect and settings. What cannot be
// known yet (env values, an unknown connector, text that does not lex) is
// left to Provision, which checks the compiled statement again.
func checkStatementsAtAdapt(h *Handler) error {
	for t, c := range h.toolConnectors() {
		d, ok := sqlDialect(c)
		if !ok {
			continue
		}
		if err := sqltemplate.Check(t.Statement, d, statementRules(c, c.ReadOnly)); err != nil {
			return fmt.Errorf("tool %q: statement: %v, at %s", t.Name, err, t.statementAt)
		}
	}
	return nil
}
