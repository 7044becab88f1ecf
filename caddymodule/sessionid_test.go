package caddymodule

import (
	"bytes"
	"crypto/hmac"
	"crypto/sha256"
	"fmt"
	"net/http"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/google/uuid"
)

func testKey(c byte) []byte { return []byte(strings.Repeat(string(c), minSessionKeyLen)) }

// anyone is the owner of sessions on an endpoint without default_auth.
var anyone = sessionOwner{}

func TestSessionIDsVerify(t *testing.T) {
	ids := &sessionIDs{keys: [][]byte{testKey('a')}, ended: newEndedSet(10)}
	id := ids.generate(anyone)
	if terminated, err := ids.check(id, anyone).Validate(id); err != nil || terminated {
		t.Fatalf("own id %q: terminated=%v err=%v", id, terminated, err)
	}
	if other := ids.generate(anyone); other == id {
		t.Fatal("two ids alike")
	}
	reSigned := (&sessionIDs{keys: [][]byte{testKey('b')}}).generate(anyone)
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

// otherSpellings are the strings that decode, leniently, to the bytes of
// id: the last character of each part carries 2 bits of data and 4 that a
// lenient decoder ignores.
func otherSpellings(id string) []string {
	rest := strings.TrimPrefix(id, sessionIDPrefix)
	n, tag, _ := strings.Cut(rest, ".")
	alphabet := "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"
	var out []string
	for _, part := range []int{0, 1} {
		p := []string{n, tag}[part]
		last := strings.IndexByte(alphabet, p[len(p)-1])
		for low := range 16 {
			c := alphabet[last&^15|low]
			if c == p[len(p)-1] {
				continue
			}
			q := []string{n, tag}
			q[part] = p[:len(p)-1] + string(c)
			out = append(out, sessionIDPrefix+q[0]+"."+q[1])
		}
	}
	return out
}

// An id has one spelling: the others (same bytes under a lenient base64
// decoder) are refused, so that an ended id cannot be served again under
// another name.
func TestSessionIDsCanonical(t *testing.T) {
	ids := &sessionIDs{keys: [][]byte{testKey('a')}, ended: newEndedSet(10)}
	id := ids.generate(anyone)
	others := otherSpellings(id)
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
	ids := &sessionIDs{keys: [][]byte{testKey('a')}}
	id := ids.generate(anyone)
	f.Add(id)
	for _, o := range otherSpellings(id)[:4] {
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
	ids := &sessionIDs{keys: [][]byte{testKey('a')}, ended: newEndedSet(10)}
	alice := sessionOwner{"sso", "alice"}
	id := ids.generate(alice)
	if _, err := ids.check(id, alice).Validate(id); err != nil {
		t.Fatalf("alice's own id: %v", err)
	}
	for _, other := range []sessionOwner{{"sso", "bob"}, {"keys", "alice"}, anyone, {"sso", "alic"}, {"ssoa", "lice"}, {"sso", "alice\x00"}} {
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
	unowned := ids.generate(anyone)
	if _, err := ids.check(unowned, alice).Validate(unowned); err != errBadSessionID {
		t.Errorf("alice validates an unowned id: %v", err)
	}
}

// Rotation: the new key signs, the previous one still verifies; ids of a key
// no longer listed are refused.
func TestSessionIDsRotation(t *testing.T) {
	old := &sessionIDs{keys: [][]byte{testKey('a')}, ended: newEndedSet(10)}
	rotated := &sessionIDs{keys: [][]byte{testKey('b'), testKey('a')}, ended: newEndedSet(10)}
	after := &sessionIDs{keys: [][]byte{testKey('b')}, ended: newEndedSet(10)}
	alice := sessionOwner{"sso", "alice"}
	oldID, newID := old.generate(alice), rotated.generate(alice)
	valid := func(ids *sessionIDs, id string) bool { return ids.check(id, alice).valid }
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
	ids := &sessionIDs{keys: [][]byte{testKey('a')}, ended: newEndedSet(10)}
	id := ids.generate(anyone)
	if _, err := ids.check(id, anyone).Terminate(id); err != nil {
		t.Fatal(err)
	}
	if terminated, err := ids.check(id, anyone).Validate(id); err != nil || !terminated {
		t.Errorf("after Terminate: terminated=%v err=%v", terminated, err)
	}
	// mcp-go's housekeeping (reload, idle sweep) ends nothing.
	other := ids.generate(anyone)
	mgr := sessionResolver{ids}.ResolveSessionIdManager(nil)
	if _, err := mgr.Terminate(other); err != nil {
		t.Fatal(err)
	}
	if terminated, _ := ids.check(other, anyone).Validate(other); terminated {
		t.Error("housekeeping Terminate ended a session")
	}
	if got, ok := (sessionResolver{ids}).ResolveSessionIdManager(&http.Request{}).(*sessionCheck); !ok || got.ids != ids {
		t.Errorf("a request gets %T, want its sessionCheck", got)
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
	ids := &sessionIDs{keys: [][]byte{testKey('a')}, ended: newEndedSet(10)}
	alice := sessionOwner{"sso", "alice@example.com"}
	id := ids.generate(alice)
	for b.Loop() {
		if !ids.check(id, alice).live() {
			b.Fatal("refused")
		}
	}
}

func sessionCaddyfile(t *testing.T, sites ...string) string {
	seed, _ := filepath.Abs("../examples/data/demo.sql")
	db := filepath.Join(t.TempDir(), "sess.db")
	var b strings.Builder
	for _, site := range sites {
		addr, key, _ := strings.Cut(site, " ")
		fmt.Fprintf(&b, `%s {
	bind 127.0.0.1
	mcp /mcp {
		%s
		connector lite sqlite %q {
			read_only
			seed %q
		}
		tool count-customers {
			description "Counts customers"
			use lite
			statement "SELECT count(*) AS n FROM customers"
		}
	}
}
`, addr, key, db, seed)
	}
	return b.String()
}

// callWith sends a direct-path-eligible tools/call with the given session id
// to url and returns the status and body.
func callWith(t *testing.T, url, session string) (int, string) {
	t.Helper()
	res, body := httpDo(t, "POST", url, map[string]string{"Mcp-Session-Id": session, "Mcp-Protocol-Version": "2025-06-18"},
		`{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"count-customers","arguments":{}}}`)
	return res.StatusCode, body
}

func initSession(t *testing.T, url string) string {
	t.Helper()
	res, body := httpDo(t, "POST", url, nil, initializeBody)
	id := res.Header.Get("Mcp-Session-Id")
	if res.StatusCode != http.StatusOK || id == "" {
		t.Fatalf("initialize at %s: %d %q", url, res.StatusCode, body)
	}
	return id
}

// A session id the gateway did not sign gets the answer an unknown session
// gets (404 "Invalid session ID"), on the direct path as through mcp-go, and
// never reaches the tool.
func TestForgedSessionIDsAreUnknown(t *testing.T) {
	g := startGateway(t, sessionCaddyfile(t, "SITE"))
	id := initSession(t, g.URL)
	if status, body := callWith(t, g.URL, id); status != http.StatusOK || !strings.Contains(body, `\"n\":`) {
		t.Fatalf("the issued id: %d %q", status, body)
	}
	reSigned := (&sessionIDs{keys: [][]byte{testKey('z')}}).generate(anyone)
	_, unknownBody := callWith(t, g.URL, "garbage")
	before := directCount()
	for name, forged := range map[string]string{
		"uuid form":  "mcp-session-" + uuid.NewString(),
		"truncated":  id[:len(id)-2],
		"re-signed":  reSigned,
		"tag of one": strings.SplitN(id, ".", 2)[0] + "." + strings.SplitN(reSigned, ".", 2)[1],
	} {
		status, body := callWith(t, g.URL, forged)
		if status != http.StatusNotFound || body != unknownBody {
			t.Errorf("%s id: %d %q, want 404 %q", name, status, body, unknownBody)
		}
	}
	if n := directCount() - before; n != 0 {
		t.Errorf("the direct path answered %d forged calls", n)
	}
}

// Nodes (here: sites on two ports, each its own handler) that share a
// session_key accept each other's sessions; a different key does not; the
// previous key listed after the new one keeps old sessions during a rotation.
// A DELETE ends the session; ids survive a reload.
func TestSessionKeyShared(t *testing.T) {
	t.Setenv("EDGEMCP_SESSION_KEY_A", string(testKey('k')))
	g := startGateway(t, "")
	ports := []int{g.port, freePort(t), freePort(t), freePort(t)}
	sites := []string{
		fmt.Sprintf("http://:%d session_key {env.EDGEMCP_SESSION_KEY_A}", ports[0]),
		fmt.Sprintf("http://:%d session_key %s", ports[1], testKey('k')),
		fmt.Sprintf("http://:%d session_key %s", ports[2], testKey('o')),
		fmt.Sprintf("http://:%d session_key %s {env.EDGEMCP_SESSION_KEY_A}", ports[3], testKey('n')),
	}
	cfg := sessionCaddyfile(t, sites...)
	if err := g.load(cfg); err != nil {
		t.Fatal(err)
	}
	url := func(i int) string { return fmt.Sprintf("http://127.0.0.1:%d/mcp", ports[i]) }
	id := initSession(t, url(0))
	for i, want := range []int{200, 200, 404, 200} {
		if status, body := callWith(t, url(i), id); status != want {
			t.Errorf("site %d (%s): %d %q, want %d", i, sites[i], status, body, want)
		}
	}
	// A reload (here: the same config again with one change) keeps sessions.
	if err := g.load(strings.Replace(cfg, "Counts customers", "Counts the customers", 1)); err != nil {
		t.Fatal(err)
	}
	if status, body := callWith(t, url(1), id); status != http.StatusOK {
		t.Errorf("after reload: %d %q", status, body)
	}
	res, body := httpDo(t, "DELETE", url(0), map[string]string{"Mcp-Session-Id": id}, "")
	if res.StatusCode != http.StatusOK {
		t.Fatalf("DELETE: %d %q", res.StatusCode, body)
	}
	if status, body := callWith(t, url(0), id); status != http.StatusNotFound || !strings.Contains(body, "terminated") {
		t.Errorf("after DELETE: %d %q, want 404 Session terminated", status, body)
	}
}

// TestSessionTagPooledMACs: tags from the pooled, once-keyed MACs are the
// HMAC of the id's definition, for every key and owner, however often and
// however concurrently a MAC is reused.
func TestSessionTagPooledMACs(t *testing.T) {
	ids := &sessionIDs{keys: [][]byte{testKey('a'), testKey('b')}}
	want := func(key []byte, nonce sessionNonce, o sessionOwner) []byte {
		mac := hmac.New(sha256.New, key)
		mac.Write([]byte(sessionIDContext))
		mac.Write(nonce[:])
		if o != anyone {
			mac.Write(append([]byte{byte(len(o.provider))}, o.provider...))
			mac.Write(append([]byte{byte(len(o.subject))}, o.subject...))
		}
		return mac.Sum(nil)[:sessionTagLen]
	}
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Go(func() {
			for n := range 200 {
				var nonce sessionNonce
				copy(nonce[:], fmt.Sprintf("nonce %02d %04d...", g, n))
				o := []sessionOwner{anyone, {"sso", fmt.Sprint("user", n)}}[n%2]
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
