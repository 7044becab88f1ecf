package mcp

import (
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mark3labs/mcp-go/client/transport"

	"github.com/edgemcp/edgemcp/pipeline"
	"github.com/edgemcp/edgemcp/sources/upstream"
)

// Per-caller upstream sessions (`session per_caller`, README, Sources: MCP
// servers). An upstream that keeps state per user, or that takes the
// caller's own credential (passthrough, per_caller), gets one session per
// verified caller (callerKey): made on the caller's first call, closed after
// caller_session_idle without a call, or when max_caller_sessions are open
// and a new caller comes (the one unused longest goes; one with a call in
// flight is never closed). The source's shared session still lists the
// tools, with the caller-independent credentials only.

// Defaults of max_caller_sessions and caller_session_idle.
const (
	defaultMaxCallerSessions = 1000
	defaultCallerIdle        = 10 * time.Minute
)

// callerSession is one caller's upstream session.
type callerSession struct {
	key string
	// call is the caller's latest call: the session's own requests (its
	// stream, its end) take their credentials from it. A call's requests
	// take them from the call itself (callerCall).
	call      atomic.Pointer[pipeline.Call]
	connectMu sync.Mutex // one connect at a time

	// Under callers.mu.
	sess  *session
	inUse int
	last  time.Time
}

// callers is the table of a connection's per-caller sessions.
type callers struct {
	c    *conn
	max  int
	idle time.Duration

	mu     sync.Mutex
	now    func() time.Time // a test's clock
	m      map[string]*callerSession
	closed bool
}

func newCallers(c *conn, limit int, idle time.Duration) *callers {
	return &callers{c: c, max: limit, idle: idle, now: time.Now, m: map[string]*callerSession{}}
}

// errNoCaller refuses a call without a verified caller: it has no session
// of its own, and sharing one between anonymous callers would mix their
// upstream state.
var errNoCaller = &pipeline.PublicError{Public: "session per_caller: the call has no verified identity (the MCP source keeps one upstream session per caller; add an auth provider)"}

// acquire returns the caller's session entry, made when it has none, and
// marks it in use until release. A new caller beyond max closes the
// session unused longest; when every one has a call in flight the call is
// refused.
func (cs *callers) acquire(call *pipeline.Call) (*callerSession, error) {
	if call == nil || call.Identity == nil || call.Identity.Subject == "" {
		return nil, errNoCaller
	}
	key := callerKey(call.Identity)
	cs.mu.Lock()
	if cs.closed {
		cs.mu.Unlock()
		return nil, errors.New("the MCP source is stopped")
	}
	e := cs.m[key]
	var evicted *session
	if e == nil {
		if len(cs.m) >= cs.max {
			var victim *callerSession
			for _, o := range cs.m {
				if o.inUse == 0 && (victim == nil || o.last.Before(victim.last)) {
					victim = o
				}
			}
			if victim == nil {
				cs.mu.Unlock()
				return nil, &pipeline.PublicError{Public: "session per_caller: every upstream session (max_caller_sessions) has a call in flight; try again"}
			}
			delete(cs.m, victim.key)
			evicted = victim.sess
		}
		e = &callerSession{key: key}
		cs.m[key] = e
	}
	e.inUse++
	e.last = cs.now()
	// Only what the credentials read, not the call the pipeline goes on
	// changing.
	e.call.Store(&pipeline.Call{Identity: call.Identity, Request: call.Request})
	cs.mu.Unlock()
	if evicted != nil {
		go evicted.close()
	}
	return e, nil
}

// refreshClaims change when a token is refreshed, and nothing else does.
var refreshClaims = map[string]bool{"exp": true, "iat": true, "nbf": true, "jti": true}

// callerKey is the session of a verified identity as its token states it:
// the provider, the subject and every claim but refreshClaims. Two tokens
// of one subject that say anything else differently (a third-party app's
// narrow one and the user's own broad one: another azp or client_id, fewer
// scopes, another tenant) never share an upstream session; a refreshed
// token keeps its session.
func callerKey(id *pipeline.Identity) string {
	claims := make(map[string]any, len(id.Claims))
	for k, v := range id.Claims {
		if !refreshClaims[k] {
			claims[k] = v
		}
	}
	h := sha256.New()
	for _, part := range []string{id.Provider, id.Subject} {
		_ = binary.Write(h, binary.BigEndian, uint64(len(part)))
		h.Write([]byte(part))
	}
	if b, err := json.Marshal(claims); err == nil { // sorted keys
		h.Write(b)
	} else { // a claim JSON cannot hold (an auth script's): the same, as Go prints it
		fmt.Fprintf(h, "%#v", claims)
	}
	return string(h.Sum(nil))
}

