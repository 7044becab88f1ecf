package session

import (
	"container/list"
	"context"
	"net/http"
	"sync"
	"time"

	"github.com/mark3labs/mcp-go/server"
)

// Limit bounds the sessions this node keeps state for
// (`max_sessions`). mcp-go keeps a few KB per session (README, Sessions)
// until session_idle_timeout; a client that opens sessions and never
// comes back would otherwise hold memory for that long. Past the bound,
// the session idle the longest (no request running, no stream open) is
// ended as a DELETE would end it: mcp-go drops its state, and the id is
// remembered as ended (IDs), so its next request gets 404 and
// the client, as the specification requires, initializes a new session.
// Sessions that are busy are never evicted: the bound can be passed while
// more than max_sessions requests or streams are open.
type Limit struct {
	max  int
	idle time.Duration // mcp-go forgets sessions idle this long by itself
	end  func(id string)

	mu   sync.Mutex
	lru  *list.List // of *trackedSession, most recently used first
	byID map[string]*list.Element
}

type trackedSession struct {
	id   string
	busy int // requests and streams running
	last time.Time
}

// NewLimit bounds the sessions at max; idle is how long mcp-go keeps an
// idle session by itself, end ends one (End, and whatever else holds it).
func NewLimit(max int, idle time.Duration, end func(string)) *Limit {
	return &Limit{max: max, idle: idle, end: end, lru: list.New(), byID: make(map[string]*list.Element)}
}

// begin records a request of session id; done must be called when it ends.
func (l *Limit) begin(id string) (done func()) {
	l.mu.Lock()
	e := l.touch(id)
	e.Value.(*trackedSession).busy++
	evict := l.overflow(e)
	l.mu.Unlock()
	l.endAll(evict)
	return func() {
		l.mu.Lock()
		defer l.mu.Unlock()
		if e, ok := l.byID[id]; ok {
			s := e.Value.(*trackedSession)
			s.busy--
			s.last = time.Now()
		}
	}
}

// opened records a session an initialize request just created.
func (l *Limit) opened(id string) {
	l.mu.Lock()
	evict := l.overflow(l.touch(id))
	l.mu.Unlock()
	l.endAll(evict)
}

// closed forgets a session the client ended (DELETE).
func (l *Limit) closed(id string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if e, ok := l.byID[id]; ok {
		l.lru.Remove(e)
		delete(l.byID, id)
	}
}

// len is the number of sessions tracked.
func (l *Limit) len() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.lru.Len()
}

// touch moves id to the front, adding it if new. l.mu is held.
func (l *Limit) touch(id string) *list.Element {
	now := time.Now()
	if e, ok := l.byID[id]; ok {
		e.Value.(*trackedSession).last = now
		l.lru.MoveToFront(e)
		return e
	}
	e := l.lru.PushFront(&trackedSession{id: id, last: now})
	l.byID[id] = e
	return e
}

// overflow removes the sessions over the bound, oldest idle first, and
// returns the ids to end; never keep, the session of the request at hand
// (a session just opened would otherwise be ended when every other one is
// busy). Sessions mcp-go has already forgotten (idle past
// session_idle_timeout) are dropped without ending. l.mu is held.
func (l *Limit) overflow(keep *list.Element) []string {
	var evict []string
	now := time.Now()
	for e := l.lru.Back(); e != nil && l.lru.Len() > l.max; {
		prev := e.Prev()
		s := e.Value.(*trackedSession)
		if s.busy == 0 && e != keep {
			l.lru.Remove(e)
			delete(l.byID, s.id)
			if now.Sub(s.last) < l.idle {
				evict = append(evict, s.id)
			}
		}
		e = prev
	}
	return evict
}

func (l *Limit) endAll(ids []string) {
	for _, id := range ids {
		l.end(id)
	}
}

// Track counts a request against max_sessions: a request of a session
// (admitted by IDs.Admit) marks it busy until the returned func runs;
// after an initialize the new session is recorded; a DELETE forgets it.
func (l *Limit) Track(w http.ResponseWriter, r *http.Request) (after func()) {
	sid := r.Header.Get(server.HeaderKeySessionID)
	if sid == "" {
		return func() {
			if id := w.Header().Get(server.HeaderKeySessionID); id != "" {
				l.opened(id)
			}
		}
	}
	if CheckOf(r) == nil {
		return func() {} // a 2026-07-28 request: the header names no session
	}
	if r.Method == http.MethodDelete {
		return func() { l.closed(sid) }
	}
	return l.begin(sid)
}

// End ends a session in mcp-go as the client's DELETE does: the id is
// marked ended (the resolver's Terminate) and every piece of the
// transport's state for it is dropped.
func End(streamable *server.StreamableHTTPServer, id string) {
	req, err := http.NewRequestWithContext(context.WithValue(context.Background(), evictionKey{}, true), http.MethodDelete, "/", nil)
	if err != nil {
		return
	}
	req.Header.Set(server.HeaderKeySessionID, id)
	streamable.ServeHTTP(discardWriter{header: http.Header{}}, req)
}

// discardWriter is the response of an internal request nobody reads.
type discardWriter struct{ header http.Header }

func (d discardWriter) Header() http.Header         { return d.header }
func (d discardWriter) Write(b []byte) (int, error) { return len(b), nil }
func (d discardWriter) WriteHeader(int)             {}
