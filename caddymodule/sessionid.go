package caddymodule

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"hash"
	"net/http"
	"strings"
	"sync"

	"github.com/mark3labs/mcp-go/server"
)

// Session ids are signed, so that the gateway can tell an id it issued from
// one a caller made up (docs/security.md, "Sessions"). mcp-go's default
// manager accepts any well-formed UUID, which let a forged id reach the
// direct tools/call path. An id is
//
//	mcp-session-<nonce>.<tag>
//
// with a random 16-byte nonce and the first 16 bytes of
// HMAC-SHA256(key, sessionIDContext || nonce), both base64url. Nothing about
// the session is stored to verify it, so an id stays valid across `caddy
// reload` and on every gateway node that shares the key (`session_key`);
// without one, a random key is made once per process.

const (
	sessionIDPrefix  = "mcp-session-"
	sessionIDContext = "edgemcp session v1\x00"
	sessionNonceLen  = 16
	sessionTagLen    = 16
	// minSessionKeyLen is the shortest session_key accepted: a key is an
	// HMAC secret, and 32 bytes is SHA-256's output size.
	minSessionKeyLen = 32
	// maxEndedSessions bounds the memory of ids ended by DELETE.
	maxEndedSessions = 100000
)

// errBadSessionID is the one answer to any id the gateway did not issue;
// mcp-go turns it into 404 "Invalid session ID", as for an unknown session.
var errBadSessionID = errors.New("invalid session id")

// processSessionKey signs ids when no session_key is configured. It is made
// once per process, so ids survive reloads (which provision a new handler).
var processSessionKey = sync.OnceValue(func() []byte {
	k := make([]byte, minSessionKeyLen)
	if _, err := rand.Read(k); err != nil {
		panic("edgemcp: no randomness for the session key: " + err.Error())
	}
	return k
})

// endedSessions are the ids ended by a client's DELETE, for this process.
// They are remembered, up to maxEndedSessions (the oldest forgotten first),
// so that an ended session answers "Session terminated" on this node.
var endedSessions = newEndedSet(maxEndedSessions)

// sessionIDs implements mcp-go's SessionIdManager with signed ids: the first
// key signs, every key verifies (the others are previous keys, kept while a
// rotation is rolled out).
type sessionIDs struct {
	keys  [][]byte
	ended *endedSet
	// macs[i] holds *keyedMACs keyed with keys[i]. Keying one hashes the
	// key into two SHA-256 blocks; every request with a session verifies
	// its id, so that is done once per pooled MAC instead of once per
	// request.
	macsOnce sync.Once
	macs     []sync.Pool
}

// keyedMAC is a pooled HMAC with room for its sum, so that verifying an id
// allocates nothing.
type keyedMAC struct {
	mac hash.Hash
	sum [sha256.Size]byte
}

// sessionIDContextBytes is what every tag's input starts with.
var sessionIDContextBytes = []byte(sessionIDContext)

func newSessionIDs(keys [][]byte) *sessionIDs {
	if len(keys) == 0 {
		keys = [][]byte{processSessionKey()}
	}
	return &sessionIDs{keys: keys, ended: endedSessions}
}

var b64 = base64.RawURLEncoding

// tag is the first sessionTagLen bytes of HMAC-SHA256(keys[i],
// sessionIDContext || nonce), in a new slice.
func (s *sessionIDs) tag(i int, nonce []byte) []byte {
	var t [sessionTagLen]byte
	s.withTag(i, nonce, func(tag []byte) { copy(t[:], tag) })
	return t[:]
}

// withTag calls f with tag(i, nonce) in the pooled MAC's buffer, valid
// only during f.
func (s *sessionIDs) withTag(i int, nonce []byte, f func(tag []byte)) {
	s.macsOnce.Do(func() {
		s.macs = make([]sync.Pool, len(s.keys))
		for i, k := range s.keys {
			s.macs[i].New = func() any { return &keyedMAC{mac: hmac.New(sha256.New, k)} }
		}
	})
	m := s.macs[i].Get().(*keyedMAC)
	m.mac.Reset() // back to the keyed state
	m.mac.Write(sessionIDContextBytes)
	m.mac.Write(nonce)
	f(m.mac.Sum(m.sum[:0])[:sessionTagLen])
	s.macs[i].Put(m)
}

