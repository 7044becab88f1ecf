package testservices

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
)

// SessionUpstream is an upstream MCP server over streamable HTTP (mcp-go's
// server) that keeps state per session, for the tests of an MCP source's
// upstream sessions: its tool "count" answers how many times it was
// called on the session, with the session's id and the Authorization
// header of the call, and sends a progress notification first when the
// call asked for progress. A request without an Authorization header, or
// with one holding "refused", is answered 401; the sessions a client ended (DELETE) are recorded.
type SessionUpstream struct {
	URL string

	mu     sync.Mutex
	counts map[string]int
	ended  map[string]bool
}

// Count is one answer of the tool "count".
type Count struct {
	Session string `json:"session"`
	Auth    string `json:"auth"`
	N       int    `json:"n"`
}

type authKey struct{}

// eventCounter counts the SSE events mcp-go writes on a POST's answer.
// mcp-go's POST handler drops a notification its forwarder took off the
// session's queue just as the handler returned, so a handler that sends
// one right before its result waits until it was written (await).
type eventCounter struct {
	http.ResponseWriter
	n atomic.Int64
}

type eventsKey struct{}

func (e *eventCounter) Write(p []byte) (int, error) {
	n, err := e.ResponseWriter.Write(p)
	if strings.HasPrefix(string(p), "event: ") {
		e.n.Add(1)
	}
	return n, err
}

func (e *eventCounter) Flush() { http.NewResponseController(e.ResponseWriter).Flush() }

// await returns once n events were written, or after 5 s.
func (e *eventCounter) await(n int64) {
	for deadline := time.Now().Add(5 * time.Second); e.n.Load() < n && time.Now().Before(deadline); {
		time.Sleep(100 * time.Microsecond)
	}
}

// StartSessionUpstream starts the server on a loopback port until the test
// ends.
func StartSessionUpstream(t testing.TB) *SessionUpstream {
	t.Helper()
	u := &SessionUpstream{counts: map[string]int{}, ended: map[string]bool{}}
	m := server.NewMCPServer("sessions", "1", server.WithToolCapabilities(true), server.WithResourceCapabilities(false, false), server.WithPromptCapabilities(false))
	m.AddTool(mcp.NewTool("count", mcp.WithDescription("counts its calls on the session")),
		func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			id := server.ClientSessionFromContext(ctx).SessionID()
			if tok := req.Params.Meta; tok != nil && tok.ProgressToken != nil {
				written := ctx.Value(eventsKey{}).(*eventCounter)
				before := written.n.Load()
				if server.ServerFromContext(ctx).SendNotificationToClient(ctx, "notifications/progress",
					map[string]any{"progressToken": tok.ProgressToken, "progress": 1, "total": 1, "message": "counted"}) == nil {
					written.await(before + 1)
				}
			}
			u.mu.Lock()
			u.counts[id]++
			c := Count{Session: id, Auth: ctx.Value(authKey{}).(string), N: u.counts[id]}
			u.mu.Unlock()
			out, _ := json.Marshal(c)
			return mcp.NewToolResultText(string(out)), nil
		})
	// The resource session://whoami and the prompt whoami answer with the
	// session and the Authorization header they were asked on (a Count
	// with N 0), so that a test sees which session a read or get took.
	whoami := func(ctx context.Context) string {
		out, _ := json.Marshal(Count{Session: server.ClientSessionFromContext(ctx).SessionID(), Auth: ctx.Value(authKey{}).(string)})
		return string(out)
	}
	m.AddResource(mcp.NewResource("session://whoami", "whoami", mcp.WithMIMEType("application/json")),
		func(ctx context.Context, req mcp.ReadResourceRequest) ([]mcp.ResourceContents, error) {
			return []mcp.ResourceContents{mcp.TextResourceContents{URI: req.Params.URI, MIMEType: "application/json", Text: whoami(ctx)}}, nil
		})
	m.AddPrompt(mcp.NewPrompt("whoami", mcp.WithPromptDescription("the session and credential it was asked on")),
		func(ctx context.Context, req mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
			return mcp.NewGetPromptResult("whoami", []mcp.PromptMessage{mcp.NewPromptMessage(mcp.RoleUser, mcp.NewTextContent(whoami(ctx)))}), nil
		})
	// No standalone GET stream: mcp-go's server hands a session's
	// notifications to whichever of its streams reads first, so a progress
	// notification could leave on the GET stream after the call's result
	// and arrive once the call had ended (the gateway then drops it). On
	// POST streams only, it always precedes the result.
	h := server.NewStreamableHTTPServer(m, server.WithStateful(true), server.WithDisableStreaming(true),
		server.WithHTTPContextFunc(func(ctx context.Context, r *http.Request) context.Context {
			return context.WithValue(ctx, authKey{}, r.Header.Get("Authorization"))
		}))
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if a := r.Header.Get("Authorization"); a == "" || strings.Contains(a, "refused") {
			http.Error(w, "who are you", http.StatusUnauthorized)
			return
		}
		if r.Method == http.MethodDelete {
			u.mu.Lock()
			u.ended[r.Header.Get("Mcp-Session-Id")] = true
			u.mu.Unlock()
		}
		events := &eventCounter{ResponseWriter: w}
		h.ServeHTTP(events, r.WithContext(context.WithValue(r.Context(), eventsKey{}, events)))
	}))
	t.Cleanup(srv.Close)
	u.URL = srv.URL + "/mcp"
	return u
}

// Ended reports whether the client ended session id.
func (u *SessionUpstream) Ended(id string) bool {
	u.mu.Lock()
	defer u.mu.Unlock()
	return u.ended[id]
}

// ParseCount reads the text of a "count" result (a CallToolResult).
func ParseCount(t testing.TB, result []byte) Count {
	t.Helper()
	var res struct {
		Content []struct {
			Text string `json:"text"`
		} `json:"content"`
	}
	var c Count
	if err := json.Unmarshal(result, &res); err != nil || len(res.Content) != 1 || json.Unmarshal([]byte(res.Content[0].Text), &c) != nil {
		t.Fatalf("not a count result: %s", result)
	}
	return c
}
