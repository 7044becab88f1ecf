package auth

import (
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/caddyserver/caddy/v2"
	"golang.org/x/crypto/bcrypt"

	"github.com/edgemcp/edgemcp/pipeline"
)

// The key comparison is constant-time by construction, not by measurement:
// APIKey.Authenticate hashes the presented key to a fixed-size SHA-256
// digest and compares it with every configured digest using
// subtle.ConstantTimeCompare, without stopping at a match. Timing tests on
// a shared 2-core machine would only be noise.

const (
	aliceKey = "alice-key-0123456789abcdef"
	botKey   = "bot-key-fedcba9876543210"
	fileKey  = "file-key-aaaabbbbccccdddd"
)

func withHeader(name, value string) *pipeline.AuthRequest {
	h := http.Header{}
	if value != "" {
		h.Set(name, value)
	}
	return &pipeline.AuthRequest{Header: h}
}

func TestAPIKey(t *testing.T) {
	t.Setenv("EDGEMCP_TEST_BOT_KEY", botKey)
	sum := sha256.Sum256([]byte(fileKey))
	file := filepath.Join(t.TempDir(), "keys")
	content := "# hashed keys\n\nsha256:" + hex.EncodeToString(sum[:]) + " ci-runner deploy:read deploy:write\n"
	if err := os.WriteFile(file, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	a := &APIKey{
		Keys: []APIKeyEntry{
			{Key: aliceKey, Subject: "alice", Scopes: []string{"users:read"}},
			{Key: "{env.EDGEMCP_TEST_BOT_KEY}"},
		},
		KeyFile: file,
	}
	if err := a.Provision(caddy.Context{}); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name, header, value string
		subject, scope      string
		missing             bool
		refused             bool
	}{
		{name: "inline key", header: "X-API-Key", value: aliceKey, subject: "alice", scope: "users:read"},
		{name: "key from env", header: "X-API-Key", value: botKey, subject: "key-2"},
		{name: "key from file", header: "X-API-Key", value: fileKey, subject: "ci-runner", scope: "deploy:read deploy:write"},
		{name: "wrong key", header: "X-API-Key", value: aliceKey + "x", refused: true},
		{name: "prefix of a key", header: "X-API-Key", value: aliceKey[:10], refused: true},
		{name: "the file's hash itself", header: "X-API-Key", value: hex.EncodeToString(sum[:]), refused: true},
		{name: "missing header", header: "X-API-Key", value: "", missing: true},
		{name: "other header", header: "X-Other", value: aliceKey, missing: true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			id, err := a.Authenticate(context.Background(), withHeader(c.header, c.value))
			var ae *pipeline.AuthError
			switch {
			case c.missing:
				if !errors.As(err, &ae) || !ae.Missing {
					t.Fatalf("want missing credentials, got %v %v", id, err)
				}
			case c.refused:
				if !errors.As(err, &ae) || ae.Missing || ae.Reason != "unknown API key" {
					t.Fatalf("want unknown API key, got %v %v", id, err)
				}
				if strings.Contains(err.Error(), c.value) {
					t.Errorf("error repeats the key: %v", err)
				}
			default:
				if err != nil {
					t.Fatal(err)
				}
				if id.Subject != c.subject || strings.Join(id.Scopes(), " ") != c.scope {
					t.Errorf("identity %+v", id)
				}
			}
		})
	}
}

func TestAPIKeyBearer(t *testing.T) {
	a := &APIKey{Header: "Authorization", Keys: []APIKeyEntry{{Key: aliceKey, Subject: "alice"}}}
	if err := a.Provision(caddy.Context{}); err != nil {
		t.Fatal(err)
	}
	if id, err := a.Authenticate(context.Background(), withHeader("Authorization", "bearer "+aliceKey)); err != nil || id.Subject != "alice" {
		t.Fatalf("%v %v", id, err)
	}
	_, err := a.Authenticate(context.Background(), withHeader("X-API-Key", aliceKey))
	if ae := new(pipeline.AuthError); !errors.As(err, &ae) || !ae.Missing {
		t.Fatalf("a key in X-API-Key must not count when the header is Authorization: %v", err)
	}
}

