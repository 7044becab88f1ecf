// Package session holds the state of MCP sessions on this node: their
// ids, max_sessions, max_concurrent and the ids of the requests the
// gateway sends in a session.
//
// Session ids are signed, so that the gateway can tell an id it issued from
// one a caller made up, and bound to the caller they were issued to
// (docs/security.md, "Session ids"). mcp-go's default manager accepts any
// well-formed UUID, which let a forged id reach the direct tools/call path,
// and any caller who learnt an id could use it. An id is
//
//	mcp-session-<nonce>.<tag>
//
// with a random 16-byte nonce and the first 16 bytes of
// HMAC-SHA256(key, sessionIDContext || nonce [|| owner]), both base64url
// without padding, decoded strictly: an id has one spelling. The owner is
// the caller the endpoint verified (default_auth): its provider and
// subject, each length-prefixed, then, for a session opened at a
// toolset's path, the toolset's name, length-prefixed too; at the
// endpoint without default_auth nothing follows the nonce. Nothing about
// the session is stored to verify it, so an id stays valid across `caddy
// reload` and on every gateway node that shares the key (`session_key`);
// without one, a random key is made once per process.
package session

import (
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
	"errors"
	"hash"
	"net/http"
	"strings"
	"sync"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
)

const (
	sessionIDPrefix  = "mcp-session-"
	sessionIDContext = "edgemcp session v1\x00"
	sessionNonceLen  = 16
	sessionTagLen    = 16
	// maxEndedSessions bounds the memory of ids ended by DELETE.
	maxEndedSessions = 100000
)

// MinKeyLen is the shortest session_key accepted: a key is an HMAC
// secret, and 32 bytes is SHA-256's output size.
const MinKeyLen = 32

// errBadSessionID is the one answer to any id the gateway did not issue to
// this caller; mcp-go turns it into 404 "Invalid session ID", as for an
// unknown session.
var errBadSessionID = errors.New("invalid session id")

// processSessionKey signs ids when no session_key is configured. It is made
// once per process, so ids survive reloads (which provision a new handler).
var processSessionKey = sync.OnceValue(func() []byte {
	k := make([]byte, MinKeyLen)
	if _, err := rand.Read(k); err != nil {
		panic("edgemcp: no randomness for the session key: " + err.Error())
	}
	return k
})

// endedSessions are the sessions ended by a client's DELETE, for this
// process, by nonce. They are remembered, up to maxEndedSessions (the
// oldest forgotten first), so that an ended session answers "Session
// terminated" on this node.
var endedSessions = newEndedSet(maxEndedSessions)

// Owner is who a session belongs to: the caller the endpoint verified, by
// provider name and subject, and the toolset whose path opened it (""
// for the endpoint itself). The zero value is nobody at the endpoint (an
// endpoint without default_auth).
type Owner struct{ Provider, Subject, Toolset string }

// IDs signs and verifies ids: the first key signs, every key verifies (the
// others are previous keys, kept while a rotation is rolled out).
type IDs struct {
	keys  [][]byte
	ended *endedSet
	owner func(context.Context) Owner // the owner of a request's sessions
	// macs[i] holds *keyedMAC keyed with keys[i]. Keying one hashes the
	// key into two SHA-256 blocks; every request with a session verifies
	// its id, so that is done once per pooled MAC instead of once per
	// request.
	macsOnce sync.Once
	macs     []sync.Pool
}

// keyedMAC is a pooled HMAC with room for its input and sum, so that
// verifying an id allocates nothing.
type keyedMAC struct {
	mac hash.Hash
	in  []byte
	sum [sha256.Size]byte
}

type sessionNonce = [sessionNonceLen]byte

// NewIDs returns the ids signed with keys (without any, a random key made
// once per process), owned by the caller owner finds in a request's
// context (nil: nobody).
func NewIDs(keys [][]byte, owner func(context.Context) Owner) *IDs {
	if len(keys) == 0 {
		keys = [][]byte{processSessionKey()}
	}
	return &IDs{keys: keys, ended: endedSessions, owner: owner}
}

// Keys are the session keys, the signing one first.
func (s *IDs) Keys() [][]byte { return s.keys }

// ownerOf is the owner r's sessions get.
func (s *IDs) ownerOf(ctx context.Context) Owner {
	if s.owner == nil {
		return Owner{}
	}
	return s.owner(ctx)
}

var b64 = base64.RawURLEncoding

// strictB64 refuses an encoding whose unused low bits are not zero: with
// the lengths fixed, an id then has exactly one spelling.
var strictB64 = base64.RawURLEncoding.Strict()

