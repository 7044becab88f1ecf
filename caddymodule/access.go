package caddymodule

import (
	"context"

	"github.com/edgemcp/edgemcp/caddymodule/fastpath"
	"github.com/edgemcp/edgemcp/caddymodule/telemetry"
	"github.com/edgemcp/edgemcp/pipeline"
)

// requestAccess is what the feature packages (resources.Set and the
// others) learn of the request being served, through their Access
// interfaces: its caller's auth, its call state, its request info.
type requestAccess struct{ h *Handler }

// Allowed reports whether the caller of ctx passes auth (nil: anyone), the
// check the tool filter makes (callable).
func (a requestAccess) Allowed(ctx context.Context, auth pipeline.Authorizer, name string) bool {
	check, ok := auth.(*pipeline.AuthCheck)
	if !ok {
		return true
	}
	info := authRequestInfo(ctx)
	return info != nil && check.Allows(ctx, info, name)
}

// Fail puts perr on the request's call state, whose writer answers it.
func (requestAccess) Fail(ctx context.Context, perr *pipeline.Error) {
	if st := fastpath.CallFrom(ctx); st != nil {
		st.Fail(perr)
	}
}

// RequestInfo is what the pipeline's stages know of the request.
func (requestAccess) RequestInfo(ctx context.Context) *pipeline.RequestInfo {
	return fastpath.RequestInfo(ctx, fastpath.CallFrom(ctx))
}

// Shown is perr as error_detail lets the client see it.
func (a requestAccess) Shown(ctx context.Context, perr *pipeline.Error) *pipeline.Error {
	if a.h.ErrorDetail != errorDetailFull {
		return perr.WithoutServerText(telemetry.RequestID(ctx))
	}
	return perr
}
