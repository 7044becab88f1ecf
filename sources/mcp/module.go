// Package mcp is the guest module mcp.sources.mcp: an upstream MCP server,
// started as a child process over stdio or reached over HTTP, whose tools
// the gateway serves in the source's namespace (README, Sources: MCP
// servers).
package mcp

import (
	"cmp"
	"encoding/json"
	"fmt"
	"net/url"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/caddyserver/caddy/v2"
	"github.com/caddyserver/caddy/v2/caddyconfig/caddyfile"
	"go.uber.org/zap"

	"github.com/edgemcp/edgemcp/pipeline"
	"github.com/edgemcp/edgemcp/sources/upstream"
)

func init() {
	caddy.RegisterModule(Source{})
}

// Transports a source may name.
const (
	TransportStdio      = "stdio"
	TransportStreamable = "streamable"
	TransportSSE        = "sse"
	TransportAuto       = "auto"
)

// Session modes.
const (
	SessionShared    = "shared"
	SessionPerCaller = "per_caller"
)

// Restart backoff of a stdio child that exited (README, Sources: MCP
// servers): restart_backoff, doubled after each quick crash up to
// maxRestartBackoff.
const (
	defaultRestartBackoff = time.Second
	maxRestartBackoff     = 30 * time.Second
)

// defaultTimeout bounds a request to the server (a tool call, a resource
// read, a prompt get) when the source sets no timeout: as long as common
// MCP clients wait for an answer (the TypeScript SDK's default).
const defaultTimeout = 60 * time.Second

// Source is `source <name> mcp stdio <command> [args...] { ... }` or
// `source <name> mcp <url> { ... }`.
type Source struct {
	// Transport is stdio, streamable, sse or auto (streamable, falling
	// back to SSE when the server does not speak it). Empty: stdio when
	// Command is set, else auto.
	Transport string `json:"transport,omitempty"`

	// Command and Args start the child of a stdio source.
	Command string   `json:"command,omitempty"`
	Args    []string `json:"args,omitempty"`
	// Env is set in the child's environment. The child takes nothing
	// else from the gateway's environment but what programs need to run
	// (PATH, HOME, the locale; childEnv) and what InheritEnv names.
	Env map[string]string `json:"env,omitempty"`
	// InheritEnv names more variables the child takes from the gateway's
	// environment (NAME, or PREFIX* for every name with that prefix).
	InheritEnv []string `json:"inherit_env,omitempty"`
	// Dir is the child's working directory.
	Dir string `json:"cwd,omitempty"`
	// RestartBackoff is the first wait before a crashed child is started
	// again (default 1s, doubled up to 30s while it keeps crashing).
	RestartBackoff caddy.Duration `json:"restart_backoff,omitempty"`

	// URL is the endpoint of an HTTP source.
	URL string `json:"url,omitempty"`

	// Required fails the load when the server cannot be reached.
	// Otherwise the source serves no tools until a background retry
	// connects, and then brings them (pipeline.ChangeNotifier).
	Required bool `json:"required,omitempty"`
	// Set fixes tool arguments by name: a literal, or {{ auth.subject }} /
	// {{ auth.claims.NAME }} of the verified caller. A fixed argument leaves
	// the tool's schema and no caller can set it.
	Set map[string]string `json:"set,omitempty"`

	// Session is shared (one upstream session serves every caller) or
	// per_caller: one upstream session per verified caller, for HTTP
	// servers that keep state per user or take the caller's own
	// credential (callers). Credentials passthrough and per_caller
	// need it. Empty: per_caller for an HTTP server of an endpoint with
	// default_auth (one caller's upstream state never shows to another),
	// else shared. A stdio source is always shared: one child process
	// serves every caller.
	Session string `json:"session,omitempty"`
	// MaxCallerSessions bounds the per-caller sessions (default 1000):
	// a new caller beyond it closes the one unused longest.
	MaxCallerSessions int `json:"max_caller_sessions,omitempty"`
	// CallerSessionIdle closes a caller's session after this long
	// without a call (default 10m).
	CallerSessionIdle caddy.Duration `json:"caller_session_idle,omitempty"`

	upstream.Config

	key  string
	conn *conn
	log  *zap.Logger
	seen *atomic.Int64 // the version of the tool list Tools returned last
}

var (
	_ caddy.Provisioner       = (*Source)(nil)
	_ caddy.CleanerUpper      = (*Source)(nil)
	_ caddyfile.Unmarshaler   = (*Source)(nil)
	_ pipeline.Source         = (*Source)(nil)
	_ pipeline.ChangeNotifier = (*Source)(nil)
	_ pipeline.StateSharer    = (*Source)(nil)
)

// CaddyModule returns the Caddy module information.
func (Source) CaddyModule() caddy.ModuleInfo {
	return caddy.ModuleInfo{ID: "mcp.sources.mcp", New: func() caddy.Module { return new(Source) }}
}

