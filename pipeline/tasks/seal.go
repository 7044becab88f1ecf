package tasks

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"strings"

	"github.com/edgemcp/edgemcp/pipeline"
)

// An upstream's task (a source's TaskForwarder) leaves the gateway under a
// sealed id: the source's name and the upstream's id, bound by a MAC to
// the caller who created it, under a key every gateway node holds (the
// endpoint's session key). Two upstreams' ids cannot collide, a caller
// cannot name another source's task, and a caller cannot read another
// caller's task on an upstream session they share, however guessable the
// upstream's ids are. Nothing is stored: any node checks the seal.

// sealedPrefix starts every sealed id; a gateway task's id (base64url)
// never holds a '.'.
const sealedPrefix = "u."

// Seal is the id a client gets for the task upstreamID of source, created
// by the caller id (nil: anonymous).
func Seal(key []byte, source, upstreamID string, id *pipeline.Identity) string {
	provider := ""
	if id != nil {
		provider = id.Provider
	}
	enc := base64.RawURLEncoding.EncodeToString
	return sealedPrefix + enc([]byte(source)) + "." + enc([]byte(provider)) + "." + enc([]byte(upstreamID)) + "." +
		enc(sealMAC(key, source, provider, Owner(id), upstreamID))
}

// IsSealed reports whether a client's task id names an upstream's task.
func IsSealed(id string) bool { return strings.HasPrefix(id, sealedPrefix) }

// Unseal returns the source and the upstream's id of a sealed id, when
// the caller of this request (as who verifies it) is the one it was
// sealed for; any other caller, and any id Seal did not make, gets
// ErrNotFound.
func Unseal(key []byte, sealed string, who Who) (source, upstreamID string, err error) {
	parts := strings.Split(strings.TrimPrefix(sealed, sealedPrefix), ".")
	if !IsSealed(sealed) || len(parts) != 4 {
		return "", "", ErrNotFound
	}
	var fields [4][]byte
	for i, p := range parts {
		if fields[i], err = base64.RawURLEncoding.DecodeString(p); err != nil {
			return "", "", ErrNotFound
		}
	}
	source, upstreamID = string(fields[0]), string(fields[2])
	provider := string(fields[1])
	var id *pipeline.Identity
	if provider != "" {
		verified, ok := who(provider)
		if !ok || verified == nil || verified.Provider != provider {
			return "", "", ErrNotFound
		}
		id = verified
	}
	if !hmac.Equal(fields[3], sealMAC(key, source, provider, Owner(id), upstreamID)) {
		return "", "", ErrNotFound
	}
	return source, upstreamID, nil
}

// sealMAC binds the fields with HMAC-SHA256, cut to 128 bits.
func sealMAC(key []byte, source, provider, owner, upstreamID string) []byte {
	m := hmac.New(sha256.New, key)
	for _, f := range []string{"edgemcp upstream task", source, provider, owner, upstreamID} {
		m.Write([]byte(f))
		m.Write([]byte{0})
	}
	return m.Sum(nil)[:16]
}
