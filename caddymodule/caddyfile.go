package caddymodule

import (
	"encoding/json"
	"fmt"
	"iter"
	"math"
	"mime"
	"path"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/caddyserver/caddy/v2"
	"github.com/caddyserver/caddy/v2/caddyconfig"
	"github.com/caddyserver/caddy/v2/caddyconfig/caddyfile"
	"github.com/caddyserver/caddy/v2/caddyconfig/httpcaddyfile"
	"github.com/caddyserver/caddy/v2/modules/caddyhttp"
	"github.com/dustin/go-humanize"

	"github.com/edgemcp/edgemcp/caddymodule/gate"
	"github.com/edgemcp/edgemcp/caddymodule/resources"
	"github.com/edgemcp/edgemcp/caddymodule/session"
	"github.com/edgemcp/edgemcp/internal/caddyargs"
	"github.com/edgemcp/edgemcp/pipeline"
	"github.com/edgemcp/edgemcp/pipeline/cmdtemplate"
	"github.com/edgemcp/edgemcp/pipeline/pin"
	"github.com/edgemcp/edgemcp/pipeline/script"
	"github.com/edgemcp/edgemcp/pipeline/sqltemplate"
)

func init() {
	httpcaddyfile.RegisterDirective("mcp", parseMCPDirective)
	httpcaddyfile.RegisterDirectiveOrder("mcp", httpcaddyfile.Before, "reverse_proxy")
}

func parseCaddyfile(h httpcaddyfile.Helper) (caddyhttp.MiddlewareHandler, error) {
	m := new(Handler)
	err := m.UnmarshalCaddyfile(h.Dispenser)
	return m, err
}

// UnmarshalCaddyfile reads the mcp block (the README's Caddyfile reference):
//
//	mcp [<matcher>] {
//		name <server name>
//		version <server version>
//		error_mode jsonrpc|result
//		error_detail safe|full
//		scripts_dir <dir>
//		max_body_size <size>
//		session_idle_timeout <duration>
//		max_sessions <n>
//		allowed_origins <origin...>
//		allowed_hosts <host...>
//		session_key <key> [<previous key>...]
//		approval_timeout <duration>
//		catalog on|off
//		connector <name> postgres|mysql|sqlite|redis <dsn-or-path> { ... }
//		cache { ... }
//		tool <name> { ... }
//		source <name> <type> ... { ... }
//		resource <uri-or-template> { ... }
//		prompt <name> { ... }
//		discovery list|search|auto <n> { pin <tool...> }
//		sql_tools <connector> { ... }
//		after <tool> deny <tool...>
//		guardrails { store memory|redis <url>; ttl <d> }
//		toolset <name> { tools <glob...>; sources <name...>; auth ..; rate_limit .. }
//	}
//
// Every error names the file and line (Dispenser.Errf does).
func (h *Handler) UnmarshalCaddyfile(d *caddyfile.Dispenser) error {
	d.Next() // the directive name
	if d.NextArg() {
		return d.ArgErr()
	}
	for d.NextBlock(0) {
		switch dir := d.Val(); dir {
		case "name":
			if err := oneArg(d, &h.ServerName); err != nil {
				return err
			}
		case "version":
			if err := oneArg(d, &h.ServerVersion); err != nil {
				return err
			}
		case "scripts_dir":
			if err := oneArg(d, &h.ScriptsDir); err != nil {
				return err
			}
		case "script_timeout", "fetch_allow", "script_max_input", "script_max_output", "script_max_memory":
			if err := parseScriptSetting(d, &h.ScriptSettings); err != nil {
				return err
			}
		case "error_mode":
			if err := oneArg(d, &h.ErrorMode); err != nil {
				return err
			}
			if h.ErrorMode != errorModeJSONRPC && h.ErrorMode != errorModeResult {
				return d.Errf("error_mode must be %q or %q, got %q", errorModeJSONRPC, errorModeResult, h.ErrorMode)
			}
		case "error_detail":
			if err := oneArg(d, &h.ErrorDetail); err != nil {
				return err
			}
			if h.ErrorDetail != errorDetailSafe && h.ErrorDetail != errorDetailFull {
				return d.Errf("error_detail must be %q or %q, got %q", errorDetailSafe, errorDetailFull, h.ErrorDetail)
			}
		case "max_body_size":
			var s string
			if err := oneArg(d, &s); err != nil {
				return err
			}
			n, err := humanize.ParseBytes(s)
			if err != nil || n == 0 || n > math.MaxInt64 {
				return d.Errf("max_body_size: %q is not a size of at least one byte (want e.g. 4MiB; leave it out for the default, 1MiB)", s)
			}
			h.MaxBodySize = int64(n)
		case "session_idle_timeout":
			dur, err := durationArg(d)
			if err != nil {
				return err
			}
			h.SessionIdleTimeout = caddy.Duration(dur)
		case "max_sessions":
			var v string
			if !d.AllArgs(&v) {
				return d.ArgErr()
			}
			n, err := strconv.Atoi(v)
			if err != nil || n < 1 {
				return d.Errf("max_sessions: %q is not a positive number of sessions", v)
			}
			h.MaxSessions = n
		case "allowed_origins":
			origins := d.RemainingArgs()
			if len(origins) == 0 {
				return d.Errf("allowed_origins needs at least one origin (scheme://host[:port] or *)")
			}
			for _, o := range origins {
				if err := gate.CheckOrigin(o); err != nil {
					return d.Errf("%v", err)
				}
			}
			h.AllowedOrigins = append(h.AllowedOrigins, origins...)
		case "allowed_hosts":
			hosts := d.RemainingArgs()
			if len(hosts) == 0 {
				return d.Errf("allowed_hosts needs at least one host name (name, *.name or *)")
			}
			for _, host := range hosts {
				if err := gate.CheckHostName(host); err != nil {
					return d.Errf("%v", err)
				}
			}
			h.AllowedHosts = append(h.AllowedHosts, hosts...)
		case "session_key":
			if len(h.SessionKeys) > 0 {
				return d.Errf("session_key given twice (list previous keys after the current one)")
			}
			keys := d.RemainingArgs()
			if len(keys) == 0 {
				return d.Errf("session_key needs a key, usually {env.NAME}, and optionally previous keys")
			}
			for i, k := range keys {
				// A placeholder is checked at provision, once expanded.
				if !strings.Contains(k, "{") && len(k) < session.MinKeyLen {
					return d.Errf("session_key: key %d is %d bytes, want at least %d", i+1, len(k), session.MinKeyLen)
				}
			}
			h.SessionKeys = keys
		case "approval_timeout":
			dur, err := durationArg(d)
			if err != nil {
				return err
			}
			h.ApprovalTimeout = caddy.Duration(dur)
		case "catalog":
			if err := parseCatalog(d, h); err != nil {
				return err
			}
		case "connector":
			c, err := parseConnector(d)
			if err != nil {
				return err
			}
			for _, other := range h.Connectors {
				if other.Name == c.Name {
					return d.Errf("connector %q declared twice", c.Name)
				}
			}
			h.Connectors = append(h.Connectors, c)
		case "auth", "default_auth":
			if err := h.parseAuthDirective(d); err != nil {
				return err
			}
		case "source":
			if err := h.parseSourceDirective(d); err != nil {
				return err
			}
		case "rate_limit":
			if h.RateLimit != nil {
				return d.Errf("rate_limit declared twice")
			}
			c, err := parseRateLimit(d)
			if err != nil {
				return err
			}
			h.RateLimit = c
		case "max_concurrent":
			n, err := wholeArg(d, "")
			if err != nil {
				return err
			}
			h.MaxConcurrent = n
		case "rate_limit_redis":
			args := d.RemainingArgs()
			if len(args) < 1 || len(args) > 2 {
				return d.Errf("usage: rate_limit_redis <redis://...> [<key prefix>]")
			}
			h.RateLimitStore = &RateLimitStoreConfig{Redis: args[0]}
			if len(args) == 2 {
				h.RateLimitStore.Prefix = args[1]
			}
		case "cache":
			if err := parseCacheBlock(d, h); err != nil {
				return err
			}
		case "discovery":
			if err := parseDiscovery(d, h); err != nil {
				return err
			}
		case "tool":
			t, err := parseTool(d)
			if err != nil {
				return err
			}
			for _, other := range h.Tools {
				if other.Name == t.Name {
					return d.Errf("tool %q declared twice", t.Name)
				}
			}
			if err := checkCommandTool(d, h.Connectors, t); err != nil {
				return err
			}
			h.Tools = append(h.Tools, t)
		case "resource", "prompt":
			if err := h.parseResourceOrPrompt(d); err != nil {
				return err
			}
		case "sql_tools":
			c, err := parseSQLTools(d)
			if err != nil {
				return err
			}
			for _, other := range h.SQLTools {
				if other.prefix() == c.prefix() {
					return d.Errf("sql_tools %s: prefix %q is taken by sql_tools %s (give one a prefix)", c.Connector, c.prefix(), other.Connector)
				}
			}
			h.SQLTools = append(h.SQLTools, c)
		case "after":
			a, err := parseAfter(d)
			if err != nil {
				return err
			}
			h.After = append(h.After, a)
		case "guardrails":
			if err := parseGuardrails(d, h); err != nil {
				return err
			}
		case "toolset":
			if err := h.parseToolset(d); err != nil {
				return err
			}
		default:
			return d.Errf("unrecognized mcp sub-directive %q", dir)
		}
	}
	if err := h.checkScriptTools(); err != nil {
		return err
	}
	if err := h.checkToolsetSources(); err != nil {
		return err
	}
	if err := h.checkIdentityAtAdapt(); err != nil {
		return err
	}
	if err := h.checkResourcesAtAdapt(); err != nil {
		return err
	}
	return checkStatementsAtAdapt(h)
}

