package session

import (
	"bytes"
	"crypto/hmac"
	"crypto/sha256"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/google/uuid"

	"github.com/edgemcp/edgemcp/caddymodule/session/sessiontest"
)

func testKey(c byte) []byte { return []byte(strings.Repeat(string(c), MinKeyLen)) }

// anyone is the owner of sessions on an endpoint without default_auth.
var anyone = Owner{}

func TestSessionIDsVerify(t *testing.T) {
	ids := &IDs{keys: [][]byte{testKey('a')}, ended: newEndedSet(10)}
	id := ids.Generate(anyone)
	if terminated, err := ids.check(id, anyone).Validate(id); err != nil || terminated {
		t.Fatalf("own id %q: terminated=%v err=%v", id, terminated, err)
	}
	if other := ids.Generate(anyone); other == id {
		t.Fatal("two ids alike")
	}
	reSigned := (&IDs{keys: [][]byte{testKey('b')}}).Generate(anyone)
	nonce, _, _ := strings.Cut(strings.TrimPrefix(id, sessionIDPrefix), ".")
	_, otherTag, _ := strings.Cut(strings.TrimPrefix(reSigned, sessionIDPrefix), ".")
	flipped := []byte(id)
	flipped[len(flipped)-3] ^= 1
	for name, bad := range map[string]string{
		"empty":                 "",
		"uuid (mcp-go's form)":  "mcp-session-" + uuid.NewString(),
		"truncated":             id[:len(id)-1],
		"extended":              id + "A",
		"no tag":                sessionIDPrefix + nonce,
		"empty tag":             sessionIDPrefix + nonce + ".",
		"flipped tag bit":       string(flipped),
		"re-signed, other key":  reSigned,
		"own nonce, other tag":  sessionIDPrefix + nonce + "." + otherTag,
		"no prefix":             strings.TrimPrefix(id, sessionIDPrefix),
		"padded base64":         id + "==",
		"not base64":            sessionIDPrefix + strings.Repeat("!", 22) + "." + strings.Repeat("!", 22),
		"uppercased":            strings.ToUpper(id),
		"whitespace around it":  " " + id,
		"other prefix, same id": "mcp-sessio-" + strings.TrimPrefix(id, sessionIDPrefix),
	} {
		c := ids.check(bad, anyone)
		if _, err := c.Validate(bad); err != errBadSessionID {
			t.Errorf("%s (%q): err=%v, want errBadSessionID", name, bad, err)
		}
		if _, err := c.Terminate(bad); err != errBadSessionID {
			t.Errorf("Terminate %s: err=%v, want errBadSessionID", name, err)
		}
	}
}

// An id has one spelling: the others (same bytes under a lenient base64
// decoder) are refused, so that an ended id cannot be served again under
// another name.
func TestSessionIDsCanonical(t *testing.T) {
	ids := &IDs{keys: [][]byte{testKey('a')}, ended: newEndedSet(10)}
	id := ids.Generate(anyone)
	others := sessiontest.OtherSpellings(id)
	if len(others) != 30 {
		t.Fatalf("%d other spellings, want 30", len(others))
	}
	for _, other := range others {
		if _, _, ok := parseSessionID(other); ok {
			t.Errorf("%q (another spelling of %q) is accepted", other, id)
		}
	}
}

// FuzzSessionIDCanonical: whatever string parses is the one encoding of
// its bytes.
func FuzzSessionIDCanonical(f *testing.F) {
	ids := &IDs{keys: [][]byte{testKey('a')}}
	id := ids.Generate(anyone)
	f.Add(id)
	for _, o := range sessiontest.OtherSpellings(id)[:4] {
		f.Add(o)
	}
	f.Add(id + "\n")
	f.Add(strings.Replace(id, ".", "\r.", 1))
	f.Fuzz(func(t *testing.T, s string) {
		nonce, tag, ok := parseSessionID(s)
		if !ok {
			return
		}
		if canon := sessionIDPrefix + b64.EncodeToString(nonce[:]) + "." + b64.EncodeToString(tag[:]); canon != s {
			t.Fatalf("%q parses, but its bytes are spelt %q", s, canon)
		}
	})
}

// An id is its owner's: another owner (or nobody) gets errBadSessionID
// for it, the answer to an id never issued.
func TestSessionIDsBoundToOwner(t *testing.T) {
	ids := &IDs{keys: [][]byte{testKey('a')}, ended: newEndedSet(10)}
	alice := Owner{Provider: "sso", Subject: "alice"}
	id := ids.Generate(alice)
	if _, err := ids.check(id, alice).Validate(id); err != nil {
		t.Fatalf("alice's own id: %v", err)
	}
	for _, other := range []Owner{{"sso", "bob", ""}, {"keys", "alice", ""}, anyone, {"sso", "alic", ""}, {"ssoa", "lice", ""}, {"sso", "alice\x00", ""},
		{"sso", "alice", "triage"}, {"", "", "triage"}} {
		c := ids.check(id, other)
		if _, err := c.Validate(id); err != errBadSessionID {
			t.Errorf("%+v validates alice's id: %v", other, err)
		}
		if _, err := c.Terminate(id); err != errBadSessionID {
			t.Errorf("%+v terminates alice's id: %v", other, err)
		}
	}
	if terminated, _ := ids.check(id, alice).Validate(id); terminated {
		t.Error("another owner's Terminate ended alice's session")
	}
	unowned := ids.Generate(anyone)
	if _, err := ids.check(unowned, alice).Validate(unowned); err != errBadSessionID {
		t.Errorf("alice validates an unowned id: %v", err)
	}
	// A toolset's session, without a verified caller, is the toolset's
	// alone: neither the endpoint nor another toolset takes it.
	docs := Owner{Toolset: "docs"}
	tid := ids.Generate(docs)
	for _, other := range []Owner{anyone, {Toolset: "triage"}, {Toolset: "doc"}, {Provider: "docs"}} {
		if _, err := ids.check(tid, other).Validate(tid); err != errBadSessionID {
			t.Errorf("%+v validates the docs toolset's id: %v", other, err)
		}
	}
	if _, err := ids.check(tid, docs).Validate(tid); err != nil {
		t.Errorf("the docs toolset's own id: %v", err)
	}
}

