package caddymodule

import (
	"net/http"
	"strings"

	"github.com/edgemcp/edgemcp/caddymodule/access"
	"github.com/edgemcp/edgemcp/caddymodule/auth"
	"github.com/edgemcp/edgemcp/caddymodule/catalog"
	"github.com/edgemcp/edgemcp/pipeline"
)

// newCatalog is the endpoint's catalog page (catalog.Catalog); nil with
// `catalog off`. The auth providers are provisioned first.
func (h *Handler) newCatalog() *catalog.Catalog {
	if h.CatalogOff {
		return nil
	}
	opts := catalog.Options{Server: h.ServerName, Version: h.ServerVersion, Cred: h.credentialOf(),
		Contents: h.catalogContents, Logger: h.logger}
	if h.DefaultAuth != nil {
		opts.Resource = h.DefaultAuth.Resource
	}
	return catalog.New(opts)
}

// catalogContents is what r's caller may use, by the checks of the lists
// (callable, the resources' and prompts' Readable), in declaration order.
func (h *Handler) catalogContents(r *http.Request) catalog.Contents {
	var c catalog.Contents
	for _, t := range h.tools().engine.Tools() {
		if h.callable(r.Context(), t) {
			c.Tools = append(c.Tools, t)
		}
	}
	for _, dr := range h.resources.All() {
		if h.resources.Readable(r.Context(), dr) {
			c.Resources = append(c.Resources, catalog.Resource{URI: dr.URI, Name: dr.Name, Title: dr.Title,
				Description: dr.Description, MimeType: dr.Mime(), Template: dr.Template, Tool: dr.Tool})
		}
	}
	for _, p := range h.prompts.All() {
		if h.prompts.Readable(r.Context(), p) {
			c.Prompts = append(c.Prompts, p)
		}
	}
	// A held tool has no policy of its own yet: it is shown to whoever
	// passes the endpoint's default_auth, as its tools would be.
	var endpointAuth pipeline.Authorizer
	if h.defaultAuth != nil {
		endpointAuth = h.defaultAuth
	}
	for _, held := range h.tools().held {
		if access.Allowed(r.Context(), endpointAuth, held.Tool.Name) {
			c.Held = append(c.Held, catalog.Held{Source: held.Source, Name: held.Tool.Name, Reason: string(held.Reason),
				Why: held.Message(), Pinned: held.Pinned, Current: held.Current, Changes: held.Changes})
		}
	}
	return c
}

// credentialOf is the credential the endpoint's default_auth provider reads,
// or, without default_auth, the first declared provider's; nil when the
// endpoint has no auth.
func (h *Handler) credentialOf() *catalog.Credential {
	if len(h.Auth) == 0 {
		return nil
	}
	name := h.Auth[0].Name
	if h.DefaultAuth != nil {
		name = h.DefaultAuth.Use
	}
	switch p := h.providers[name].(type) {
	case *auth.APIKey:
		if p.Header != "" && !strings.EqualFold(p.Header, "Authorization") {
			return &catalog.Credential{Header: http.CanonicalHeaderKey(p.Header)}
		}
	case *auth.Basic:
		return &catalog.Credential{Header: "Authorization", Scheme: "Basic "}
	}
	return &catalog.Credential{Header: "Authorization", Scheme: "Bearer "}
}