// Provision connects to the server, or takes the connection an earlier
// config with the same source settings holds: an unchanged source keeps
// its child and session across reloads.
func (s *Source) Provision(ctx caddy.Context) error {
	s.log = ctx.Logger()
	s.seen = new(atomic.Int64)
	if s.Session == "" && s.Command == "" && pipeline.CallersVerified(ctx) {
		s.Session = SessionPerCaller
	}
	set, err := s.settings(ctx, caddy.NewReplacer())
	if err != nil {
		return err
	}
	key, err := json.Marshal(s)
	if err != nil {
		return err
	}
	s.key = string(key)
	val, _, err := pool.LoadOrNew(s.key, func() (caddy.Destructor, error) {
		return open(set, s.log)
	})
	if err != nil {
		return fmt.Errorf("mcp %s: %v", set.describe(), err)
	}
	s.conn = val.(*conn)
	return nil
}

// Cleanup lets go of the connection; the last config to hold it stops it
// (the child's whole process group is ended).
func (s *Source) Cleanup() error {
	if s.conn != nil {
		s.conn.unsubscribe(s)
	}
	if s.key != "" {
		_, err := pool.Delete(s.key)
		return err
	}
	return nil
}

// OnChange implements pipeline.ChangeNotifier: the server's tools/list_changed,
// a reconnect after the server was down and a restarted child bring the new
// tool list without a reload.
func (s *Source) OnChange(changed func()) {
	if s.conn == nil {
		return
	}
	s.conn.subscribe(s, changed)
	// Tools that arrived between the gateway's Tools and this call would
	// otherwise wait for the next change.
	if s.conn.version() != s.seen.Load() {
		go changed()
	}
}

// StateSharing implements pipeline.StateSharer.
func (s *Source) StateSharing(callersVerified bool) string {
	switch {
	case s.Command != "":
		return "shared by every caller: one child process serves them all"
	case s.Session == SessionPerCaller || s.Session == "" && callersVerified:
		return "one upstream session per caller"
	}
	return "shared by every caller: one upstream session serves them all"
}

// Tools implements pipeline.Source: the server's tools as it listed them
// last, none while it has not been reached.
func (s *Source) Tools(namespace string) ([]*pipeline.Tool, error) {
	fixed, err := upstream.ParseFixedArgs(s.Set)
	if err != nil {
		return nil, fmt.Errorf("mcp %s: %v", s.conn.set.describe(), err)
	}
	listed, version := s.conn.listed()
	s.seen.Store(version)
	tools := make([]*pipeline.Tool, 0, len(listed))
	seen := map[string]string{}
	for _, lt := range listed {
		t, err := fixed.ApplyEverywhere(lt.tool(namespace, s.conn))
		if err != nil {
			return nil, err
		}
		if other, dup := seen[t.Name]; dup {
			return nil, fmt.Errorf("mcp %s: tools %q and %q are both named %q in namespace %q", s.conn.set.describe(), other, lt.Name, t.Name, namespace)
		}
		seen[t.Name] = lt.Name
		tools = append(tools, t)
	}
	return tools, nil
}

// settings is a Source with placeholders expanded and defaults applied.
type settings struct {
	transport string
	command   string
	args      []string
	env       []string
	dir       string
	backoff   time.Duration
	url       string
	required  bool
	built     upstream.Built // Timeout is set (defaultTimeout when none is)
	// maxResponse bounds each message of the server (max_response_size).
	maxResponse int64

	perCaller  bool // session per_caller
	maxCallers int
	callerIdle time.Duration
}

func (set *settings) describe() string {
	if set.transport == TransportStdio {
		return set.command
	}
	return set.url
}

