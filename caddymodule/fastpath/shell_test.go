package fastpath

import (
	"context"
	"net/http"
	"sync/atomic"
	"testing"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/edgemcp/edgemcp/pipeline"
)

// testShell is a Shell with a registry of its own and no telemetry;
// onStart runs when a call's telemetry opens.
type testShell struct {
	reg     atomic.Pointer[testRegistry]
	onStart func()
}

type testRegistry struct{ tools *Tools }

func (r *testRegistry) Tools() *Tools { return r.tools }

func (s *testShell) set(tb testing.TB, tools ...*pipeline.Tool) {
	tb.Helper()
	engine, err := pipeline.NewEngine(tools)
	if err != nil {
		tb.Fatal(err)
	}
	s.reg.Store(&testRegistry{NewTools(engine, nil)})
}

func (s *testShell) Registry() Registry { return s.reg.Load() }
func (s *testShell) StartCall(ctx context.Context, _ Registry, _ string) (context.Context, Record) {
	if s.onStart != nil {
		s.onStart()
	}
	return ctx, nopRecord{}
}
func (s *testShell) UnknownTool(context.Context, *Call)            {}
func (s *testShell) Listable(context.Context, *pipeline.Tool) bool { return true }
func (s *testShell) SessionLive(*http.Request) bool                { return true }
func (s *testShell) SealEvent(p []byte, _ string) []byte           { return p }
func (s *testShell) RequestID(context.Context) string              { return "req-1" }

type nopRecord struct{}

func (nopRecord) Stage(ctx context.Context, _ *pipeline.Call, _ pipeline.Stage) (context.Context, func(error)) {
	return ctx, func(error) {}
}
func (nopRecord) Finish(context.Context, *pipeline.Error) {}

// newTestServer is a fast path over a testShell holding tools, without an
// mcp-go server.
func newTestServer(tb testing.TB, tools ...*pipeline.Tool) *Server {
	shell := &testShell{}
	shell.set(tb, tools...)
	counter := prometheus.NewCounter(prometheus.CounterOpts{Name: "test"})
	return New(shell, Options{DirectCalls: counter, DirectLists: counter})
}
