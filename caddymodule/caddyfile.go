package caddymodule

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/caddyserver/caddy/v2"
	"github.com/caddyserver/caddy/v2/caddyconfig"
	"github.com/caddyserver/caddy/v2/caddyconfig/caddyfile"
	"github.com/caddyserver/caddy/v2/caddyconfig/httpcaddyfile"
	"github.com/caddyserver/caddy/v2/modules/caddyhttp"
	"github.com/dustin/go-humanize"

	"github.com/edgemcp/edgemcp/internal/caddyargs"
	"github.com/edgemcp/edgemcp/pipeline"
)

func init() {
	httpcaddyfile.RegisterDirective("mcp", parseMCPDirective) // caddyfile_auth.go
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
				if err := checkOrigin(o); err != nil {
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
				if err := checkHostName(host); err != nil {
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
				if !strings.Contains(k, "{") && len(k) < minSessionKeyLen {
					return d.Errf("session_key: key %d is %d bytes, want at least %d", i+1, len(k), minSessionKeyLen)
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
		default:
			return d.Errf("unrecognized mcp sub-directive %q", dir)
		}
	}
	if err := h.checkScriptTools(); err != nil {
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
}

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
				if tok.Text != "seed" {
					atEnd = e
				} else {
					return nil, nil, at.Errf("%v", e)
				}
			}
		}
		both := depth == 0 || (depth == 1 && tok.Text == "}" && !tok.Quoted())
		if !tok.Quoted() {
			switch tok.Text {
			case "{":
				depth++
			case "}":
				depth--
			}
		}
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
			c, err := parseToolCache(d, t.Name)
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

// Interface guard.
var _ caddyfile.Unmarshaler = (*Handler)(nil)