func (s *Source) settings(ctx caddy.Context, repl *caddy.Replacer) (*settings, error) {
	x := func(v string) string { return repl.ReplaceKnown(v, "") }
	set := &settings{transport: s.Transport, required: s.Required, backoff: time.Duration(s.RestartBackoff)}
	if set.backoff <= 0 {
		set.backoff = defaultRestartBackoff
	}
	if set.transport == "" {
		set.transport = TransportAuto
		if s.Command != "" {
			set.transport = TransportStdio
		}
	}
	switch s.Session {
	case "", SessionShared:
		if s.MaxCallerSessions != 0 || s.CallerSessionIdle != 0 {
			return nil, fmt.Errorf("mcp: max_caller_sessions and caller_session_idle need session per_caller")
		}
	case SessionPerCaller:
		if s.MaxCallerSessions < 0 || s.CallerSessionIdle < 0 {
			return nil, fmt.Errorf("mcp: max_caller_sessions and caller_session_idle must be positive")
		}
		set.perCaller = true
		set.maxCallers = cmp.Or(s.MaxCallerSessions, defaultMaxCallerSessions)
		set.callerIdle = cmp.Or(time.Duration(s.CallerSessionIdle), defaultCallerIdle)
	default:
		return nil, fmt.Errorf("mcp: session %q: want shared or per_caller", s.Session)
	}
	switch set.transport {
	case TransportStdio:
		if set.perCaller {
			return nil, fmt.Errorf("mcp %s: session per_caller is for HTTP servers (a stdio source runs one child for every caller)", s.Command)
		}
		if s.Command == "" || s.URL != "" {
			return nil, fmt.Errorf("mcp: a stdio source needs a command and no url")
		}
		if len(s.Config.Credentials) > 0 || len(s.Config.Headers) > 0 {
			return nil, fmt.Errorf("mcp %s: credential and header are for HTTP servers; give a stdio child its secrets with env", s.Command)
		}
		set.command = x(s.Command)
		for _, a := range s.Args {
			set.args = append(set.args, x(a))
		}
		env := make([]string, 0, len(s.Env))
		for k, v := range s.Env {
			env = append(env, k+"="+x(v))
		}
		slices.Sort(env)
		for _, n := range s.InheritEnv {
			if err := checkEnvName(n); err != nil {
				return nil, fmt.Errorf("mcp %s: %v", s.Command, err)
			}
		}
		set.env = childEnv(os.Environ(), s.InheritEnv, env)
		set.dir = x(s.Dir)
		set.built.Timeout = time.Duration(s.Timeout)
	case TransportStreamable, TransportSSE, TransportAuto:
		if s.Command != "" || len(s.Args) > 0 || len(s.Env) > 0 || len(s.InheritEnv) > 0 || s.Dir != "" {
			return nil, fmt.Errorf("mcp: command, env, inherit_env and cwd are for stdio servers")
		}
		raw := x(s.URL)
		u, err := url.Parse(raw)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return nil, fmt.Errorf("mcp: url %q: want an http or https URL", raw)
		}
		if u.User != nil {
			return nil, fmt.Errorf("mcp: url %s: put credentials in a credential, not in the URL", u.Redacted())
		}
		set.url = u.String()
		built, err := s.Config.Build(ctx, repl)
		if err != nil {
			return nil, fmt.Errorf("mcp %s: %v", set.url, err)
		}
		// A shared session serves every caller: a credential that
		// depends on the caller has no caller to take its secret from.
		for _, c := range built.Credentials {
			if _, ok := c.(upstream.CallerDependent); ok && !set.perCaller {
				built.Close()
				return nil, fmt.Errorf("mcp %s: credentials passthrough, per_caller and token_exchange take the caller's secret: add `session per_caller` (one upstream session per caller)", set.url)
			}
		}
		set.built = built
	default:
		return nil, fmt.Errorf("mcp: transport %q: want streamable, sse or auto", set.transport)
	}
	set.built.Timeout = cmp.Or(set.built.Timeout, defaultTimeout)
	if s.MaxResponseSize < 0 {
		return nil, fmt.Errorf("mcp %s: max_response_size must be positive", set.describe())
	}
	set.maxResponse = cmp.Or(s.MaxResponseSize, defaultMaxResponseSize)
	return set, nil
}

