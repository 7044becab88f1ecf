package tasks

import (
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"errors"

	"github.com/edgemcp/edgemcp/pipeline"
)

// A task belongs to the verified caller who made it. What is kept is the
// name of the auth provider that verified the caller, in clear (it says
// which provider verifies a later request about the task), and a hash of
// provider and subject: neither the subject nor a claim is stored. Claims
// are left out on purpose: a token renewed with other scopes still names
// the same caller.

// ErrNotFound is the answer for a task that does not exist, has expired,
// or belongs to another caller: the three cannot be told apart.
var ErrNotFound = errors.New("task not found")

// Owner is the key of the caller id for a task: a hash of the provider's
// name and the subject. nil is the anonymous caller of an endpoint
// without auth, whose tasks anyone holding their (unguessable) id reads.
func Owner(id *pipeline.Identity) string {
	h := sha256.New()
	h.Write([]byte("edgemcp task owner\x00"))
	if id != nil {
		h.Write([]byte(id.Provider))
		h.Write([]byte{0})
		h.Write([]byte(id.Subject))
	}
	return hex.EncodeToString(h.Sum(nil))
}

// Who verifies the caller of a request about a task with the auth
// provider named provider (the one that verified the task's creator) and
// returns the identity it verified; ok is false when that provider does
// not verify this request's caller, and the task is then "not found".
type Who func(provider string) (id *pipeline.Identity, ok bool)

// owns reports whether the caller of the request, as who verifies it, is
// the one whose owner key and provider a task was kept with.
func owns(who Who, provider, owner string) bool {
	if provider == "" {
		return owner == Owner(nil)
	}
	if who == nil {
		return false
	}
	id, ok := who(provider)
	return ok && id != nil && id.Provider == provider && Owner(id) == owner
}

// newID is a task id: 128 random bits in base64url, which no one can
// guess or enumerate.
func newID() string {
	var b [16]byte
	_, _ = rand.Read(b[:]) // never fails (crypto/rand)
	return base64.RawURLEncoding.EncodeToString(b[:])
}