// parseConnector reads `connector <name> <type> <dsn> { ... }`. The
// gateway reads the lines every connector has (connectorLines); the
// driver, the guest module mcp.connectors.<type>, reads the others in its
// own UnmarshalCaddyfile.
func parseConnector(d *caddyfile.Dispenser) (ConnectorConfig, error) {
	var c ConnectorConfig
	seg := d.NextSegment()
	head := caddyfile.NewDispenser(seg)
	head.Next()
	args := head.RemainingArgs()
	if len(args) != 3 {
		return c, head.Errf("usage: connector <name> postgres|mysql|sqlite|redis <dsn-or-path> { ... }")
	}
	c.Name, c.Type, c.DSN = args[0], args[1], args[2]
	if err := checkConnectorType(c.Type); err != nil {
		return c, head.Errf("connector %q: %v", c.Name, err)
	}
	own, driverLines, err := splitConnectorBlock(seg, c.Name, c.Type)
	if err != nil {
		return c, err
	}
	unm, err := caddyfile.UnmarshalModule(driverLines, "mcp.connectors."+c.Type)
	if err != nil {
		return c, err
	}
	if err := c.setDriver(unm); err != nil {
		return c, head.Errf("%v", err)
	}
	var warnings []caddyconfig.Warning
	c.DriverRaw = caddyconfig.JSONModuleObject(unm, "type", c.Type, &warnings)
	return c, parseConnectorLines(own, &c)
}

// connectorLines are the sub-directives of a connector block that the
// gateway reads, whatever the driver.
var connectorLines = map[string]bool{
	"max_conns": true, "read_only": true, "max_rows": true, "max_result_size": true, "statement_timeout": true,
	"max_waiting": true, "queue_timeout": true, "required": true, "block_functions": true, "approval": true,
	"task": true,
}

// identityOptions are the driver options whose misplacement is reported
// at the connector block's end (splitConnectorBlock).
var identityOptions = map[string]bool{"claims_setting": true, "role_claim": true, "roles": true}

// splitConnectorBlock parts the connector directive seg into the
// gateway's lines and the driver's, each under the directive's head and
// positioned on it. Tokens keep their file and line, so errors still point
// at the Caddyfile. An option of another kind of driver is refused here
// (misplacedOption), the identity options at the block's end, as the
// gateway did before the drivers read them.
func splitConnectorBlock(seg caddyfile.Segment, name, typ string) (own, driver *caddyfile.Dispenser, err error) {
	var mine, theirs []caddyfile.Token
	var atEnd error
	toMine, depth := true, 0
	for i, tok := range seg {
		if depth == 1 && startsLine(seg, i) && tok.Text != "}" {
			toMine = connectorLines[tok.Text]
			if e := misplacedOption(name, typ, tok.Text); e != nil {
				at := caddyfile.NewDispenser(seg[i : i+1])
				at.Next()
				if !identityOptions[tok.Text] {
					return nil, nil, at.Errf("%v", e)
				}
				atEnd = e
			}
		}
		both := depth == 0 || (depth == 1 && tok.Text == "}" && !tok.Quoted())
		depth += braceStep(tok)
		if both || toMine {
			mine = append(mine, tok)
		}
		if both || !toMine {
			theirs = append(theirs, tok)
		}
	}
	if atEnd != nil {
		end := caddyfile.NewDispenser(seg[len(seg)-1:])
		end.Next()
		return nil, nil, end.Errf("%v", atEnd)
	}
	own, driver = caddyfile.NewDispenser(mine), caddyfile.NewDispenser(theirs)
	own.Next()
	driver.Next()
	return own, driver, nil
}

// parseConnectorLines reads the gateway's lines of a connector block; d
// is on the directive's head.
func parseConnectorLines(d *caddyfile.Dispenser, c *ConnectorConfig) error {
	d.RemainingArgs()
	var dropDefaultAt error      // block_functions none/only, if not read_only
	var writesOnReadOnlyAt error // approval writes, if read_only
	for nesting := d.Nesting(); d.NextBlock(nesting); {
		switch sub := d.Val(); sub {
		case "max_conns":
			var s string
			if err := oneArg(d, &s); err != nil {
				return err
			}
			n, err := strconv.Atoi(s)
			if err != nil || n < 1 {
				return d.Errf("connector %q: max_conns must be a positive integer, got %q", c.Name, s)
			}
			c.MaxConns = n
		case "read_only":
			if d.NextArg() {
				return d.ArgErr()
			}
			c.ReadOnly = true
		case "max_rows":
			var s string
			if err := oneArg(d, &s); err != nil {
				return err
			}
			n, err := strconv.Atoi(s)
			if err != nil || n < 1 {
				return d.Errf("connector %q: max_rows must be a positive integer, got %q", c.Name, s)
			}
			c.MaxRows = n
		case "max_result_size":
			var s string
			if err := oneArg(d, &s); err != nil {
				return err
			}
			n, err := pipeline.ParseSize(s)
			if err != nil {
				return d.Errf("connector %q: max_result_size: %v", c.Name, err)
			}
			c.MaxResultSize = n
		case "statement_timeout":
			dur, err := durationArg(d)
			if err != nil {
				return err
			}
			c.StatementTimeout = caddy.Duration(dur)
		case "max_waiting", "queue_timeout", "required", "block_functions":
			dropped := c.NoDefaultBlocks
			if err := parseConnectorSafety(d, c, sub); err != nil {
				return err
			}
			if !dropped && c.NoDefaultBlocks {
				dropDefaultAt = dropDefaultError(d, c)
			}
		case "approval":
			if c.Approval != "" {
				return d.Errf("connector %q: approval declared twice", c.Name)
			}
			p, err := parseApproval(d, fmt.Sprintf("connector %q", c.Name), approvalRequired, approvalWrites)
			if err != nil {
				return err
			}
			c.Approval = p
			if p == approvalWrites {
				writesOnReadOnlyAt = d.Errf("connector %q: approval writes asks before no tool of a read_only connector (its tools cannot write); use approval required, or leave it out", c.Name)
			}
		case "task":
			if c.Task != nil {
				return d.Errf("connector %q: task declared twice", c.Name)
			}
			t, err := parseTask(d, fmt.Sprintf("connector %q", c.Name))
			if err != nil {
				return err
			}
			c.Task = t
		}
	}
	if dropDefaultAt != nil && !c.ReadOnly {
		return dropDefaultAt
	}
	if writesOnReadOnlyAt != nil && c.ReadOnly {
		return writesOnReadOnlyAt
	}
	return nil
}

// parseTool reads `tool <name> { ... }`.
func parseTool(d *caddyfile.Dispenser) (ToolConfig, error) {
	var t ToolConfig
	if !d.NextArg() {
		return t, d.Errf("usage: tool <name> { ... }")
	}
	t.Name = d.Val()
	if d.NextArg() {
		return t, d.ArgErr()
	}
	for nesting := d.Nesting(); d.NextBlock(nesting); {
		switch sub := d.Val(); sub {
		case "description":
			if err := oneArg(d, &t.Description); err != nil {
				return t, err
			}
		case "title":
			if err := oneArg(d, &t.Title); err != nil {
				return t, err
			}
		case "use":
			if err := oneArg(d, &t.Use); err != nil {
				return t, err
			}
		case "statement":
			t.statementAt = d.File() + ":" + strconv.Itoa(d.Line())
			if err := oneArg(d, &t.Statement); err != nil {
				return t, err
			}
		case "input":
			in, err := parseInput(d, t.Name)
			if err != nil {
				return t, err
			}
			for _, other := range t.Inputs {
				if other.Name == in.Name {
					return t, d.Errf("tool %q: input %q declared twice", t.Name, in.Name)
				}
			}
			t.Inputs = append(t.Inputs, in)
		case "auth":
			a, err := parseToolAuth(d, t.Name)
			if err != nil {
				return t, err
			}
			t.Auth = a
		case "handler", "mappers", "script_timeout", "fetch_allow", "script_max_input", "script_max_output", "script_max_memory":
			if err := parseToolScripts(d, &t); err != nil {
				return t, err
			}
		case "annotations":
			a, err := parseAnnotations(d)
			if err != nil {
				return t, err
			}
			t.Annotations = a
		case "cache":
			c, err := parseToolCache(d, fmt.Sprintf("tool %q", t.Name))
			if err != nil {
				return t, err
			}
			t.Cache = c
		case "rate_limit":
			if t.RateLimit != nil {
				return t, d.Errf("tool %q: rate_limit declared twice", t.Name)
			}
			c, err := parseRateLimit(d)
			if err != nil {
				return t, err
			}
			t.RateLimit = c
		case "approval":
			if t.Approval != "" {
				return t, d.Errf("tool %q: approval declared twice", t.Name)
			}
			p, err := parseApproval(d, fmt.Sprintf("tool %q", t.Name), approvalRequired, approvalOff)
			if err != nil {
				return t, err
			}
			t.Approval = p
		case "max_concurrent":
			n, err := wholeArg(d, fmt.Sprintf("tool %q: ", t.Name))
			if err != nil {
				return t, err
			}
			t.MaxConcurrent = n
		case "task":
			if t.Task != nil {
				return t, d.Errf("tool %q: task declared twice", t.Name)
			}
			c, err := parseTask(d, fmt.Sprintf("tool %q", t.Name))
			if err != nil {
				return t, err
			}
			t.Task = c
		case "requires":
			r, err := parseRequires(d, fmt.Sprintf("tool %q", t.Name))
			if err != nil {
				return t, err
			}
			if r.Tool == t.Name {
				return t, d.Errf("tool %q: requires itself", t.Name)
			}
			t.Requires = append(t.Requires, r)
		default:
			return t, d.Errf("tool %q: unrecognized sub-directive %q", t.Name, sub)
		}
	}
	if strings.TrimSpace(t.Description) == "" {
		return t, d.Errf("tool %q: missing 'description' (the model reads it to decide when to call the tool)", t.Name)
	}
	return t, checkToolExecution(d, &t)
}

