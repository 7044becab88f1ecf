package upstreams

import (
	"context"
	"encoding/json"
	"errors"
	"math"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/edgemcp/edgemcp/pipeline"
)

// forwardRead reads a resource of a source.
func (r *Set) forwardRead(cs pipeline.CatalogSource) server.ResourceHandlerFunc {
	return func(ctx context.Context, req mcp.ReadResourceRequest) ([]mcp.ResourceContents, error) {
		caller := r.Access.Caller(ctx)
		raw, err := cs.ReadResource(caller, req.Params.URI)
		if err != nil {
			return nil, r.failed(ctx, err)
		}
		res, err := mcp.ParseReadResourceResult(&raw)
		if err != nil {
			return nil, r.failed(ctx, pipeline.Fail(pipeline.StageResponse, err, "the MCP server's resources/read result is not valid"))
		}
		// The server's hints, within the gateway's: an MCP source has no
		// cache line and its reads are never cached here, so its ttlMs
		// stands; a read made for a verified caller (on that caller's own
		// session, with that caller's credentials, under default_auth) is
		// private, as the result cache keys such a caller's results.
		hint := upstreamHint(res)
		hint.Private = hint.Private || pipeline.RequestCaller(caller) != nil
		r.Access.CacheHint(ctx, &hint)
		r.Access.PassUpstream(ctx, compactJSON(raw))
		return res.Contents, nil
	}
}

// upstreamHint is what an MCP server said of its resources/read result,
// as a CacheHint: its ttlMs (none or negative: 0; more than a Duration
// holds: the most it holds), and private unless it said public
// (SEP-2549's default, and mcp-go's).
func upstreamHint(res *mcp.ReadResourceResult) pipeline.CacheHint {
	h := pipeline.CacheHint{Private: res.CacheScope != mcp.CacheScopePublic}
	if ms, ok := res.TTL(); ok && ms > 0 {
		h.TTL = time.Duration(min(ms, int64(math.MaxInt64/time.Millisecond))) * time.Millisecond
	}
	return h
}

// forwardGet gets a prompt of a source under its original name.
func (r *Set) forwardGet(cs pipeline.CatalogSource, original string) server.PromptHandlerFunc {
	return func(ctx context.Context, req mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
		raw, err := cs.GetPrompt(r.Access.Caller(ctx), original, req.Params.Arguments)
		if err != nil {
			return nil, r.failed(ctx, err)
		}
		res, err := mcp.ParseGetPromptResult(&raw)
		if err != nil {
			return nil, r.failed(ctx, pipeline.Fail(pipeline.StageResponse, err, "the MCP server's prompts/get result is not valid"))
		}
		r.Access.PassUpstream(ctx, compactJSON(raw))
		return res, nil
	}
}

// forwardComplete sends completion/complete for a source's prompt or
// template to its server, with the reference it knows.
func (r *Set) forwardComplete(ctx context.Context, src pipeline.CatalogSource, ref map[string]any, arg mcp.CompleteArgument, cctx mcp.CompleteContext) (*mcp.Completion, error) {
	params := map[string]any{"ref": ref, "argument": arg}
	if len(cctx.Arguments) > 0 {
		params["context"] = cctx
	}
	raw, err := src.Complete(r.Access.Caller(ctx), params)
	if err != nil {
		return nil, r.failed(ctx, err)
	}
	var res mcp.CompleteResult
	if err := json.Unmarshal(raw, &res); err != nil {
		return nil, r.failed(ctx, pipeline.Fail(pipeline.StageResponse, err, "the MCP server's completion/complete result is not valid"))
	}
	r.Access.PassUpstream(ctx, compactJSON(raw))
	return &res.Completion, nil
}

// failed is the error of a forwarded read, get, completion or
// subscription: the upstream's own JSON-RPC error as it sent it (an
// unknown resource stays "not found"); any other failure is -32000 with
// what may be shown.
func (r *Set) failed(ctx context.Context, err error) error {
	var perr *pipeline.Error
	var safe pipeline.SafeError
	switch {
	case errors.As(err, &perr):
	case errors.As(err, &safe):
		perr = pipeline.Fail(pipeline.StageExecution, err, "%s", safe.SafeMessage())
	default:
		perr = pipeline.Fail(pipeline.StageExecution, err, "failed")
	}
	r.Access.Fail(ctx, perr)
	return perr
}