// tag sets dst to the first sessionTagLen bytes of HMAC-SHA256(keys[i],
// sessionIDContext || nonce || owner).
func (s *IDs) tag(dst *[sessionTagLen]byte, i int, nonce *sessionNonce, o Owner) {
	s.macsOnce.Do(func() {
		s.macs = make([]sync.Pool, len(s.keys))
		for i, k := range s.keys {
			s.macs[i].New = func() any { return &keyedMAC{mac: hmac.New(sha256.New, k)} }
		}
	})
	m := s.macs[i].Get().(*keyedMAC)
	m.in = append(append(m.in[:0], sessionIDContext...), nonce[:]...)
	if o != (Owner{}) {
		// Length-prefixed, so that no two owners give one input; the
		// toolset follows only when there is one, so that the endpoint's
		// ids are those signed before toolsets existed.
		m.in = binary.AppendUvarint(m.in, uint64(len(o.Provider)))
		m.in = append(m.in, o.Provider...)
		m.in = binary.AppendUvarint(m.in, uint64(len(o.Subject)))
		m.in = append(m.in, o.Subject...)
		if o.Toolset != "" {
			m.in = binary.AppendUvarint(m.in, uint64(len(o.Toolset)))
			m.in = append(m.in, o.Toolset...)
		}
	}
	m.mac.Reset() // back to the keyed state
	m.mac.Write(m.in)
	copy(dst[:], m.mac.Sum(m.sum[:0]))
	s.macs[i].Put(m)
}

// Generate returns a new id signed for owner o.
func (s *IDs) Generate(o Owner) string {
	var nonce sessionNonce
	if _, err := rand.Read(nonce[:]); err != nil {
		panic("edgemcp: no randomness for a session id: " + err.Error())
	}
	var t [sessionTagLen]byte
	s.tag(&t, 0, &nonce, o)
	return sessionIDPrefix + b64.EncodeToString(nonce[:]) + "." + b64.EncodeToString(t[:])
}

// parseSessionID splits an id into its nonce and tag, decoding strictly.
func parseSessionID(id string) (nonce sessionNonce, tag [sessionTagLen]byte, ok bool) {
	rest, ok := strings.CutPrefix(id, sessionIDPrefix)
	if !ok {
		return nonce, tag, false
	}
	n, t, ok := strings.Cut(rest, ".")
	if !ok || len(n) != b64.EncodedLen(sessionNonceLen) || len(t) != b64.EncodedLen(sessionTagLen) {
		return nonce, tag, false
	}
	if k, err := strictB64.Decode(nonce[:], []byte(n)); err != nil || k != len(nonce) {
		return nonce, tag, false
	}
	if k, err := strictB64.Decode(tag[:], []byte(t)); err != nil || k != len(tag) {
		return nonce, tag, false
	}
	return nonce, tag, true
}

// verify reports whether id was signed, by one of the keys, for owner o,
// and returns its nonce. Every key is tried, whatever the outcome, so the
// time taken says nothing about which.
func (s *IDs) verify(id string, o Owner) (sessionNonce, bool) {
	nonce, tag, ok := parseSessionID(id)
	if !ok {
		return nonce, false
	}
	valid := false
	var want [sessionTagLen]byte
	for i := range s.keys {
		s.tag(&want, i, &nonce, o)
		if hmac.Equal(tag[:], want[:]) {
			valid = true
		}
	}
	return nonce, valid
}

// Check is the verdict on one request's session id, made once by
// IDs.Admit and read by every path that needs it: mcp-go (it is the
// request's SessionIdManager, IDs.Resolver), the direct path and
// max_sessions. It also serves the requests that carry no id (initialize,
// a GET without one): it signs their new session for their caller.
type Check struct {
	ids   *IDs
	owner Owner
	id    string // the request's Mcp-Session-Id, "" when none
	nonce sessionNonce
	valid bool // id was issued to owner
}

type checkKey struct{}

// checkRequest is the verdict on r's Mcp-Session-Id for r's caller.
func (s *IDs) checkRequest(r *http.Request) *Check {
	return s.check(r.Header.Get(server.HeaderKeySessionID), s.ownerOf(r.Context()))
}

// check is the verdict on id (may be "") for owner.
func (s *IDs) check(id string, o Owner) *Check {
	c := &Check{ids: s, owner: o, id: id}
	if id != "" {
		c.nonce, c.valid = s.verify(id, o)
	}
	return c
}

// CheckOf is the verdict IDs.Admit left in the context; nil when the
// request carries no id (or a 2026-07-28 one, which mcp-go ignores).
func CheckOf(r *http.Request) *Check {
	c, _ := r.Context().Value(checkKey{}).(*Check)
	return c
}