// parseInput reads
// `input <name> <type> [required] [default <v>] [enum a|b|c] ["description"]`.
func parseInput(d *caddyfile.Dispenser, tool string) (InputConfig, error) {
	var in InputConfig
	if !d.NextArg() {
		return in, d.Errf("usage: input <name> <type> [required] [default <value>] [enum a|b|c] [\"description\"]")
	}
	in.Name = d.Val()
	if !d.NextArg() {
		return in, d.Errf("input %q: missing type", in.Name)
	}
	in.Type = d.Val()
	described := false
	for d.NextArg() {
		switch d.Val() {
		case "required":
			in.Required = true
		case "default":
			if !d.NextArg() {
				return in, d.Errf("input %q: default needs a value", in.Name)
			}
			v := d.Val()
			in.Default = &v
		case "enum":
			if !d.NextArg() {
				return in, d.Errf("input %q: enum needs values a|b|c", in.Name)
			}
			in.Enum = strings.Split(d.Val(), "|")
		default:
			if described {
				return in, d.Errf("tool %q: input %q: unexpected %q (the description is already %q)", tool, in.Name, d.Val(), in.Description)
			}
			in.Description, described = d.Val(), true
		}
	}
	if d.NextBlock(d.Nesting()) {
		return in, d.Errf("input %q: takes no block", in.Name)
	}
	// Type, default and enum are checked here so that `caddy adapt` points
	// at the line.
	if _, err := pipeline.NewInput(inputSpec(in)); err != nil {
		return in, d.Errf("tool %q: %v", tool, err)
	}
	return in, nil
}

// parseAnnotations reads `annotations { read_only [bool] destructive [bool]
// idempotent [bool] open_world [bool] }`; a flag without a value is true.
func parseAnnotations(d *caddyfile.Dispenser) (*AnnotationsConfig, error) {
	a := new(AnnotationsConfig)
	if d.NextArg() {
		return nil, d.ArgErr()
	}
	for nesting := d.Nesting(); d.NextBlock(nesting); {
		var target **bool
		sub := d.Val()
		switch sub {
		case "read_only":
			target = &a.ReadOnly
		case "destructive":
			target = &a.Destructive
		case "idempotent":
			target = &a.Idempotent
		case "open_world":
			target = &a.OpenWorld
		default:
			return nil, d.Errf("annotations: unrecognized hint %q (want read_only, destructive, idempotent, open_world)", sub)
		}
		v := true
		if d.NextArg() {
			b, err := strconv.ParseBool(d.Val())
			if err != nil {
				return nil, d.Errf("annotations: %s wants true or false, got %q", sub, d.Val())
			}
			v = b
		}
		if d.NextArg() {
			return nil, d.ArgErr()
		}
		*target = &v
	}
	return a, nil
}

// oneArg reads the line's one value into dst.
func oneArg(d *caddyfile.Dispenser, dst *string) error { return caddyargs.OneArg(d, dst) }

// wholeArg reads the sub-directive's one value, a positive whole number;
// an error names the sub-directive after prefix (the block it is in).
func wholeArg(d *caddyfile.Dispenser, prefix string) (int, error) {
	dir := d.Val()
	var s string
	if err := oneArg(d, &s); err != nil {
		return 0, err
	}
	n, err := strconv.Atoi(s)
	if err != nil || n < 1 {
		return 0, d.Errf("%s%s must be a positive whole number, got %q", prefix, dir, s)
	}
	return n, nil
}

func durationArg(d *caddyfile.Dispenser) (time.Duration, error) {
	dir := d.Val()
	var s string
	if err := oneArg(d, &s); err != nil {
		return 0, err
	}
	dur, err := caddy.ParseDuration(s)
	if err != nil || dur <= 0 {
		return 0, d.Errf("%s: invalid duration %q", dir, s)
	}
	return dur, nil
}

// parseTask reads `task optional|required [ttl <duration>]` in the block
// of owner ("tool x", "connector y", "source z").
func parseTask(d *caddyfile.Dispenser, owner string) (*TaskConfig, error) {
	const usage = "usage: task optional|required [ttl <duration>]"
	args := d.RemainingArgs()
	if blockErr := d.Errf("%s: task takes no block (%s)", owner, usage); d.NextBlock(d.Nesting()) {
		return nil, blockErr
	}
	if len(args) != 1 && len(args) != 3 {
		return nil, d.Errf("%s: %s", owner, usage)
	}
	c := &TaskConfig{Mode: args[0]}
	if c.Mode != taskOptional && c.Mode != taskRequired {
		return nil, d.Errf("%s: task must be %s or %s, got %q (%s)", owner, taskOptional, taskRequired, c.Mode, usage)
	}
	if len(args) == 3 {
		if args[1] != "ttl" {
			return nil, d.Errf("%s: task: unknown option %q (%s)", owner, args[1], usage)
		}
		dur, err := caddy.ParseDuration(args[2])
		if err != nil || dur < minTaskTTL || dur > maxTaskTTL {
			return nil, d.Errf("%s: task ttl must be a duration from %s to %s, got %q", owner, minTaskTTL, maxTaskTTL, args[2])
		}
		c.TTL = caddy.Duration(dur)
	}
	return c, nil
}

// parseApproval reads `approval <policy>` in the block of owner ("tool
// x", "connector y", "source z"), allowing the given policies.
func parseApproval(d *caddyfile.Dispenser, owner string, allowed ...string) (string, error) {
	if !d.NextArg() {
		return "", d.Errf("%s: approval needs one of %s", owner, strings.Join(allowed, ", "))
	}
	p := d.Val()
	if d.NextArg() {
		return "", d.Errf("%s: approval takes one value, got another: %q", owner, d.Val())
	}
	if d.NextBlock(d.Nesting()) {
		return "", d.Errf("%s: approval takes no block", owner)
	}
	for _, a := range allowed {
		if p == a {
			return p, nil
		}
	}
	return "", d.Errf("%s: approval must be one of %s, got %q", owner, strings.Join(allowed, ", "), p)
}

// takeSourceLines removes the `approval` and `task` lines from the block
// of a source segment (which starts at the source's type) and reads them:
// both belong to the gateway, so every source type has them, and the
// source module never sees them.
func takeSourceLines(seg caddyfile.Segment, source string) (rest caddyfile.Segment, policy string, task *TaskConfig, err error) {
	owner := fmt.Sprintf("source %q", source)
	rest = make(caddyfile.Segment, 0, len(seg))
	nesting := 0
	for i := 0; i < len(seg); i++ {
		t := seg[i]
		if nesting == 1 && startsLine(seg, i) && (t.Text == "approval" || t.Text == "task") && !t.Quoted() {
			end := i + 1
			for end < len(seg) && !startsLine(seg, end) {
				end++
			}
			line := caddyfile.NewDispenser(seg[i:end])
			line.Next()
			if end > i+1 && seg[end-1].Text == "{" && !seg[end-1].Quoted() {
				return nil, "", nil, line.Errf("%s: %s takes no block", owner, t.Text)
			}
			if t.Text == "task" {
				if task != nil {
					return nil, "", nil, line.Errf("%s: task declared twice", owner)
				}
				if task, err = parseTask(line, owner); err != nil {
					return nil, "", nil, err
				}
			} else {
				if policy != "" {
					return nil, "", nil, line.Errf("%s: approval declared twice", owner)
				}
				if policy, err = parseApproval(line, owner, approvalRequired, approvalWrites); err != nil {
					return nil, "", nil, err
				}
			}
			i = end - 1
			continue
		}
		nesting += braceStep(t)
		rest = append(rest, t)
	}
	return rest, policy, task, nil
}

// startsLine reports whether seg[i] is the first token on its line, as the
// Dispenser decides it.
func startsLine(seg caddyfile.Segment, i int) bool {
	if i == 0 {
		return true
	}
	prev, t := seg[i-1], seg[i]
	return prev.File != t.File || prev.Line+prev.NumLineBreaks() < t.Line
}

// parseMCPDirective is the mcp directive: the handler's route, as
// RegisterHandlerDirective would make it, plus — when the endpoint has
// default_auth and a path matcher — a route serving the protected resource
// metadata at /.well-known/oauth-protected-resource and its path-suffixed
// form. Without it, `mcp /mcp { ... }` would leave those paths to whatever
// else the site does, and MCP clients could not discover how to log in.
func parseMCPDirective(h httpcaddyfile.Helper) ([]httpcaddyfile.ConfigValue, error) {
	if !h.Next() {
		return nil, h.ArgErr()
	}
	matcherSet, err := h.ExtractMatcherSet()
	if err != nil {
		return nil, err
	}
	handler, err := parseCaddyfile(h)
	if err != nil {
		return nil, err
	}
	m := handler.(*Handler)
	if err := m.checkAuthRefs(); err != nil {
		return nil, err
	}
	paths := endpointPaths(matcherSet) // the endpoint's own, before the toolsets' are added
	if err := m.toolsetPaths(h, matcherSet); err != nil {
		return nil, err
	}
	// The toolsets' documents first: without a matcher the handler's
	// route takes every path.
	routes := append(m.toolsetMetadataRoutes(h), h.NewRoute(matcherSet, m)...)
	if m.DefaultAuth == nil || matcherSet == nil {
		return routes, nil // no matcher: the handler sees, and answers, every path
	}
	if len(paths) == 0 {
		return routes, nil
	}
	wellKnown := []string{wellKnownPrefix}
	for _, p := range paths {
		wellKnown = append(wellKnown, wellKnownPrefix+p)
	}
	meta := m.resourceMetadata(m.adaptServers[m.DefaultAuth.Use])
	meta.ResourcePaths = paths
	matchWellKnown := caddy.ModuleMap{"path": caddyconfig.JSON(caddyhttp.MatchPath(wellKnown), nil)}
	return append(routes, h.NewRoute(matchWellKnown, meta)...), nil
}

