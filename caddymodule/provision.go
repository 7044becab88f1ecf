package caddymodule

import (
	"fmt"
	"os"
	"strings"

	"github.com/caddyserver/caddy/v2"
	"github.com/mark3labs/mcp-go/server"
	"go.uber.org/zap"

	"github.com/edgemcp/edgemcp/caddymodule/session"
	"github.com/edgemcp/edgemcp/caddymodule/sourcetools"
	"github.com/edgemcp/edgemcp/pipeline"
	"github.com/edgemcp/edgemcp/pipeline/script"
)

// provisioning is what the steps of provision hand each other.
type provisioning struct {
	ctx     caddy.Context
	repl    *caddy.Replacer
	scripts *script.Loader          // shared by the tools and the resources
	conns   map[string]connectorRef // the connectors, by name
	tools   []*pipeline.Tool        // the declared tools and the sql_tools
	configs map[string]ToolConfig   // what configured each of tools, by name
	sourced []*pipeline.Tool        // the sources' tools
	held    []sourcetools.Held      // the sources' tools their pins hold back
	reg     *registry               // the first version of the tools
}

// provision is Provision's steps, in order: each uses what the ones
// before it made.
func (h *Handler) provision(ctx caddy.Context) error {
	p := &provisioning{ctx: ctx, repl: caddy.NewReplacer(), scripts: script.NewLoader()}
	for _, step := range []func(*provisioning) error{
		h.provisionDefaults,
		h.provisionConnectors,
		h.provisionAccess,
		h.provisionTools,
		h.provisionSQLTools,
		h.provisionResourcesAndPrompts,
		h.provisionSourceTools,
		h.provisionLimits,
		h.provisionTasks,
		h.provisionGuardrails,
		h.provisionRegistry,
		h.provisionServer,
		h.provisionToolsets,
		h.provisionSessionLimit,
	} {
		if err := step(p); err != nil {
			return err
		}
	}
	h.logger.Debug("mcp endpoint provisioned", zap.Int("tools", len(p.reg.engine.Tools())), zap.Int("connectors", len(p.conns)))
	return nil
}

// provisionDefaults fills in the settings left out.
func (h *Handler) provisionDefaults(*provisioning) error {
	if h.ServerName == "" {
		h.ServerName = defaultServerName
	}
	if h.ServerVersion == "" {
		h.ServerVersion = Version
	}
	if h.ErrorMode == "" {
		h.ErrorMode = errorModeJSONRPC
	}
	if h.ErrorDetail == "" {
		h.ErrorDetail = errorDetailSafe
	}
	if h.MaxConcurrent > 0 {
		h.inFlight = session.NewInFlight(h.MaxConcurrent)
	}
	if h.MaxBodySize == 0 {
		h.MaxBodySize = defaultMaxBodySize
	}
	return nil
}

// provisionConnectors loads each connector's driver module and opens (or
// reuses) its pool; the tools find them by name.
func (h *Handler) provisionConnectors(p *provisioning) error {
	p.conns = make(map[string]connectorRef, len(h.Connectors))
	h.connTypes = make(map[string]string, len(h.Connectors))
	for i := range h.Connectors {
		c := &h.Connectors[i]
		if _, dup := p.conns[c.Name]; dup {
			return fmt.Errorf("connector %q declared twice", c.Name)
		}
		if err := loadDriver(p.ctx, c); err != nil {
			return err
		}
		ref, err := h.openConnector(*c, p.repl)
		if err != nil {
			return err
		}
		p.conns[c.Name] = ref
		h.connTypes[c.Name] = c.Type
	}
	return nil
}

// openConnector opens (or reuses) the pool of c, placeholders expanded,
// and keeps its key for Cleanup.
func (h *Handler) openConnector(c ConnectorConfig, repl *caddy.Replacer) (connectorRef, error) {
	expanded := c
	expanded.DSN = repl.ReplaceKnown(c.DSN, "")
	if strings.TrimSpace(expanded.DSN) == "" {
		return connectorRef{}, fmt.Errorf("connector %q: empty dsn (is the environment variable set?)", c.Name)
	}
	if ref, key, ok, err := acquireCommandConnector(expanded); ok {
		if err != nil {
			return connectorRef{}, err
		}
		h.poolKeys = append(h.poolKeys, key)
		ref.config = c
		return ref, nil
	}
	conn, key, err := acquireConnector(expanded)
	if err != nil {
		return connectorRef{}, err
	}
	h.poolKeys = append(h.poolKeys, key)
	return connectorRef{config: c, conn: conn}, nil
}

