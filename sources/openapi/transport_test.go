package openapi

import (
	"context"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/edgemcp/edgemcp/pipeline"
)

// TestConcurrentCallsReuseConnections: concurrent calls to one upstream
// reuse their connections instead of opening one per call. With
// http.DefaultTransport, which keeps two idle connections per host, 16
// callers opened 14 new connections per round of calls (282 for 320
// calls), each closed one left in TIME_WAIT: under sustained load the
// machine runs out of ports, and a TLS upstream pays a handshake per call.
func TestConcurrentCallsReuseConnections(t *testing.T) {
	const callers, each = 16, 20
	var conns atomic.Int64
	// The upstream answers in rounds: once all callers' requests are in
	// flight, so that each round needs a connection per caller.
	var mu sync.Mutex
	arrived, release := 0, make(chan struct{})
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		wait := release
		if arrived++; arrived == callers {
			arrived = 0
			close(release)
			release = make(chan struct{})
		}
		mu.Unlock()
		<-wait
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"id": 1, "name": "Rex"}`)
	}))
	srv.Config.ConnState = func(_ net.Conn, s http.ConnState) {
		if s == http.StateNew {
			conns.Add(1)
		}
	}
	srv.Start()
	defer srv.Close()
	doc := load(t, "testdata/petstore.yaml")
	tools, _, err := Tools(doc, Config{BaseURL: srv.URL + "/v1"})
	if err != nil {
		t.Fatal(err)
	}
	var show *pipeline.Tool
	for _, tl := range tools {
		if tl.Name == "showPetById" {
			show = tl
		}
	}
	// Rounds: each caller sends one call, the upstream answers once all
	// are in flight, and the next round starts when all have their answer
	// (and so have handed their connection back).
	for range each {
		var wg sync.WaitGroup
		errs := make(chan error, callers)
		for range callers {
			wg.Add(1)
			go func() {
				defer wg.Done()
				if _, err := show.Executor.Execute(context.Background(), &pipeline.Call{Tool: show, Inputs: map[string]any{"petId": "7"}}); err != nil {
					errs <- err
				}
			}()
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			t.Fatal(err)
		}
	}
	// One connection per caller, give or take a dial that lost a race
	// with a connection coming back idle.
	if n := conns.Load(); n > 2*callers {
		t.Errorf("%d calls from %d callers opened %d connections, want at most %d", callers*each, callers, n, 2*callers)
	}
}