// toolsetPaths gives each toolset its paths, `<endpoint path>/<name>`
// for each path of the directive's matcher (`/<name>` without one), and
// adds them to the matcher as exact paths: `mcp /mcp` matches /mcp alone,
// and widening it to /mcp* would take every path under it from the rest of
// the site. A matcher that is not a plain path has no path to put a
// toolset under, and is refused.
func (m *Handler) toolsetPaths(h httpcaddyfile.Helper, matcherSet caddy.ModuleMap) error {
	if len(m.Toolsets) == 0 {
		return nil
	}
	bases := []string{""}
	if matcherSet != nil {
		if bases = endpointPaths(matcherSet); len(bases) == 0 {
			return h.Errf("toolset %q: the mcp directive's matcher must be a path (mcp /mcp { ... }) or none, to serve a toolset under it", m.Toolsets[0].Name)
		}
	}
	var added []string
	for i := range m.Toolsets {
		ts := &m.Toolsets[i]
		ts.Paths = nil
		for _, b := range bases {
			ts.Paths = append(ts.Paths, b+"/"+ts.Name)
		}
		added = append(added, ts.Paths...)
	}
	if matcherSet == nil {
		return nil
	}
	var paths []string
	_ = json.Unmarshal(matcherSet["path"], &paths) // endpointPaths read it
	matcherSet["path"] = caddyconfig.JSON(append(paths, added...), nil)
	return nil
}

// toolsetMetadataRoutes serve the protected resource metadata (RFC 9728)
// of each toolset with auth, its own or the endpoint's default_auth, at
// the path-suffixed well-known path of each of its paths: the document
// names the toolset's provider's authorization servers.
func (m *Handler) toolsetMetadataRoutes(h httpcaddyfile.Helper) []httpcaddyfile.ConfigValue {
	var routes []httpcaddyfile.ConfigValue
	for i := range m.Toolsets {
		ts := &m.Toolsets[i]
		def := toolsetDefault(ts, m.DefaultAuth)
		if def == nil {
			continue
		}
		view := *m
		view.DefaultAuth = def
		meta := view.resourceMetadata(m.adaptServers[def.Use])
		meta.ResourcePaths = ts.Paths
		var wellKnown []string
		for _, p := range ts.Paths {
			wellKnown = append(wellKnown, wellKnownPrefix+p)
		}
		match := caddy.ModuleMap{"path": caddyconfig.JSON(caddyhttp.MatchPath(wellKnown), nil)}
		routes = append(routes, h.NewRoute(match, meta)...)
	}
	return routes
}

// endpointPaths are the literal paths of a path matcher (`/mcp`, or `/mcp*`
// read as /mcp); nil when the matcher is anything else.
func endpointPaths(set caddy.ModuleMap) []string {
	raw, ok := set["path"]
	if !ok || len(set) != 1 {
		return nil
	}
	var paths []string
	if json.Unmarshal(raw, &paths) != nil {
		return nil
	}
	var out []string
	for _, p := range paths {
		p = strings.TrimSuffix(strings.TrimSuffix(p, "*"), "/")
		if p == "" || !strings.HasPrefix(p, "/") || strings.ContainsAny(p, "*%") {
			return nil
		}
		out = append(out, p)
	}
	return out
}

// parseAuthDirective reads, in the mcp block,
//
//	auth <name> <plugin> { <plugin settings> }
//	default_auth <name> [{ scope ..; claim ..; subject ..; resource <url> }]
func (h *Handler) parseAuthDirective(d *caddyfile.Dispenser) error {
	if d.Val() == "default_auth" {
		if h.DefaultAuth != nil {
			return d.Errf("default_auth declared twice")
		}
		def := new(DefaultAuthConfig)
		if err := parsePolicy(d, &def.AuthPolicyConfig, &def.Resource); err != nil {
			return err
		}
		h.DefaultAuth = def
		return nil
	}
	if !d.NextArg() {
		return d.Errf("usage: auth <name> <plugin> { ... } (plugins: api_key, jwt, basic, script, or one added with xcaddy)")
	}
	name := d.Val()
	if !d.NextArg() {
		return d.Errf("auth %q: missing plugin (api_key, jwt, basic, script, ...)", name)
	}
	plugin := d.Val()
	for _, other := range h.Auth {
		if other.Name == name {
			return d.Errf("auth %q declared twice", name)
		}
	}
	if _, err := caddy.GetModule("mcp.auth." + plugin); err != nil {
		return d.Errf("auth %q: unknown plugin %q (built in: api_key, jwt, basic, script)", name, plugin)
	}
	unm, err := caddyfile.UnmarshalModule(d, "mcp.auth."+plugin)
	if err != nil {
		return err
	}
	if l, ok := unm.(AuthorizationServerLister); ok {
		if h.adaptServers == nil {
			h.adaptServers = map[string][]string{}
		}
		h.adaptServers[name] = l.AuthorizationServerURLs()
	}
	var warnings []caddyconfig.Warning
	raw := caddyconfig.JSONModuleObject(unm, "provider", plugin, &warnings)
	h.Auth = append(h.Auth, AuthProviderConfig{Name: name, ProviderRaw: raw})
	return nil
}

// parseToolAuth reads a tool's `auth <name> [{ scope ..; claim ..; subject .. }]`.
func parseToolAuth(d *caddyfile.Dispenser, tool string) (*AuthPolicyConfig, error) {
	p := new(AuthPolicyConfig)
	if err := parsePolicy(d, p, nil); err != nil {
		return nil, fmt.Errorf("tool %q: %w", tool, err)
	}
	return p, nil
}

// parsePolicy reads `<name> [{ scope <s...>; claim <name> <v...>; subject
// <id...> }]`; resource, when not nil, also accepts `resource <url>`.
func parsePolicy(d *caddyfile.Dispenser, p *AuthPolicyConfig, resource *string) error {
	dir := d.Val()
	if !d.NextArg() {
		return d.Errf("usage: %s <provider> { scope ..; claim <name> <value...>; subject <id...> }", dir)
	}
	p.Use = d.Val()
	p.pos = fmt.Sprintf("%s:%d", d.File(), d.Line())
	if d.NextArg() {
		return d.Errf("%s %q: unexpected %q (policy settings go in a block)", dir, p.Use, d.Val())
	}
	for nesting := d.Nesting(); d.NextBlock(nesting); {
		sub := d.Val()
		args := d.RemainingArgs()
		switch {
		case sub == "scope" && len(args) > 0:
			p.Scopes = append(p.Scopes, args...)
		case sub == "subject" && len(args) > 0:
			p.Subjects = append(p.Subjects, args...)
		case sub == "claim" && len(args) > 1:
			if p.Claims == nil {
				p.Claims = map[string][]string{}
			}
			p.Claims[args[0]] = append(p.Claims[args[0]], args[1:]...)
		case sub == "resource" && resource != nil && len(args) == 1:
			if !strings.HasPrefix(args[0], "https://") && !strings.HasPrefix(args[0], "http://") {
				return d.Errf("%s: resource must be an absolute http(s) URL, got %q", dir, args[0])
			}
			*resource = args[0]
		case sub == "scope" || sub == "subject" || sub == "claim" || (sub == "resource" && resource != nil):
			return d.Errf("%s %q: wrong arguments for %s (scope <s...>, claim <name> <value...>, subject <id...>, resource <url>)", dir, p.Use, sub)
		default:
			return d.Errf("%s %q: unrecognized policy setting %q (want scope, claim, subject)", dir, p.Use, sub)
		}
	}
	return nil
}

// checkAuthRefs finds, once the whole mcp block is read, policies naming a
// provider that is not declared.
func (h *Handler) checkAuthRefs() error {
	declared := map[string]bool{}
	for _, a := range h.Auth {
		declared[a.Name] = true
	}
	check := func(p *AuthPolicyConfig, what string) error {
		if p == nil || declared[p.Use] {
			return nil
		}
		return fmt.Errorf("%s: auth provider %q is not declared (add `auth %s <plugin> { ... }` to the mcp block), at %s", what, p.Use, p.Use, p.pos)
	}
	if h.DefaultAuth != nil {
		if err := check(&h.DefaultAuth.AuthPolicyConfig, "default_auth"); err != nil {
			return err
		}
	}
	for _, t := range h.Tools {
		if err := check(t.Auth, fmt.Sprintf("tool %q", t.Name)); err != nil {
			return err
		}
	}
	for _, s := range h.SQLTools {
		if err := check(s.Auth, "sql_tools "+s.Connector); err != nil {
			return err
		}
	}
	for _, ts := range h.Toolsets {
		if err := check(ts.Auth, fmt.Sprintf("toolset %q", ts.Name)); err != nil {
			return err
		}
	}
	return nil
}

// parseToolset reads
//
//	toolset <name> {
//		tools <glob...>
//		sources <source...>
//		auth <provider> { scope ..; claim ..; subject .. }
//		rate_limit <n> per <duration> [by subject|ip|tool]
//	}
//
// Its paths are set by the mcp directive (toolsetPaths).
func (h *Handler) parseToolset(d *caddyfile.Dispenser) error {
	var ts ToolsetConfig
	if !d.AllArgs(&ts.Name) {
		return d.Errf("usage: toolset <name> { tools <glob...>; sources <source...>; auth ..; rate_limit .. }")
	}
	ts.pos = fmt.Sprintf("%s:%d", d.File(), d.Line())
	if !toolsetName.MatchString(ts.Name) {
		return d.Errf("toolset %q: a name is 1 to 64 of a-z A-Z 0-9 _ - (it is a path segment)", ts.Name)
	}
	for _, other := range h.Toolsets {
		if other.Name == ts.Name {
			return d.Errf("toolset %q declared twice", ts.Name)
		}
	}
	for nesting := d.Nesting(); d.NextBlock(nesting); {
		switch sub := d.Val(); sub {
		case "tools", "sources":
			args := d.RemainingArgs()
			if len(args) == 0 {
				return d.Errf("toolset %q: %s needs at least one name", ts.Name, sub)
			}
			if sub == "sources" {
				ts.Sources = append(ts.Sources, args...)
				continue
			}
			for _, p := range args {
				if _, err := path.Match(p, ""); err != nil {
					return d.Errf("toolset %q: tools: bad pattern %q", ts.Name, p)
				}
			}
			ts.Tools = append(ts.Tools, args...)
		case "auth":
			if ts.Auth != nil {
				return d.Errf("toolset %q: auth declared twice", ts.Name)
			}
			ts.Auth = new(AuthPolicyConfig)
			if err := parsePolicy(d, ts.Auth, nil); err != nil {
				return err
			}
		case "rate_limit":
			if ts.RateLimit != nil {
				return d.Errf("toolset %q: rate_limit declared twice", ts.Name)
			}
			c, err := parseRateLimit(d)
			if err != nil {
				return err
			}
			ts.RateLimit = c
		default:
			return d.Errf("toolset %q: unrecognized setting %q (want tools, sources, auth, rate_limit)", ts.Name, sub)
		}
	}
	if len(ts.Tools) == 0 && len(ts.Sources) == 0 {
		return fmt.Errorf("toolset %q: selects nothing (give tools <glob...> or sources <source...>), at %s", ts.Name, ts.pos)
	}
	h.Toolsets = append(h.Toolsets, ts)
	return nil
}

