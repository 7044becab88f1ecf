package caddymodule

import (
	"encoding/json"
	"net/http"

	"github.com/caddyserver/caddy/v2"
	"github.com/caddyserver/caddy/v2/caddyconfig/caddyfile"
	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
	"go.uber.org/zap"

	"github.com/edgemcp/edgemcp/caddymodule/prompts"
	"github.com/edgemcp/edgemcp/caddymodule/relay"
	"github.com/edgemcp/edgemcp/caddymodule/sourcetools"
	"github.com/edgemcp/edgemcp/pipeline"
)

// How resources and prompts, declared (resources.Set, prompts.Set) and the
// sources' (relay.Relay), meet mcp-go: the server options that declare
// their capabilities (only when there are any), filter them per caller and
// complete their arguments, and the call state that puts the documented
// error code on a failed read or get.

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

// provisionPrompts compiles the prompts and indexes them by name.
func (h *Handler) provisionPrompts(repl *caddy.Replacer) error {
	list, err := h.buildPrompts(repl)
	if err != nil {
		return err
	}
	h.prompts = prompts.New(list, requestAccess{h})
	return nil
}

// resourcePromptOptions are the mcp-go options for the declared resources
// and prompts and the sources'.
func (h *Handler) resourcePromptOptions() []server.ServerOption {
	opts := []server.ServerOption{
		server.WithPromptFilter(h.prompts.Filter),
	}
	if h.relay.ServesResources() {
		opts = append(opts, server.WithResourceCapabilities(h.relay.Subscribable(), h.relay.Changing()))
	}
	if h.relay.ServesPrompts() {
		opts = append(opts, server.WithPromptCapabilities(h.relay.Changing()))
	}
	if h.relay.Completable() {
		prompts, resources := h.relay.Completers()
		opts = append(opts, server.WithCompletions(),
			server.WithPromptCompletionProvider(prompts),
			server.WithResourceCompletionProvider(resources))
	}
	return opts
}

// provisionRelay reads the sources' resources and prompts as they are now.
func (h *Handler) provisionRelay() error {
	var srcs []relay.Source
	for _, s := range h.catalogSources() {
		srcs = append(srcs, relay.Source{Name: s.Name, Namespace: s.Namespace, Src: s.Src.(pipeline.CatalogSource)})
	}
	r, err := relay.New(relay.Options{Sources: srcs, Resources: h.resources, Prompts: h.prompts,
		Access: requestAccess{h}, Logger: h.logger, WithMember: withJSONMember})
	if err != nil {
		return err
	}
	h.relay = r
	return nil
}

// catalogSources are the sources that bring resources or prompts. A
// source under `approval required` is not one: nothing of it may run
// without a person's yes, and a resource read, a prompt get or a
// completion has no call to approve (README, Approvals), so it serves its
// tools only. Under `approval writes` they are served: the protocol makes
// them reads, as a tool with readOnlyHint is one.
func (h *Handler) catalogSources() []*sourcetools.Source {
	var out []*sourcetools.Source
	for _, s := range h.sources {
		if _, ok := s.Src.(pipeline.CatalogSource); ok && s.Approval != approvalRequired {
			out = append(out, s)
		}
	}
	return out
}

// warnUnapprovedCatalogs says, at load, which sources' resources and
// prompts are left out by their `approval required`.
func (h *Handler) warnUnapprovedCatalogs() {
	for _, s := range h.sources {
		cs, ok := s.Src.(pipeline.CatalogSource)
		if !ok || s.Approval != approvalRequired {
			continue
		}
		if cat := cs.Catalog(); len(cat.Resources)+len(cat.Templates)+len(cat.Prompts) > 0 {
			h.logger.Warn("a source under approval required serves its tools only: its resources, resource templates and prompts cannot be approved and are left out",
				zap.String("source", s.Name), zap.Int("resources", len(cat.Resources)), zap.Int("templates", len(cat.Templates)), zap.Int("prompts", len(cat.Prompts)))
		}
	}
}

// trackSubscriber counts a request (or stream) of a session with
// subscriptions as activity until the returned function runs. A DELETE of
// a valid session ends its subscriptions first, so that they are gone
// upstream by the time the client has its answer.
func (h *Handler) trackSubscriber(r *http.Request) func() {
	id := r.Header.Get(server.HeaderKeySessionID)
	if r.Method == http.MethodDelete {
		if id != "" && sessionCheckOf(r) != nil { // the caller's own session (admitSession)
			h.relay.EndSession(id)
		}
		return func() {}
	}
	return h.relay.Busy(id)
}

// inspectRead notes a resources/read, prompts/get, completion/complete,
// resources/subscribe or resources/unsubscribe, so that the handler's (or
// hook's) failure reaches the wire with its own code, and a forwarded
// request its upstream's own result (wire.go rewrites mcp-go's answer for
// that id); and a list whose entries include a source's own
// (passthrough.go). Nil for anything else.
func (h *Handler) inspectRead(body []byte, r *http.Request) *callState {
	var msg struct {
		ID     json.RawMessage `json:"id"`
		Method string          `json:"method"`
	}
	if json.Unmarshal(body, &msg) != nil || len(msg.ID) == 0 {
		return nil
	}
	st := &callState{header: r.Header, remoteAddr: r.RemoteAddr, tls: r.TLS, rawID: msg.ID}
	switch mcp.MCPMethod(msg.Method) {
	case mcp.MethodResourcesSubscribe, mcp.MethodResourcesUnsubscribe:
		st.overrides = true
	case mcp.MethodResourcesRead, mcp.MethodPromptsGet, mcp.MethodCompletionComplete:
	case mcp.MethodToolsList, mcp.MethodResourcesList, mcp.MethodResourcesTemplatesList, mcp.MethodPromptsList:
		if h.passOnList(st, msg.Method); st.list == nil {
			return nil
		}
	default:
		return nil
	}
	st.id = decodeID(msg.ID)
	return st
}
