package caddymodule

import (
	"net/http"

	"github.com/mark3labs/mcp-go/server"
	"go.uber.org/zap"

	"github.com/edgemcp/edgemcp/caddymodule/session"
	"github.com/edgemcp/edgemcp/caddymodule/sourcetools"
	"github.com/edgemcp/edgemcp/caddymodule/upstreams"
	"github.com/edgemcp/edgemcp/pipeline"
)

// How resources and prompts, declared (resources.Set, prompts.Set) and the
// sources' (upstreams.Set), meet mcp-go: the server options that declare
// their capabilities (only when there are any), filter them per caller and
// complete their arguments; which sources bring them; and the sessions
// whose subscriptions upstreams.Set keeps.

// resourcePromptOptions are the mcp-go options for the declared resources
// and prompts and the sources'.
func (h *Handler) resourcePromptOptions() []server.ServerOption {
	opts := []server.ServerOption{
		server.WithPromptFilter(h.prompts.Filter),
	}
	if h.upstreams.ServesResources() {
		opts = append(opts, server.WithResourceCapabilities(h.upstreams.Subscribable(), h.upstreams.Changing()))
	}
	if h.upstreams.ServesPrompts() {
		opts = append(opts, server.WithPromptCapabilities(h.upstreams.Changing()))
	}
	if h.upstreams.Completable() {
		prompts, resources := h.upstreams.Completers()
		opts = append(opts, server.WithCompletions(),
			server.WithPromptCompletionProvider(prompts),
			server.WithResourceCompletionProvider(resources))
	}
	return opts
}

// provisionUpstreams reads the sources' resources and prompts as they are now.
func (h *Handler) provisionUpstreams() error {
	var srcs []upstreams.Source
	for _, s := range h.catalogSources() {
		srcs = append(srcs, upstreams.Source{Name: s.Name, Namespace: s.Namespace, Src: s.Src.(pipeline.CatalogSource)})
	}
	r, err := upstreams.New(upstreams.Options{Sources: srcs, Resources: h.resources, Prompts: h.prompts,
		Access: requestAccess{h}, Logger: h.logger})
	if err != nil {
		return err
	}
	h.upstreams = r
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
		if id != "" && session.CheckOf(r) != nil { // the caller's own session (session.IDs.Admit)
			h.upstreams.EndSession(id)
		}
		return func() {}
	}
	return h.upstreams.Busy(id)
}