// checkToolsetSources finds, once the whole mcp block is read, toolsets
// naming a source the block does not declare.
func (h *Handler) checkToolsetSources() error {
	declared := map[string]bool{}
	for _, s := range h.Sources {
		declared[s.Name] = true
	}
	for _, ts := range h.Toolsets {
		for _, s := range ts.Sources {
			if !declared[s] {
				return fmt.Errorf("toolset %q: sources: no source %q in this mcp block, at %s", ts.Name, s, ts.pos)
			}
		}
	}
	return nil
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

// parseScriptSetting reads `script_timeout <duration>`, `fetch_allow
// <host...>`, `script_max_input <size>`, `script_max_output <size>` and
// `script_max_memory <size>`, in the mcp block or in a tool.
func parseScriptSetting(d *caddyfile.Dispenser, set *ScriptSettings) error {
	switch dir := d.Val(); dir {
	case "script_timeout":
		dur, err := durationArg(d)
		if err != nil {
			return err
		}
		set.ScriptTimeout = caddy.Duration(dur)
	case "script_max_input", "script_max_output", "script_max_memory":
		var v string
		if err := oneArg(d, &v); err != nil {
			return err
		}
		n, err := humanize.ParseBytes(v)
		if err != nil || n == 0 || n > 1<<30 {
			return d.Errf("%s: invalid size %q (want e.g. 4MiB, at most 1GiB)", dir, v)
		}
		switch dir {
		case "script_max_input":
			set.ScriptMaxInput = int64(n)
		case "script_max_output":
			set.ScriptMaxOutput = int64(n)
		default:
			set.ScriptMaxMemory = int64(n)
		}
	case "fetch_allow":
		hosts := d.RemainingArgs()
		if len(hosts) == 0 {
			return d.Errf("fetch_allow needs at least one host (api.example.com, *.example.com or host:port)")
		}
		for _, h := range hosts {
			if err := script.ParseFetchAllow(h); err != nil {
				return d.Errf("%v", err)
			}
		}
		set.FetchAllow = append(set.FetchAllow, hosts...)
	}
	return nil
}

// parseToolScripts reads a tool's handler, mappers and script settings.
func parseToolScripts(d *caddyfile.Dispenser, t *ToolConfig) error {
	switch d.Val() {
	case "handler":
		if t.Handler != "" {
			return d.Errf("tool %q: handler declared twice", t.Name)
		}
		return oneArg(d, &t.Handler)
	case "mappers":
		if d.NextArg() {
			return d.Errf("tool %q: usage: mappers { input <file>  output <file> }", t.Name)
		}
		if t.Mappers == nil {
			t.Mappers = new(MappersConfig)
		}
		for nesting := d.Nesting(); d.NextBlock(nesting); {
			var dst *string
			switch d.Val() {
			case "input":
				dst = &t.Mappers.Input
			case "output":
				dst = &t.Mappers.Output
			default:
				return d.Errf("tool %q: mappers: unrecognized %q (want input or output)", t.Name, d.Val())
			}
			if *dst != "" {
				return d.Errf("tool %q: mappers: %s declared twice", t.Name, d.Val())
			}
			if err := oneArg(d, dst); err != nil {
				return err
			}
		}
		return nil
	}
	return parseScriptSetting(d, &t.ScriptSettings)
}

// checkToolExecution is the end-of-block check of a tool: exactly one way
// to execute, `use` + `statement` or `handler`. A tool with neither may
// still get a handler from scripts_dir, so that error waits for the end of
// the mcp block (checkScriptTools).
func checkToolExecution(d *caddyfile.Dispenser, t *ToolConfig) error {
	switch {
	case t.Handler != "" && (t.Use != "" || t.Statement != ""):
		return d.Errf("tool %q: a tool runs either a statement ('use' + 'statement') or a 'handler', not both", t.Name)
	case t.Handler != "":
		return nil
	case t.Use == "" && t.Statement == "":
		t.noExecution = d.Errf("tool %q: missing 'use <connector>' + 'statement', or 'handler <file>' (or scripts_dir with %s/handler.js)", t.Name, t.Name)
		return nil
	case t.Use == "":
		return d.Errf("tool %q: missing 'use <connector>'", t.Name)
	case strings.TrimSpace(t.Statement) == "":
		return d.Errf("tool %q: missing 'statement'", t.Name)
	}
	return nil
}

// checkScriptTools runs after the whole mcp block is read: without
// scripts_dir, a tool with nothing to execute is an error at its line.
func (h *Handler) checkScriptTools() error {
	if h.ScriptsDir != "" {
		return nil
	}
	for _, t := range h.Tools {
		if t.noExecution != nil {
			return t.noExecution
		}
	}
	return nil
}

// parseCacheBlock reads
//
//	cache {
//		max_size <size>
//		default_ttl <duration>
//		stale_if_error <duration>
//		redis <url>
//		key_prefix <prefix>
//		redis_timeout <duration>
//	}
func parseCacheBlock(d *caddyfile.Dispenser, h *Handler) error {
	if h.Cache != nil {
		return d.Errf("cache block declared twice")
	}
	if d.NextArg() {
		return d.Errf("cache takes a block, not arguments: cache { max_size ... }")
	}
	c := new(CacheConfig)
	for nesting := d.Nesting(); d.NextBlock(nesting); {
		sub := d.Val()
		var dur *caddy.Duration
		switch sub {
		case "max_size":
			var s string
			if err := oneArg(d, &s); err != nil {
				return err
			}
			n, err := humanize.ParseBytes(s)
			if err != nil || n < 1<<20 || n > 1<<40 {
				return d.Errf("cache: max_size must be a size between 1MiB and 1TiB, got %q", s)
			}
			c.MaxSize = int64(n)
		case "default_ttl":
			dur = &c.DefaultTTL
		case "stale_if_error":
			dur = &c.StaleIfError
		case "redis_timeout":
			dur = &c.RedisTimeout
		case "redis":
			if err := oneArg(d, &c.Redis); err != nil {
				return err
			}
			if !strings.HasPrefix(c.Redis, "redis://") && !strings.HasPrefix(c.Redis, "rediss://") && !strings.HasPrefix(c.Redis, "{") {
				return d.Errf("cache: redis wants a redis:// or rediss:// URL")
			}
		case "key_prefix":
			if err := oneArg(d, &c.KeyPrefix); err != nil {
				return err
			}
		default:
			return d.Errf("cache: unrecognized sub-directive %q (want max_size, default_ttl, stale_if_error, redis, key_prefix, redis_timeout)", sub)
		}
		if dur != nil {
			v, err := durationArg(d)
			if err != nil {
				return err
			}
			*dur = caddy.Duration(v)
		}
	}
	h.Cache = c
	return nil
}

// parseToolCache reads a tool's `cache <ttl>`, `cache off`, `cache shared`
// or `cache shared <ttl>` (the two words in either order).
func parseToolCache(d *caddyfile.Dispenser, owner string) (*ToolCacheConfig, error) {
	args := d.RemainingArgs()
	if len(args) == 0 || len(args) > 2 {
		return nil, d.Errf("%s: usage: cache <ttl> | cache off | cache shared [<ttl>]", owner)
	}
	c := new(ToolCacheConfig)
	for _, a := range args {
		switch {
		case a == "off":
			c.Off = true
		case a == "shared" && !c.Shared:
			c.Shared = true
		default:
			ttl, err := caddy.ParseDuration(a)
			if err != nil || ttl <= 0 || c.TTL != 0 {
				return nil, d.Errf("%s: cache: invalid ttl %q (usage: cache <ttl> | cache off | cache shared [<ttl>])", owner, a)
			}
			c.TTL = caddy.Duration(ttl)
		}
	}
	if c.Off && len(args) > 1 {
		return nil, d.Errf("%s: cache off takes nothing else", owner)
	}
	return c, nil
}

// parseCatalog reads `catalog on|off`.
func parseCatalog(d *caddyfile.Dispenser, h *Handler) error {
	var v string
	if err := oneArg(d, &v); err != nil {
		return err
	}
	switch v {
	case "off":
		h.CatalogOff = true
	case "on":
		h.CatalogOff = false
	default:
		return d.Errf("catalog must be on or off, got %q", v)
	}
	return nil
}

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

// checkIdentityAtAdapt refuses in `caddy adapt` what the load would refuse
// (checkIdentityValues, cachePolicy) of a tool taking values from the
// caller's identity: no auth provider, or `cache shared`.
func (h *Handler) checkIdentityAtAdapt() error {
	for t, c := range h.toolConnectors() {
		vals := statementIdentity(t.Statement, c)
		if len(vals) == 0 {
			continue
		}
		if t.Auth == nil && h.DefaultAuth == nil {
			return fmt.Errorf("tool %q: the statement binds the caller's identity (%s) but the tool has no auth provider: give it an auth block or set default_auth, at %s", t.Name, strings.Join(vals, ", "), t.statementAt)
		}
		if t.Cache != nil && t.Cache.Shared {
			return fmt.Errorf("tool %q: cache shared: the statement binds the caller's identity (%s), so its results differ per caller and cannot be shared; drop \"shared\" (results are then cached per identity), at %s", t.Name, strings.Join(vals, ", "), t.statementAt)
		}
	}
	return nil
}

// parseDiscovery reads the discovery directive.
func parseDiscovery(d *caddyfile.Dispenser, h *Handler) error {
	if h.Discovery != nil {
		return d.Errf("discovery declared twice")
	}
	usage := "usage: discovery list|search|auto <number of tools> [{ pin <tool...> }]"
	if !d.NextArg() {
		return d.Errf("%s", usage)
	}
	c := &DiscoveryConfig{Mode: d.Val()}
	switch c.Mode {
	case discoveryList, discoverySearch:
	case discoveryAuto:
		if !d.NextArg() {
			return d.Errf("discovery auto needs the number of tools above which tools/list turns to search")
		}
		n, err := strconv.Atoi(d.Val())
		if err != nil || n < 1 {
			return d.Errf("discovery auto: %q is not a positive number of tools", d.Val())
		}
		c.Auto = n
	default:
		return d.Errf("discovery: unknown mode %q; %s", c.Mode, usage)
	}
	if d.NextArg() {
		return d.Errf("discovery %s: unexpected %q; %s", c.Mode, d.Val(), usage)
	}
	for d.NextBlock(1) {
		switch sub := d.Val(); sub {
		case "pin":
			if c.Mode == discoveryList {
				return d.Errf("pin: discovery list lists every tool already; pins apply to search and auto")
			}
			names := d.RemainingArgs()
			if len(names) == 0 {
				return d.Errf("pin needs at least one tool name")
			}
			c.Pin = append(c.Pin, names...)
		default:
			return d.Errf("discovery: unrecognized sub-directive %q (want pin)", sub)
		}
	}
	h.Discovery = c
	return nil
}

// parsePrompt reads `prompt <name> { ... }`; the templates are compiled
// here too, so that `caddy adapt` names the line of a bad one.
func parsePrompt(d *caddyfile.Dispenser) (PromptConfig, error) {
	var p PromptConfig
	if !d.NextArg() {
		return p, d.Errf("usage: prompt <name> { description ...; argument ...; message user|assistant \"...\" }")
	}
	p.Name = d.Val()
	if d.NextArg() {
		return p, d.ArgErr()
	}
	if !pipeline.ToolNamePattern.MatchString(p.Name) {
		return p, d.Errf("prompt %q: name must match %s", p.Name, pipeline.ToolNamePattern)
	}
	for nesting := d.Nesting(); d.NextBlock(nesting); {
		switch sub := d.Val(); sub {
		case "description":
			if err := oneArg(d, &p.Description); err != nil {
				return p, err
			}
		case "title":
			if err := oneArg(d, &p.Title); err != nil {
				return p, err
			}
		case "argument":
			a, err := parsePromptArgument(d, p.Name)
			if err != nil {
				return p, err
			}
			for _, other := range p.Arguments {
				if other.Name == a.Name {
					return p, d.Errf("prompt %q: argument %q declared twice", p.Name, a.Name)
				}
			}
			p.Arguments = append(p.Arguments, a)
		case "message":
			args := d.RemainingArgs()
			if len(args) != 2 {
				return p, d.Errf("prompt %q: usage: message user|assistant \"<template>\"", p.Name)
			}
			m := PromptMessageConfig{Role: args[0], Template: args[1]}
			if _, err := pipeline.CompilePromptMessage(m.Role, m.Template, promptArguments(p.Arguments)); err != nil {
				return p, d.Errf("prompt %q: %v", p.Name, err)
			}
			p.Messages = append(p.Messages, m)
		case "auth":
			a, err := parseToolAuth(d, p.Name)
			if err != nil {
				return p, fmt.Errorf("prompt%s", strings.TrimPrefix(err.Error(), "tool"))
			}
			p.Auth = a
		default:
			return p, d.Errf("prompt %q: unrecognized sub-directive %q (want description, title, argument, message, auth)", p.Name, sub)
		}
	}
	if len(p.Messages) == 0 {
		return p, d.Errf("prompt %q: no message (add message user \"...\")", p.Name)
	}
	return p, nil
}

// parsePromptArgument reads
// `argument <name> [required] [enum a|b|c] ["description"]`.
func parsePromptArgument(d *caddyfile.Dispenser, prompt string) (PromptArgumentConfig, error) {
	var a PromptArgumentConfig
	if !d.NextArg() {
		return a, d.Errf("prompt %q: usage: argument <name> [required] [enum a|b|c] [\"description\"]", prompt)
	}
	a.Name = d.Val()
	if !promptArgName.MatchString(a.Name) {
		return a, d.Errf("prompt %q: argument %q: name must match %s", prompt, a.Name, promptArgName)
	}
	described := false
	for d.NextArg() {
		switch v := d.Val(); {
		case v == "required" && !described:
			a.Required = true
		case v == "enum" && !described:
			if !d.NextArg() || d.Val() == "" {
				return a, d.Errf("prompt %q: argument %q: enum needs values a|b|c", prompt, a.Name)
			}
			a.Enum = strings.Split(d.Val(), "|")
		case described:
			return a, d.Errf("prompt %q: argument %q: unexpected %q (the description is already %q)", prompt, a.Name, v, a.Description)
		default:
			a.Description, described = v, true
		}
	}
	if d.NextBlock(d.Nesting()) {
		return a, d.Errf("prompt %q: argument %q takes no block", prompt, a.Name)
	}
	return a, nil
}

// parseRateLimit reads `rate_limit <n> per <duration> [by subject|ip|tool]`.
func parseRateLimit(d *caddyfile.Dispenser) (*RateLimitConfig, error) {
	args := d.RemainingArgs()
	if len(args) != 3 && len(args) != 5 || args[1] != "per" || (len(args) == 5 && args[3] != "by") {
		return nil, d.Errf("usage: rate_limit <n> per <duration> [by subject|ip|tool]")
	}
	n, err := strconv.Atoi(args[0])
	if err != nil || n < 1 {
		return nil, d.Errf("rate_limit: %q is not a positive number of calls", args[0])
	}
	per, err := caddy.ParseDuration(args[2])
	if err != nil || per <= 0 {
		return nil, d.Errf("rate_limit: %q is not a positive duration", args[2])
	}
	c := &RateLimitConfig{N: n, Period: caddy.Duration(per)}
	if len(args) == 5 {
		switch args[4] {
		case "subject", "ip", "tool":
			c.By = args[4]
		default:
			return nil, d.Errf("rate_limit: by %q: want subject, ip or tool", args[4])
		}
	}
	return c, nil
}

// parseResource reads `resource <uri-or-template> { ... }`.
func parseResource(d *caddyfile.Dispenser) (ResourceConfig, error) {
	var r ResourceConfig
	if !d.NextArg() {
		return r, d.Errf("usage: resource <uri-or-uri-template> { use <connector>; statement ...; mime_type ...; description ... }")
	}
	r.URI = d.Val()
	r.at = d.File() + ":" + fmt.Sprint(d.Line())
	if d.NextArg() {
		return r, d.ArgErr()
	}
	vars, err := resources.Vars(r.URI)
	if err != nil {
		return r, d.Errf("resource %q: %v", r.URI, err)
	}
	// The block's tool-like parts are read as a tool's, by the same code.
	tc := ToolConfig{Name: r.URI}
	for nesting := d.Nesting(); d.NextBlock(nesting); {
		switch sub := d.Val(); sub {
		case "name":
			if err := oneArg(d, &r.Name); err != nil {
				return r, err
			}
		case "title":
			if err := oneArg(d, &r.Title); err != nil {
				return r, err
			}
		case "description":
			if err := oneArg(d, &r.Description); err != nil {
				return r, err
			}
		case "mime_type":
			if err := oneArg(d, &r.MimeType); err != nil {
				return r, err
			}
			if _, _, err := mime.ParseMediaType(r.MimeType); err != nil {
				return r, d.Errf("resource %q: mime_type %q: %v", r.URI, r.MimeType, err)
			}
		case "use":
			if err := oneArg(d, &r.Use); err != nil {
				return r, err
			}
		case "statement":
			r.statementAt = d.File() + ":" + fmt.Sprint(d.Line())
			if err := oneArg(d, &r.Statement); err != nil {
				return r, err
			}
		case "input":
			in, err := parseInput(d, r.URI)
			if err != nil {
				return r, err
			}
			if !slices.Contains(vars, in.Name) {
				return r, d.Errf("resource %q: input %q is not a variable of the URI template (it has: %s)", r.URI, in.Name, strings.Join(vars, ", "))
			}
			if in.Default != nil || in.Required {
				return r, d.Errf("resource %q: input %q: a template variable is always given by the URI (no required or default)", r.URI, in.Name)
			}
			if t, _ := pipeline.ParseType(in.Type); t.Kind == pipeline.KindArray || t.Kind == pipeline.KindObject {
				return r, d.Errf("resource %q: input %q: a template variable is one value (string, integer, number, boolean, datetime), not %s", r.URI, in.Name, in.Type)
			}
			for _, other := range r.Inputs {
				if other.Name == in.Name {
					return r, d.Errf("resource %q: input %q declared twice", r.URI, in.Name)
				}
			}
			r.Inputs = append(r.Inputs, in)
		case "auth":
			a, err := parseToolAuth(d, r.URI)
			if err != nil {
				return r, fmt.Errorf("resource%s", strings.TrimPrefix(err.Error(), "tool"))
			}
			r.Auth = a
		case "cache":
			if r.Cache != nil {
				return r, d.Errf("resource %q: cache declared twice", r.URI)
			}
			c, err := parseToolCache(d, fmt.Sprintf("resource %q", r.URI))
			if err != nil {
				return r, err
			}
			r.Cache = c
		case "approval":
			p, err := parseApproval(d, fmt.Sprintf("resource %q", r.URI), approvalOff)
			if err != nil {
				return r, err
			}
			r.Approval = p
		case "handler", "mappers", "script_timeout", "fetch_allow", "script_max_input", "script_max_output", "script_max_memory":
			tc.ToolScripts = r.ToolScripts
			if err := parseToolScripts(d, &tc); err != nil {
				return r, err
			}
			r.ToolScripts = tc.ToolScripts
		default:
			return r, d.Errf("resource %q: unrecognized sub-directive %q (want name, title, description, mime_type, use, statement, input, handler, mappers, auth, approval, cache)", r.URI, sub)
		}
	}
	switch {
	case r.Handler != "" && (r.Use != "" || r.Statement != ""):
		return r, d.Errf("resource %q: a resource runs either a statement ('use' + 'statement') or a 'handler', not both", r.URI)
	case r.Handler != "":
	case r.Use == "":
		return r, d.Errf("resource %q: missing 'use <connector>' + 'statement', or 'handler <file>'", r.URI)
	case strings.TrimSpace(r.Statement) == "":
		return r, d.Errf("resource %q: missing 'statement'", r.URI)
	}
	if r.Name == "" {
		r.Name = pipeline.ToolName("", r.URI)
	}
	if !pipeline.ToolNamePattern.MatchString(r.Name) {
		return r, d.Errf("resource %q: name %q must match %s", r.URI, r.Name, pipeline.ToolNamePattern)
	}
	return r, nil
}

// checkResourcesAtAdapt refuses, at the Caddyfile line, two resources with
// one URI or one name, and a statement its connector's dialect refuses.
func (h *Handler) checkResourcesAtAdapt() error {
	conns := make(map[string]ConnectorConfig, len(h.Connectors))
	for _, c := range h.Connectors {
		conns[c.Name] = c
	}
	for i, r := range h.Resources {
		for _, other := range h.Resources[:i] {
			if other.URI == r.URI {
				return fmt.Errorf("resource %q declared twice", r.URI)
			}
			if other.Name == r.Name {
				return fmt.Errorf("resources %q and %q are both named %q (set name in one of them)", other.URI, r.URI, r.Name)
			}
		}
		c, ok := conns[r.Use]
		if !ok {
			continue
		}
		if err := resourceApproval(r, c); err != nil {
			return fmt.Errorf("%v, at %s", err, r.at)
		}
		if d, ok := sqlDialect(c); ok {
			if err := sqltemplate.Check(r.Statement, d, statementRules(c, c.ReadOnly)); err != nil {
				return fmt.Errorf("resource %q: statement: %v, at %s", r.URI, err, r.statementAt)
			}
		}
	}
	return nil
}

// parseResourceOrPrompt reads `resource ...` or `prompt ...` into the handler.
func (h *Handler) parseResourceOrPrompt(d *caddyfile.Dispenser) error {
	if d.Val() == "resource" {
		r, err := parseResource(d)
		if err != nil {
			return err
		}
		for _, other := range h.Resources {
			if other.URI == r.URI {
				return d.Errf("resource %q declared twice", r.URI)
			}
			if other.Name == r.Name {
				return d.Errf("resources %q and %q are both named %q (set name in one of them)", other.URI, r.URI, r.Name)
			}
		}
		h.Resources = append(h.Resources, r)
		return nil
	}
	p, err := parsePrompt(d)
	if err != nil {
		return err
	}
	for _, other := range h.Prompts {
		if other.Name == p.Name {
			return d.Errf("prompt %q declared twice", p.Name)
		}
	}
	h.Prompts = append(h.Prompts, p)
	return nil
}

// splitSourceBlock reads the gateway's sub-directives out of the segment
// `<type> <args...> { ... }` and returns a dispenser over the rest,
// positioned for caddyfile.UnmarshalModule. Tokens keep their file and
// line, so the module's errors still point at the Caddyfile.
func splitSourceBlock(seg caddyfile.Segment, name, typ string, sel *SourceSelection) (*caddyfile.Dispenser, error) {
	mod, err := caddy.GetModule("mcp.sources." + typ)
	if err != nil {
		return nil, fmt.Errorf("source %q: unknown type %q", name, typ)
	}
	_, ownSelection := mod.New().(pipeline.SelectsTools)
	rest := make([]caddyfile.Token, 0, len(seg))
	depth := 0
	for i := 0; i < len(seg); i++ {
		tok := seg[i]
		lineStart := i == 0 || seg[i-1].Line != tok.Line || seg[i-1].File != tok.File
		if depth == 1 && lineStart && isSelectionDirective(tok.Text, ownSelection) {
			j := i + 1
			for j < len(seg) && seg[j].Line == tok.Line && seg[j].File == tok.File && seg[j].Text != "}" {
				j++
			}
			if err := sel.parse(name, tok, seg[i+1:j]); err != nil {
				return nil, err
			}
			i = j - 1
			continue
		}
		switch tok.Text {
		case "{":
			depth++
		case "}":
			depth--
		}
		rest = append(rest, tok)
	}
	nd := caddyfile.NewDispenser(rest)
	nd.Next()
	return nd, nil
}

func isSelectionDirective(text string, ownSelection bool) bool {
	switch text {
	case "prefix", "disable":
		return true
	case "include", "exclude":
		return !ownSelection
	}
	return false
}

// parse reads one sub-directive; errors name the file and line.
func (sel *SourceSelection) parse(source string, dir caddyfile.Token, args []caddyfile.Token) error {
	errf := func(format string, a ...any) error {
		return fmt.Errorf("source %q: %s, at %s:%d", source, fmt.Sprintf(format, a...), dir.File, dir.Line)
	}
	vals := make([]string, len(args))
	for i, a := range args {
		vals[i] = a.Text
	}
	switch dir.Text {
	case "prefix":
		if len(vals) != 1 {
			return errf("usage: prefix <namespace>|off")
		}
		if sel.Prefix != "" || sel.PrefixOff {
			return errf("prefix given twice")
		}
		if vals[0] == "off" {
			sel.PrefixOff = true
		} else if !sourceName.MatchString(vals[0]) {
			return errf("prefix %q: a namespace must match %s", vals[0], sourceName)
		} else {
			sel.Prefix = vals[0]
		}
	case "disable":
		if len(vals) == 0 {
			return errf("disable needs at least one tool name")
		}
		sel.Disable = append(sel.Disable, vals...)
	case "include", "exclude":
		if len(vals) == 0 {
			return errf("%s needs at least one tool name pattern (with * and ?)", dir.Text)
		}
		for _, g := range vals {
			if _, err := path.Match(g, ""); err != nil {
				return errf("%s: bad pattern %q", dir.Text, g)
			}
		}
		if dir.Text == "include" {
			sel.Include = append(sel.Include, vals...)
		} else {
			sel.Exclude = append(sel.Exclude, vals...)
		}
	}
	return nil
}

// parseSourceDirective reads `source <name> <type> ...`; the block
// belongs to the source module.
func (h *Handler) parseSourceDirective(d *caddyfile.Dispenser) error {
	if !d.NextArg() {
		return d.Errf("usage: source <name> <type> ... { ... } (types: openapi, graphql, mcp, or one added with xcaddy)")
	}
	name := d.Val()
	if !sourceName.MatchString(name) {
		return d.Errf("source %q: the name starts its tools' names, so it must match %s", name, sourceName)
	}
	if !d.NextArg() {
		return d.Errf("source %q: missing type (openapi, graphql, mcp, ...)", name)
	}
	typ := d.Val()
	for _, other := range h.Sources {
		if other.Name == name {
			return d.Errf("source %q declared twice", name)
		}
	}
	if _, err := caddy.GetModule("mcp.sources." + typ); err != nil {
		return d.Errf("source %q: unknown type %q (built in: openapi, graphql, mcp; others are added with xcaddy --with)", name, typ)
	}
	// The block's approval, task, prefix, disable (and, for a source that
	// does not select its own tools, include and exclude) lines are the
	// gateway's; the module reads the rest.
	seg, approval, task, err := takeSourceLines(d.NextSegment(), name)
	if err != nil {
		return err
	}
	seg, gov, err := takeSourceGovernance(seg, name)
	if err != nil {
		return err
	}
	var sel SourceSelection
	block, err := splitSourceBlock(seg, name, typ, &sel)
	if err != nil {
		return err
	}
	unm, err := caddyfile.UnmarshalModule(block, "mcp.sources."+typ)
	if err != nil {
		return err
	}
	var warnings []caddyconfig.Warning
	h.Sources = append(h.Sources, SourceConfig{Name: name, SourceRaw: caddyconfig.JSONModuleObject(unm, "source", typ, &warnings), Approval: approval, Task: task, SourceSelection: sel,
		OverridesRaw: gov.overrides, Pin: gov.pin})
	return nil
}

// overrideDirectives are the lines of a source's block that override its
// tools (docs/governance.md, Overrides), whatever the source's type.
var overrideDirectives = map[string]bool{"rename": true, "describe": true, "hide": true, "annotate": true}

// sourceGovernance is what takeSourceGovernance reads of a source's block.
type sourceGovernance struct {
	overrides json.RawMessage // the mcp.overrides.tools module; nil: none
	pin       *pin.Config     // nil: not pinned
}

// takeSourceGovernance removes the override lines (rename, describe,
// hide with its block, annotate) and the pin lines from the block of a
// source segment (which starts at the source's type): the gateway applies
// them to every source's tools, so the source module never sees them.
// The override lines go, in their order and with their file and line, to
// the guest module mcp.overrides.tools.
//
//	pin <file>        hold the tools to the definitions in file
//	pin new allow     serve tools the file does not name yet
func takeSourceGovernance(seg caddyfile.Segment, source string) (caddyfile.Segment, sourceGovernance, error) {
	owner := fmt.Sprintf("source %q", source)
	var gov sourceGovernance
	var overrides caddyfile.Segment
	var allowNew *caddyfile.Dispenser // the pin new allow line, for its error
	rest := make(caddyfile.Segment, 0, len(seg))
	nesting := 0
	for i := 0; i < len(seg); i++ {
		t := seg[i]
		if nesting == 1 && startsLine(seg, i) && !t.Quoted() && (overrideDirectives[t.Text] || t.Text == "pin") {
			end := lineEnd(seg, i)
			if t.Text != "pin" {
				overrides = append(overrides, seg[i:end]...)
				i = end - 1
				continue
			}
			line := caddyfile.NewDispenser(seg[i:end])
			line.Next()
			args := line.RemainingArgs()
			switch {
			case slices.ContainsFunc(seg[i:end], func(t caddyfile.Token) bool { return t.Text == "{" && !t.Quoted() }):
				return nil, gov, line.Errf("%s: pin takes no block", owner)
			case len(args) == 2 && args[0] == "new" && args[1] == "allow":
				if allowNew != nil {
					return nil, gov, line.Errf("%s: pin new allow given twice", owner)
				}
				allowNew = line
			case len(args) == 1 && args[0] != "new":
				if gov.pin != nil {
					return nil, gov, line.Errf("%s: pin <file> given twice", owner)
				}
				gov.pin = &pin.Config{File: args[0]}
			default:
				return nil, gov, line.Errf("%s: usage: pin <file>, or pin new allow", owner)
			}
			i = end - 1
			continue
		}
		nesting += braceStep(t)
		rest = append(rest, t)
	}
	if allowNew != nil {
		if gov.pin == nil {
			return nil, gov, allowNew.Errf("%s: pin new allow needs pin <file>", owner)
		}
		gov.pin.AllowNew = true
	}
	if len(overrides) > 0 {
		raw, err := unmarshalOverrides(overrides)
		if err != nil {
			return nil, gov, fmt.Errorf("%s: %v", owner, err)
		}
		gov.overrides = raw
	}
	return rest, gov, nil
}

// lineEnd is the index after the line that starts at seg[i], its block
// included when the line ends with "{".
func lineEnd(seg caddyfile.Segment, i int) int {
	end := i + 1
	for end < len(seg) && !startsLine(seg, end) {
		end++
	}
	if last := seg[end-1]; last.Text != "{" || last.Quoted() {
		return end
	}
	for depth := 1; end < len(seg) && depth > 0; end++ {
		depth += braceStep(seg[end])
	}
	return end
}

// braceStep is how a token changes a segment's block depth: +1 for an
// unquoted "{", -1 for an unquoted "}", else 0.
func braceStep(t caddyfile.Token) int {
	if t.Quoted() {
		return 0
	}
	switch t.Text {
	case "{":
		return 1
	case "}":
		return -1
	}
	return 0
}

// unmarshalOverrides hands the override lines to the guest module
// mcp.overrides.tools; its errors name the Caddyfile's file and line.
func unmarshalOverrides(lines caddyfile.Segment) (json.RawMessage, error) {
	const id = "mcp.overrides.tools"
	mod, err := caddy.GetModule(id)
	if err != nil {
		line := caddyfile.NewDispenser(lines[:1])
		line.Next()
		return nil, line.Errf("%s: this build has no module %s", lines[0].Text, id)
	}
	unm, ok := mod.New().(caddyfile.Unmarshaler)
	if !ok {
		return nil, fmt.Errorf("module %s does not read a Caddyfile", id)
	}
	if err := unm.UnmarshalCaddyfile(caddyfile.NewDispenser(lines)); err != nil {
		return nil, err
	}
	var warnings []caddyconfig.Warning
	return caddyconfig.JSONModuleObject(unm, "overrides", "tools", &warnings), nil
}

// Interface guard.
var _ caddyfile.Unmarshaler = (*Handler)(nil)

// parseSQLTools reads `sql_tools <connector> { ... }` (SQLToolsConfig).
func parseSQLTools(d *caddyfile.Dispenser) (SQLToolsConfig, error) {
	var c SQLToolsConfig
	if !d.NextArg() {
		return c, d.Errf("usage: sql_tools <connector> { ... }")
	}
	c.Connector = d.Val()
	if d.NextArg() {
		return c, d.Errf("sql_tools %s: one connector, got another: %q (settings go in the block)", c.Connector, d.Val())
	}
	owner := "sql_tools " + c.Connector
	seen := map[string]bool{}
	for nesting := d.Nesting(); d.NextBlock(nesting); {
		sub := d.Val()
		if seen[sub] && sub != "requires" && sub != "include" && sub != "exclude" {
			return c, d.Errf("%s: %s declared twice", owner, sub)
		}
		seen[sub] = true
		switch sub {
		case "prefix":
			if err := oneArg(d, &c.Prefix); err != nil {
				return c, err
			}
			if !pipeline.ToolNamePattern.MatchString(c.Prefix + "_describe_table") {
				return c, d.Errf("%s: prefix %q makes tool names that do not match %s", owner, c.Prefix, pipeline.ToolNamePattern)
			}
		case "include", "exclude":
			patterns := d.RemainingArgs()
			if len(patterns) == 0 {
				return c, d.Errf("%s: %s needs at least one table pattern (schema.table or table; * and ? match)", owner, sub)
			}
			for _, p := range patterns {
				if _, err := path.Match(p, ""); err != nil {
					return c, d.Errf("%s: %s: %q is not a pattern", owner, sub, p)
				}
			}
			if sub == "include" {
				c.Include = append(c.Include, patterns...)
			} else {
				c.Exclude = append(c.Exclude, patterns...)
			}
		case "max_rows":
			n, err := wholeArg(d, owner+": ")
			if err != nil {
				return c, err
			}
			c.MaxRows = n
		case "max_result_size":
			var s string
			if err := oneArg(d, &s); err != nil {
				return c, err
			}
			n, err := pipeline.ParseSize(s)
			if err != nil {
				return c, d.Errf("%s: max_result_size: %v", owner, err)
			}
			c.MaxResultSize = n
		case "statement_timeout":
			dur, err := durationArg(d)
			if err != nil {
				return c, err
			}
			c.StatementTimeout = caddy.Duration(dur)
		case "max_cost", "max_rows_estimate":
			var s string
			if err := oneArg(d, &s); err != nil {
				return c, err
			}
			f, err := strconv.ParseFloat(s, 64)
			if err != nil || !(f > 0) || math.IsInf(f, 0) {
				return c, d.Errf("%s: %s must be a positive number, got %q", owner, sub, s)
			}
			if sub == "max_cost" {
				c.MaxCost = f
			} else {
				c.MaxRowsEstimate = f
			}
		case "role":
			if err := oneArg(d, &c.Role); err != nil {
				return c, err
			}
		case "interceptor":
			if err := oneArg(d, &c.Interceptor); err != nil {
				return c, err
			}
		case "explain":
			if d.NextArg() {
				return c, d.Errf("%s: explain takes no value", owner)
			}
			c.Explain = true
		case "auth":
			p := new(AuthPolicyConfig)
			if err := parsePolicy(d, p, nil); err != nil {
				return c, fmt.Errorf("%s: %w", owner, err)
			}
			c.Auth = p
		case "approval":
			p, err := parseApproval(d, owner, approvalRequired, approvalOff)
			if err != nil {
				return c, err
			}
			c.Approval = p
		case "rate_limit":
			rl, err := parseRateLimit(d)
			if err != nil {
				return c, err
			}
			c.RateLimit = rl
		case "max_concurrent":
			n, err := wholeArg(d, owner+": ")
			if err != nil {
				return c, err
			}
			c.MaxConcurrent = n
		case "requires":
			r, err := parseRequires(d, owner)
			if err != nil {
				return c, err
			}
			c.Requires = append(c.Requires, r)
		default:
			return c, d.Errf("%s: unrecognized sub-directive %q", owner, sub)
		}
	}
	return c, nil
}

// parseRequires reads `requires <tool> [within <n> calls | within
// <duration>]` in the block of owner.
func parseRequires(d *caddyfile.Dispenser, owner string) (RequiresConfig, error) {
	const usage = "requires <tool> [within <n> calls | within <duration>]"
	args := d.RemainingArgs()
	var r RequiresConfig
	switch {
	case len(args) == 1:
	case len(args) == 3 && args[1] == "within":
		dur, err := caddy.ParseDuration(args[2])
		if err != nil || dur <= 0 {
			return r, d.Errf("%s: requires %s within %q: not a positive duration (or write within <n> calls)", owner, args[0], args[2])
		}
		r.Within = caddy.Duration(dur)
	case len(args) == 4 && args[1] == "within" && (args[3] == "calls" || args[3] == "call"):
		n, err := strconv.Atoi(args[2])
		if err != nil || n < 1 {
			return r, d.Errf("%s: requires %s within %q calls: not a positive whole number", owner, args[0], args[2])
		}
		r.WithinCalls = n
	default:
		return r, d.Errf("%s: usage: %s", owner, usage)
	}
	r.Tool = args[0]
	if !pipeline.ToolNamePattern.MatchString(r.Tool) {
		return r, d.Errf("%s: requires %q: not a tool name", owner, r.Tool)
	}
	return r, nil
}

// parseAfter reads `after <tool> deny <tool...>`; names or patterns.
func parseAfter(d *caddyfile.Dispenser) (AfterConfig, error) {
	args := d.RemainingArgs()
	if len(args) < 3 || args[1] != "deny" {
		return AfterConfig{}, d.Errf("usage: after <tool> deny <tool...> (names or patterns such as send_*)")
	}
	a := AfterConfig{Tool: args[0], Deny: args[2:]}
	for _, p := range args {
		if _, err := path.Match(p, ""); err != nil {
			return a, d.Errf("after %s: %q is not a tool name or pattern", a.Tool, p)
		}
	}
	if d.NextBlock(d.Nesting()) {
		return a, d.Errf("after takes no block")
	}
	return a, nil
}

// parseGuardrails reads `guardrails { store memory | store redis <url>;
// ttl <duration> }`.
func parseGuardrails(d *caddyfile.Dispenser, h *Handler) error {
	if h.Guardrails != nil {
		return d.Errf("guardrails declared twice")
	}
	if d.NextArg() {
		return d.Errf("guardrails takes a block, not %q", d.Val())
	}
	g := new(GuardrailsConfig)
	for nesting := d.Nesting(); d.NextBlock(nesting); {
		switch sub := d.Val(); sub {
		case "store":
			args := d.RemainingArgs()
			switch {
			case len(args) == 1 && args[0] == "memory":
				g.Redis = ""
			case len(args) == 2 && args[0] == "redis":
				g.Redis = args[1]
			default:
				return d.Errf("guardrails: usage: store memory | store redis <redis://...>")
			}
		case "ttl":
			dur, err := durationArg(d)
			if err != nil {
				return err
			}
			g.TTL = caddy.Duration(dur)
		default:
			return d.Errf("guardrails: unrecognized sub-directive %q", sub)
		}
	}
	h.Guardrails = g
	return nil
}
