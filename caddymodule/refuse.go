package caddymodule

import (
	"errors"
	"net/http"

	"github.com/caddyserver/caddy/v2"
	"github.com/caddyserver/caddy/v2/modules/caddyhttp"

	"github.com/edgemcp/edgemcp/caddymodule/jsonrpc"
	"github.com/edgemcp/edgemcp/pipeline"
)

// A request turned away before MCP sees it (400 unreadable body, 413 body
// too large, 429 over the endpoint's rate limit, 503 over max_concurrent)
// is a caddyhttp.HandlerError, as Caddy's own handlers return, so that the
// site's `handle_errors` routes answer it. Without such routes Caddy would
// write the bare status; the handler writes, as it always has, a JSON-RPC
// error that MCP clients can read.

// hasErrorRoutes reports whether the server the handler is provisioned in
// has `handle_errors` routes.
func hasErrorRoutes(ctx caddy.Context) bool {
	srv, _ := ctx.Value(caddyhttp.ServerCtxKey).(*caddyhttp.Server)
	return srv != nil && srv.Errors != nil && len(srv.Errors.Routes) > 0
}

// refused hands err (a caddyhttp.HandlerError) to the server's error
// routes, or, without any, writes it as a JSON-RPC error and returns nil.
func (h *Handler) refused(w http.ResponseWriter, err error) error {
	var he caddyhttp.HandlerError
	if h.errorRoutes || !errors.As(err, &he) {
		return err
	}
	code := pipeline.CodeStageFailed
	switch he.StatusCode {
	case http.StatusRequestEntityTooLarge:
		code = -32600 // Invalid Request: the body itself is refused
	case http.StatusBadRequest:
		code = -32700 // Parse error: the body could not be read
	}
	jsonrpc.WriteError(w, he.StatusCode, code, he.Err.Error())
	return nil
}