// Rotation: the new key signs, the previous one still verifies; ids of a key
// no longer listed are refused.
func TestSessionIDsRotation(t *testing.T) {
	old := &IDs{keys: [][]byte{testKey('a')}, ended: newEndedSet(10)}
	rotated := &IDs{keys: [][]byte{testKey('b'), testKey('a')}, ended: newEndedSet(10)}
	after := &IDs{keys: [][]byte{testKey('b')}, ended: newEndedSet(10)}
	alice := Owner{Provider: "sso", Subject: "alice"}
	oldID, newID := old.Generate(alice), rotated.Generate(alice)
	valid := func(ids *IDs, id string) bool { return ids.check(id, alice).valid }
	if !valid(rotated, oldID) {
		t.Error("rotated keys refuse an id of the previous key")
	}
	if !valid(after, newID) {
		t.Error("an id of the new key is refused once the old one is dropped")
	}
	if valid(after, oldID) {
		t.Error("an id of a dropped key is accepted")
	}
	if valid(old, newID) {
		t.Error("the old key accepts an id of the new one")
	}
}

func TestSessionIDsTerminate(t *testing.T) {
	ids := &IDs{keys: [][]byte{testKey('a')}, ended: newEndedSet(10)}
	id := ids.Generate(anyone)
	if _, err := ids.check(id, anyone).Terminate(id); err != nil {
		t.Fatal(err)
	}
	if terminated, err := ids.check(id, anyone).Validate(id); err != nil || !terminated {
		t.Errorf("after Terminate: terminated=%v err=%v", terminated, err)
	}
	// mcp-go's housekeeping (reload, idle sweep) ends nothing.
	other := ids.Generate(anyone)
	mgr := ids.Resolver().ResolveSessionIdManager(nil)
	if _, err := mgr.Terminate(other); err != nil {
		t.Fatal(err)
	}
	if terminated, _ := ids.check(other, anyone).Validate(other); terminated {
		t.Error("housekeeping Terminate ended a session")
	}
	if got, ok := ids.Resolver().ResolveSessionIdManager(&http.Request{}).(*Check); !ok || got.ids != ids {
		t.Errorf("a request gets %T, want its Check", got)
	}
}

// The memory of ended sessions is bounded: the oldest are forgotten.
func TestEndedSetIsBounded(t *testing.T) {
	e := newEndedSet(3)
	n := func(i int) sessionNonce { return sessionNonce{byte(i)} }
	for i := range 5 {
		e.add(n(i))
		e.add(n(i)) // twice: counted once
	}
	if len(e.ids) != 3 || len(e.order) != 3 {
		t.Fatalf("%d ids, %d in order, want 3", len(e.ids), len(e.order))
	}
	for i, want := range []bool{false, false, true, true, true} {
		if got := e.has(n(i)); got != want {
			t.Errorf("has(%d) = %v, want %v", i, got, want)
		}
	}
}

// BenchmarkSessionIDValidate is the gate's work for a request that
// carries a session id: the verdict for its (verified) caller.
func BenchmarkSessionIDValidate(b *testing.B) {
	ids := &IDs{keys: [][]byte{testKey('a')}, ended: newEndedSet(10)}
	alice := Owner{Provider: "sso", Subject: "alice@example.com"}
	id := ids.Generate(alice)
	for b.Loop() {
		if !ids.check(id, alice).Live() {
			b.Fatal("refused")
		}
	}
}

// TestSessionTagPooledMACs: tags from the pooled, once-keyed MACs are the
// HMAC of the id's definition, for every key and owner, however often and
// however concurrently a MAC is reused.
func TestSessionTagPooledMACs(t *testing.T) {
	ids := &IDs{keys: [][]byte{testKey('a'), testKey('b')}}
	want := func(key []byte, nonce sessionNonce, o Owner) []byte {
		mac := hmac.New(sha256.New, key)
		mac.Write([]byte(sessionIDContext))
		mac.Write(nonce[:])
		if o != anyone {
			mac.Write(append([]byte{byte(len(o.Provider))}, o.Provider...))
			mac.Write(append([]byte{byte(len(o.Subject))}, o.Subject...))
		}
		return mac.Sum(nil)[:sessionTagLen]
	}
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Go(func() {
			for n := range 200 {
				var nonce sessionNonce
				copy(nonce[:], fmt.Sprintf("nonce %02d %04d...", g, n))
				o := []Owner{anyone, {"sso", fmt.Sprint("user", n), ""}}[n%2]
				for i, k := range ids.keys {
					var got [sessionTagLen]byte
					if ids.tag(&got, i, &nonce, o); !bytes.Equal(got[:], want(k, nonce, o)) {
						t.Errorf("key %d, nonce %q, owner %v: tag %x, want %x", i, nonce, o, got, want(k, nonce, o))
						return
					}
				}
			}
		})
	}
	wg.Wait()
}