func TestAPIKeyConfigErrors(t *testing.T) {
	bad := filepath.Join(t.TempDir(), "bad")
	_ = os.WriteFile(bad, []byte("plaintext-key alice\n"), 0o600)
	for name, a := range map[string]*APIKey{
		"no keys":         {},
		"short key":       {Keys: []APIKeyEntry{{Key: "short"}}},
		"unset env":       {Keys: []APIKeyEntry{{Key: "{env.EDGEMCP_TEST_UNSET_KEY}"}}},
		"unhashed file":   {KeyFile: bad},
		"missing file":    {KeyFile: "/nonexistent/keys"},
		"empty key value": {Keys: []APIKeyEntry{{Key: ""}}},
	} {
		err := a.Provision(caddy.Context{})
		if err == nil {
			t.Errorf("%s: accepted", name)
		} else if strings.Contains(err.Error(), "plaintext-key") {
			t.Errorf("%s: error repeats a key: %v", name, err)
		}
	}
}

func TestBasic(t *testing.T) {
	hash, err := bcrypt.GenerateFromPassword([]byte("s3cret-pass"), bcrypt.MinCost)
	if err != nil {
		t.Fatal(err)
	}
	b := &Basic{Users: []BasicUser{
		{Username: "alice", Password: string(hash), Scopes: []string{"admin"}},
		{Username: "bob", Password: base64.StdEncoding.EncodeToString(hash)}, // Caddy's older base64 form
	}}
	if err := b.Provision(caddy.Context{}); err != nil {
		t.Fatal(err)
	}
	basic := func(user, pass string) *pipeline.AuthRequest {
		return withHeader("Authorization", "Basic "+base64.StdEncoding.EncodeToString([]byte(user+":"+pass)))
	}
	for range 2 { // the second round is answered from the verified cache
		id, err := b.Authenticate(context.Background(), basic("alice", "s3cret-pass"))
		if err != nil || id.Subject != "alice" || id.Scopes()[0] != "admin" {
			t.Fatalf("%+v %v", id, err)
		}
	}
	if id, err := b.Authenticate(context.Background(), basic("bob", "s3cret-pass")); err != nil || id.Subject != "bob" {
		t.Fatalf("%+v %v", id, err)
	}
	for name, req := range map[string]*pipeline.AuthRequest{
		"wrong password": basic("alice", "wrong"),
		"unknown user":   basic("mallory", "s3cret-pass"),
		"malformed":      withHeader("Authorization", "Basic !!!"),
	} {
		_, err := b.Authenticate(context.Background(), req)
		var ae *pipeline.AuthError
		if !errors.As(err, &ae) || ae.Missing {
			t.Errorf("%s: want refusal, got %v", name, err)
		} else if strings.Contains(err.Error(), "s3cret") {
			t.Errorf("%s: error repeats the password", name)
		}
	}
	if _, err := b.Authenticate(context.Background(), withHeader("Authorization", "Bearer x")); err == nil {
		t.Error("a bearer token passed basic auth")
	}
	// Refused pairs are remembered (a retried wrong password costs no more
	// bcrypt runs), and are still refused; a right password is unaffected.
	if n := len(b.refused.m); n != 2 {
		t.Errorf("%d refused pairs remembered, want 2 (wrong password, unknown user)", n)
	}
	if _, err := b.Authenticate(context.Background(), basic("alice", "wrong")); err == nil {
		t.Error("a remembered wrong password passed")
	}
	if n := len(b.refused.m); n != 2 {
		t.Errorf("a retried pair was added again: %d", n)
	}
	small := newPairSet(2)
	for i := range 5 {
		small.add([32]byte{byte(i)})
	}
	if len(small.m) != 2 || !small.has([32]byte{4}) {
		t.Errorf("pair set not bounded: %d entries", len(small.m))
	}
	if err := (&Basic{Users: []BasicUser{{Username: "x", Password: "plain"}}}).Provision(caddy.Context{}); err == nil {
		t.Error("a plaintext password was accepted")
	}
}