// callerCall carries a call in the context of its requests, where their
// credentials are taken from (credentialTransport).
type callerCall struct{}

// callOf is the call a request is made for: a tools/call's, or the caller
// of a forwarded read, get or completion (pipeline.RequestCaller); nil for
// a session's own requests.
func callOf(ctx context.Context) *pipeline.Call {
	if c, ok := ctx.Value(callerCall{}).(*pipeline.Call); ok {
		return c
	}
	return pipeline.RequestCaller(ctx)
}

// release ends a call's use of e.
func (cs *callers) release(e *callerSession) {
	cs.mu.Lock()
	e.inUse--
	e.last = cs.now()
	cs.mu.Unlock()
}

// session returns e's session, connecting when it has none.
func (cs *callers) session(ctx context.Context, e *callerSession) (*session, error) {
	e.connectMu.Lock()
	defer e.connectMu.Unlock()
	cs.mu.Lock()
	s := e.sess
	cs.mu.Unlock()
	if s != nil {
		return s, nil
	}
	if cs.c.ctx.Err() != nil {
		return nil, errors.New("the MCP source is stopped")
	}
	s, err := cs.c.connect(ctx, e)
	if err != nil {
		return nil, err
	}
	cs.mu.Lock()
	if cs.closed {
		cs.mu.Unlock()
		s.close()
		return nil, errors.New("the MCP source is stopped")
	}
	e.sess = s
	cs.mu.Unlock()
	return s, nil
}

// drop forgets s if it is still e's session, and closes it.
func (cs *callers) drop(e *callerSession, s *session) {
	cs.mu.Lock()
	if e.sess == s {
		e.sess = nil
	}
	cs.mu.Unlock()
	s.close()
}

// count is how many callers have an entry (a session, or one being made).
func (cs *callers) count() int {
	cs.mu.Lock()
	defer cs.mu.Unlock()
	return len(cs.m)
}

// sweep closes the sessions unused for idle.
func (cs *callers) sweep() {
	var idle []*session
	cs.mu.Lock()
	now := cs.now()
	for k, e := range cs.m {
		if e.inUse == 0 && now.Sub(e.last) >= cs.idle {
			delete(cs.m, k)
			if e.sess != nil {
				idle = append(idle, e.sess)
			}
		}
	}
	cs.mu.Unlock()
	closeAll(idle)
}

// run sweeps until the connection is destroyed, a few times per idle
// period so that a session outlives it by a quarter at most.
func (cs *callers) run() {
	every := min(max(cs.idle/4, 10*time.Millisecond), time.Minute)
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		select {
		case <-cs.c.ctx.Done():
			return
		case <-t.C:
			cs.sweep()
		}
	}
}

// stop closes every caller's session; calls still in flight fail.
func (cs *callers) stop() {
	var all []*session
	cs.mu.Lock()
	cs.closed = true
	for _, e := range cs.m {
		if e.sess != nil {
			all = append(all, e.sess)
		}
	}
	cs.m = map[string]*callerSession{}
	cs.mu.Unlock()
	closeAll(all)
}

// closeAll closes sessions at once: each may wait on its server.
func closeAll(sessions []*session) {
	var wg sync.WaitGroup
	for _, s := range sessions {
		wg.Add(1)
		go func() {
			defer wg.Done()
			s.close()
		}()
	}
	wg.Wait()
}

// checkCredentials applies the caller-dependent credentials to a request
// that is not sent, so that a caller without a token, or with no secret on
// file, is refused with the credential's own message before any session
// is made or used.
func (c *conn) checkCredentials(ctx context.Context, call *pipeline.Call) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, c.set.url, nil)
	if err != nil {
		return err
	}
	for _, cr := range c.set.built.Credentials {
		if _, ok := cr.(upstream.CallerDependent); ok {
			if err := cr.Apply(ctx, req, call); err != nil {
				return err
			}
		}
	}
	return nil
}

// callerSource is a session source for the calls of one caller.
type callerSource struct {
	cs *callers
	e  *callerSession
}

func (p callerSource) ensure(ctx context.Context) (*session, error) { return p.cs.session(ctx, p.e) }
func (p callerSource) drop(s *session)                              { p.cs.drop(p.e, s) }

// callerRefused is the failure of a caller's session that the server
// answered with 401: the caller's own credential was not taken, which the
// caller may be told (nothing was done upstream). Nil for other failures.
func callerRefused(err error) error {
	var unauthorized *transport.AuthorizationRequiredError
	if !errors.As(err, &unauthorized) {
		return nil
	}
	return &pipeline.PublicError{Public: "session per_caller: the MCP server refused the caller's credential (401)", Cause: err}
}