// provisionAccess sets up what decides who may call: the Host/Origin
// gate, the session keys, the approver and the auth providers.
func (h *Handler) provisionAccess(p *provisioning) error {
	if err := h.HostGate.provision(p.ctx); err != nil {
		return err
	}
	h.errorRoutes = hasErrorRoutes(p.ctx)
	if err := h.provisionSessionKeys(p.repl); err != nil {
		return err
	}
	if err := h.provisionApprover(p.ctx, p.repl); err != nil {
		return err
	}
	return h.provisionAuth(p.ctx)
}

// provisionTools compiles the declared tools, each with its auth, scripts
// and approval policy.
func (h *Handler) provisionTools(p *provisioning) error {
	p.tools = make([]*pipeline.Tool, 0, len(h.Tools))
	p.configs = make(map[string]ToolConfig, len(h.Tools))
	for _, tc := range h.Tools {
		t, err := buildTool(tc, p.conns, p.repl, os.LookupEnv)
		if err != nil {
			return err
		}
		if t.Auth, err = h.toolAuth(tc); err != nil {
			return err
		}
		if err := checkIdentityValues(t); err != nil {
			return err
		}
		if err := h.attachScripts(p.ctx, t, tc, p.scripts, p.repl); err != nil {
			return err
		}
		if err := h.applyApproval(t, tc.Approval, p.conns[tc.Use].config.Approval); err != nil {
			return err
		}
		p.tools = append(p.tools, t)
		p.configs[t.Name] = tc
	}
	h.declared = p.tools
	return nil
}

// provisionResourcesAndPrompts compiles the declared resources and prompts.
func (h *Handler) provisionResourcesAndPrompts(p *provisioning) error {
	if err := h.buildResources(p.ctx, p.conns, p.repl, p.scripts); err != nil {
		return err
	}
	return h.provisionPrompts(p.repl)
}

// provisionSourceTools loads the sources and takes their tools, resources
// and prompts.
func (h *Handler) provisionSourceTools(p *provisioning) error {
	if err := h.provisionSources(p.ctx); err != nil {
		return err
	}
	sourced, held, err := h.sourceTools()
	if err != nil {
		return err
	}
	if err := sourcetools.CheckNames(h.declared, sourced); err != nil {
		return err
	}
	p.sourced, p.held = sourced, held
	h.exposeHeld()
	h.warnUnapprovedCatalogs()
	return h.provisionUpstreams()
}

// provisionLimits puts the cache and the rate limits in front of the
// tools.
func (h *Handler) provisionLimits(p *provisioning) error {
	if err := h.provisionCache(p.ctx, p.tools, p.sourced, p.repl); err != nil {
		return err
	}
	if err := h.provisionRateLimits(p.ctx, p.repl); err != nil {
		return err
	}
	h.applyToolLimits(p.tools, p.configs)
	return nil
}

// provisionRegistry makes the first version of the tools the endpoint
// serves.
func (h *Handler) provisionRegistry(p *provisioning) error {
	reg, err := h.newRegistry(append(append([]*pipeline.Tool(nil), p.tools...), p.sourced...))
	if err != nil {
		return err
	}
	if err := h.checkPins(reg.engine); err != nil {
		return err
	}
	reg.held = p.held
	h.setTools(reg)
	p.reg = reg
	return nil
}

// provisionServer builds the MCP server over the tools, with its
// telemetry, subscriptions and session bound, and watches the sources.
func (h *Handler) provisionServer(p *provisioning) error {
	h.provisionObservability(p.ctx, p.conns)
	h.catalog = h.newCatalog()
	h.mcp, h.streamable = h.newMCPServer(p.ctx)
	h.upstreams.StartSubscriptions(h.sessionIdleTimeout())
	sourcetools.Watch(h.sources, h.swapTools)
	return nil
}

// provisionSessionLimit bounds the sessions (max_sessions): one budget
// for the endpoint and its toolsets, whose views share it. A session
// ended for room is ended in every MCP server; only the one it was
// opened in has it.
func (h *Handler) provisionSessionLimit(*provisioning) error {
	if h.MaxSessions <= 0 {
		return nil
	}
	streamables := []*server.StreamableHTTPServer{h.streamable}
	for _, v := range h.viewList {
		streamables = append(streamables, v.streamable)
	}
	ups := h.upstreams
	h.sessions = session.NewLimit(h.MaxSessions, h.sessionIdleTimeout(), func(id string) {
		for _, s := range streamables {
			session.End(s, id)
		}
		ups.EndSession(id)
	})
	for _, v := range h.viewList {
		v.sessions = h.sessions
	}
	return nil
}