// Generate returns a new signed id.
func (s *sessionIDs) Generate() string {
	nonce := make([]byte, sessionNonceLen)
	if _, err := rand.Read(nonce); err != nil {
		panic("edgemcp: no randomness for a session id: " + err.Error())
	}
	return sessionIDPrefix + b64.EncodeToString(nonce) + "." + b64.EncodeToString(s.tag(0, nonce))
}

// verify reports whether id was signed by one of the keys. Every key is
// tried, whatever the outcome, so the time taken says nothing about which.
func (s *sessionIDs) verify(id string) bool {
	rest, ok := strings.CutPrefix(id, sessionIDPrefix)
	if !ok {
		return false
	}
	n, t, ok := strings.Cut(rest, ".")
	if !ok || len(n) != b64.EncodedLen(sessionNonceLen) || len(t) != b64.EncodedLen(sessionTagLen) {
		return false
	}
	var nonce [sessionNonceLen]byte
	var tag [sessionTagLen]byte
	if k, err := b64.Decode(nonce[:], []byte(n)); err != nil || k != len(nonce) {
		return false
	}
	if k, err := b64.Decode(tag[:], []byte(t)); err != nil || k != len(tag) {
		return false
	}
	valid := false
	for i := range s.keys {
		s.withTag(i, nonce[:], func(want []byte) {
			if hmac.Equal(tag[:], want) {
				valid = true
			}
		})
	}
	return valid
}

// Validate accepts an id this gateway (or one sharing its key) signed.
func (s *sessionIDs) Validate(id string) (terminated bool, err error) {
	if !s.verify(id) {
		return false, errBadSessionID
	}
	return s.ended.has(id), nil
}

// Terminate ends a session at the client's DELETE.
func (s *sessionIDs) Terminate(id string) (notAllowed bool, err error) {
	if !s.verify(id) {
		return false, errBadSessionID
	}
	s.ended.add(id)
	return false, nil
}

// sessionResolver gives mcp-go the signing manager for requests and, for its
// housekeeping (no request: Shutdown at a reload, the idle sweeper), a
// manager whose Terminate ends nothing. Shutting down one config's transport
// must not end the sessions its clients carry on with under the next one,
// and an idle sweep only forgets this node's state of a session that may be
// alive on another node.
type sessionResolver struct{ ids *sessionIDs }

func (r sessionResolver) ResolveSessionIdManager(req *http.Request) server.SessionIdManager {
	if req == nil {
		return housekeepingIDs{r.ids}
	}
	return r.ids
}

type housekeepingIDs struct{ *sessionIDs }

func (housekeepingIDs) Terminate(string) (bool, error) { return false, nil }

// endedSet is a bounded set of ids, forgetting the oldest when full.
type endedSet struct {
	mu    sync.Mutex
	limit int
	ids   map[string]struct{}
	order []string // ring of insertion order
	next  int
}

func newEndedSet(limit int) *endedSet {
	return &endedSet{limit: limit, ids: make(map[string]struct{})}
}

func (e *endedSet) add(id string) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if _, ok := e.ids[id]; ok {
		return
	}
	if len(e.order) < e.limit {
		e.order = append(e.order, id)
	} else {
		delete(e.ids, e.order[e.next])
		e.order[e.next] = id
		e.next = (e.next + 1) % e.limit
	}
	e.ids[id] = struct{}{}
}

func (e *endedSet) has(id string) bool {
	e.mu.Lock()
	defer e.mu.Unlock()
	_, ok := e.ids[id]
	return ok
}

// Interface guards.
var (
	_ server.SessionIdManager         = (*sessionIDs)(nil)
	_ server.SessionIdManagerResolver = sessionResolver{}
)