// ID is the request's Mcp-Session-Id.
func (c *Check) ID() string { return c.id }

// Live reports whether the request's id is its caller's and not ended.
func (c *Check) Live() bool {
	return c != nil && c.valid && !c.ids.ended.has(c.nonce)
}

// Generate implements server.SessionIdManager: a new id for the caller.
func (c *Check) Generate() string { return c.ids.Generate(c.owner) }

// Validate implements server.SessionIdManager.
func (c *Check) Validate(id string) (terminated bool, err error) {
	nonce, ok := c.nonce, c.valid
	if id != c.id || c.id == "" {
		nonce, ok = c.ids.verify(id, c.owner)
	}
	if !ok {
		return false, errBadSessionID
	}
	return c.ids.ended.has(nonce), nil
}

// Terminate implements server.SessionIdManager: a client's DELETE ends
// its own session.
func (c *Check) Terminate(id string) (notAllowed bool, err error) {
	nonce, ok := c.nonce, c.valid
	if id != c.id || c.id == "" {
		nonce, ok = c.ids.verify(id, c.owner)
	}
	if !ok {
		return false, errBadSessionID
	}
	c.ids.ended.add(nonce)
	return false, nil
}

// Admit is the one gate for session ids (docs/security.md, "Session
// ids"): a request whose Mcp-Session-Id was not issued to its caller is
// answered 404 "Invalid session ID", exactly as mcp-go answers an unknown
// session, whatever its method (mcp-go itself never checks a GET's id); an
// ended one, but for its DELETE, 404 "Session terminated". It returns the
// request to go on with, its verdict in the context, or nil when it has
// answered. A 2026-07-28 request has no session: mcp-go ignores the header.
func (s *IDs) Admit(w http.ResponseWriter, r *http.Request) *http.Request {
	if r.Header.Get(server.HeaderKeySessionID) == "" || mcp.IsModernProtocol(r.Header.Get(mcp.HeaderProtocolVersion)) {
		return r
	}
	c := s.checkRequest(r)
	switch {
	case !c.valid:
		http.Error(w, "Invalid session ID", http.StatusNotFound)
		return nil
	case r.Method != http.MethodDelete && !c.Live():
		http.Error(w, "Session terminated", http.StatusNotFound)
		return nil
	}
	return r.WithContext(context.WithValue(r.Context(), checkKey{}, c))
}

// resolver gives mcp-go, for a request, the verdict on its id (Check); for its housekeeping (no request: Shutdown at a reload,
// the idle sweeper), a manager whose Terminate ends nothing. Shutting down
// one config's transport must not end the sessions its clients carry on
// with under the next one, and an idle sweep only forgets this node's state
// of a session that may be alive on another node. max_sessions ends a
// session with an internal DELETE (End), for an id that passed the gate
// when it was recorded.
type resolver struct{ ids *IDs }

// Resolver is the SessionIdManagerResolver mcp-go's transport is given.
func (s *IDs) Resolver() server.SessionIdManagerResolver { return resolver{s} }

func (r resolver) ResolveSessionIdManager(req *http.Request) server.SessionIdManager {
	switch {
	case req == nil:
		return housekeepingIDs{&Check{ids: r.ids}}
	case req.Context().Value(evictionKey{}) != nil:
		return evictingIDs{&Check{ids: r.ids}}
	}
	if c := CheckOf(req); c != nil {
		return c
	}
	return r.ids.checkRequest(req)
}

type housekeepingIDs struct{ *Check }

func (housekeepingIDs) Terminate(string) (bool, error) { return false, nil }

// evictionKey marks End's internal DELETE.
type evictionKey struct{}

type evictingIDs struct{ *Check }

func (e evictingIDs) Terminate(id string) (bool, error) {
	nonce, _, ok := parseSessionID(id)
	if !ok {
		return false, errBadSessionID
	}
	e.ids.ended.add(nonce)
	return false, nil
}

// endedSet is a bounded set of session nonces, forgetting the oldest when
// full.
type endedSet struct {
	mu    sync.Mutex
	limit int
	ids   map[sessionNonce]struct{}
	order []sessionNonce // ring of insertion order
	next  int
}

func newEndedSet(limit int) *endedSet {
	return &endedSet{limit: limit, ids: make(map[sessionNonce]struct{})}
}

func (e *endedSet) add(id sessionNonce) {
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

func (e *endedSet) has(id sessionNonce) bool {
	e.mu.Lock()
	defer e.mu.Unlock()
	_, ok := e.ids[id]
	return ok
}

// Interface guards.
var (
	_ server.SessionIdManager         = (*Check)(nil)
	_ server.SessionIdManagerResolver = resolver{}
)