// UnmarshalCaddyfile reads `mcp stdio <command> [args...] { ... }` or
// `mcp <url> { ... }` (the source's name has been read by the mcp
// directive).
func (s *Source) UnmarshalCaddyfile(d *caddyfile.Dispenser) error {
	d.Next() // "mcp"
	args := d.RemainingArgs()
	switch {
	case len(args) >= 2 && args[0] == TransportStdio:
		s.Transport, s.Command, s.Args = TransportStdio, args[1], args[2:]
	case len(args) == 1 && args[0] != TransportStdio:
		s.URL = args[0]
		if u, err := url.Parse(s.URL); err != nil || (u.Scheme != "http" && u.Scheme != "https" && !strings.HasPrefix(s.URL, "{")) {
			return d.Errf("mcp source: %q is not an http or https URL (a child process is `mcp stdio <command> [args...]`)", s.URL)
		}
	default:
		return d.Errf("usage: source <name> mcp stdio <command> [args...] { ... } | source <name> mcp <url> { ... }")
	}
	stdio := s.Transport == TransportStdio
	// Settings that need session per_caller, which may come later in the
	// block: the first one's error, at its line.
	var needsPerCaller error
	for d.NextBlock(0) {
		sub := d.Val()
		if sub == "timeout" || sub == "max_response_size" || (!stdio && (sub == "credential" || sub == "header")) {
			if _, err := s.Config.UnmarshalSubdirective(d); err != nil {
				return err
			}
			// A credential taken from the caller needs an upstream
			// session per caller.
			if n := len(s.Config.Credentials); sub == "credential" && n > 0 && needsPerCaller == nil {
				if cc := s.Config.Credentials[n-1]; cc.FromCaller() {
					needsPerCaller = d.Errf("mcp source: credential %s takes the caller's secret: add `session per_caller` (one upstream session per caller; a shared session serves every caller)", cc.Kind)
				}
			}
			continue
		}
		if err := s.unmarshalSession(d, sub, stdio, &needsPerCaller); err != nil {
			return err
		}
		switch sub {
		case "session", "max_caller_sessions", "caller_session_idle": // read above
		case "required":
			if d.NextArg() {
				return d.ArgErr()
			}
			s.Required = true
		case "set":
			if err := upstream.UnmarshalSet(d, &s.Set); err != nil {
				return err
			}
		case "env":
			if !stdio {
				return d.Errf("mcp source: env is for stdio servers")
			}
			kv := d.RemainingArgs()
			if len(kv) != 2 || kv[0] == "" || strings.Contains(kv[0], "=") {
				return d.Errf("env needs a variable name and a value")
			}
			if s.Env == nil {
				s.Env = map[string]string{}
			}
			s.Env[kv[0]] = kv[1]
		case "inherit_env":
			if !stdio {
				return d.Errf("mcp source: inherit_env is for stdio servers")
			}
			names := d.RemainingArgs()
			if len(names) == 0 {
				return d.Errf("inherit_env needs at least one variable name")
			}
			for _, n := range names {
				if err := checkEnvName(n); err != nil {
					return d.Errf("%v", err)
				}
			}
			s.InheritEnv = append(s.InheritEnv, names...)
		case "cwd":
			if !stdio {
				return d.Errf("mcp source: cwd is for stdio servers")
			}
			if !d.AllArgs(&s.Dir) {
				return d.Errf("cwd needs one directory")
			}
		case "restart_backoff":
			if !stdio {
				return d.Errf("mcp source: restart_backoff is for stdio servers")
			}
			var v string
			if !d.AllArgs(&v) {
				return d.ArgErr()
			}
			dur, err := caddy.ParseDuration(v)
			if err != nil || dur <= 0 {
				return d.Errf("restart_backoff: %q is not a positive duration", v)
			}
			s.RestartBackoff = caddy.Duration(dur)
		case "transport":
			if stdio {
				return d.Errf("mcp source: transport is for HTTP servers (stdio is given on the source line)")
			}
			var v string
			if !d.AllArgs(&v) || (v != TransportStreamable && v != TransportSSE && v != TransportAuto) {
				return d.Errf("transport: want streamable, sse or auto")
			}
			s.Transport = v
		case "credential", "header":
			return d.Errf("mcp stdio source: %s is for HTTP servers; give a child its secrets with env", sub)
		default:
			if stdio {
				return d.Errf("mcp stdio source: unrecognized sub-directive %q (want env, inherit_env, cwd, restart_backoff, timeout, max_response_size, required, set, session)", sub)
			}
			return d.Errf("mcp source: unrecognized sub-directive %q (want transport, credential, header, timeout, max_response_size, required, set, session, max_caller_sessions, caller_session_idle)", sub)
		}
	}
	if s.Session != SessionPerCaller && needsPerCaller != nil {
		return needsPerCaller
	}
	return nil
}

// unmarshalSession reads `session shared|per_caller`,
// `max_caller_sessions <n>` and `caller_session_idle <duration>`; the
// error of a setting that needs per_caller is kept in needsPerCaller.
func (s *Source) unmarshalSession(d *caddyfile.Dispenser, sub string, stdio bool, needsPerCaller *error) error {
	switch sub {
	case "session":
		var v string
		if !d.AllArgs(&v) || (v != SessionShared && v != SessionPerCaller) {
			return d.Errf("session: want shared or per_caller")
		}
		if v == SessionPerCaller && stdio {
			return d.Errf("mcp stdio source: session per_caller is for HTTP servers (a stdio source runs one child for every caller)")
		}
		s.Session = v
	case "max_caller_sessions":
		var v string
		if !d.AllArgs(&v) {
			return d.ArgErr()
		}
		n, err := strconv.Atoi(v)
		if err != nil || n <= 0 {
			return d.Errf("max_caller_sessions: %q is not a positive whole number", v)
		}
		s.MaxCallerSessions = n
	case "caller_session_idle":
		var v string
		if !d.AllArgs(&v) {
			return d.ArgErr()
		}
		dur, err := caddy.ParseDuration(v)
		if err != nil || dur <= 0 {
			return d.Errf("caller_session_idle: %q is not a positive duration", v)
		}
		s.CallerSessionIdle = caddy.Duration(dur)
	default:
		return nil
	}
	if sub != "session" && *needsPerCaller == nil {
		*needsPerCaller = d.Errf("mcp source: %s is for session per_caller", sub)
	}
	return nil
}
