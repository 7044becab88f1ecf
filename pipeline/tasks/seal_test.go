package tasks

import (
	"errors"
	"strings"
	"testing"

	"github.com/edgemcp/edgemcp/pipeline"
)

// TestSeal: an upstream's task id, sealed for its source and its creator,
// opens for that caller only. Another caller (even of the same upstream
// session), another provider's caller with the same subject, a changed
// source or id, another key and an id Seal did not make are all "not
// found"; an anonymous caller's sealed id opens for the anonymous caller.
func TestSeal(t *testing.T) {
	key := []byte("0123456789abcdef0123456789abcdef")
	sealed := Seal(key, "files", "7", alice)
	if !IsSealed(sealed) || strings.Contains(sealed, "alice") {
		t.Fatalf("sealed id %q", sealed)
	}
	source, id, err := Unseal(key, sealed, as(alice))
	if err != nil || source != "files" || id != "7" {
		t.Fatalf("unseal: %q %q %v", source, id, err)
	}
	parts := strings.Split(sealed, ".")
	forged := func(i int, value string) string {
		p := append([]string(nil), parts...)
		p[i] = value
		return strings.Join(p, ".")
	}
	other := Seal(key, "other", "7", alice)
	refused := []struct {
		what   string
		sealed string
		who    Who
		key    []byte
	}{
		{"another caller", sealed, as(bob), key},
		{"another provider, same subject", sealed, as(&pipeline.Identity{Provider: "keys", Subject: "alice"}), key},
		{"anonymous", sealed, as(nil), key},
		{"another source", forged(1, strings.Split(other, ".")[1]), as(alice), key},
		{"another upstream id", forged(3, "OA"), as(alice), key},
		{"another key", sealed, as(alice), []byte("another key")},
		{"not sealed", "abc", as(alice), key},
		{"garbage", "u.!!.x.y.z", as(alice), key},
	}
	for _, r := range refused {
		if _, _, err := Unseal(r.key, r.sealed, r.who); !errors.Is(err, ErrNotFound) {
			t.Errorf("%s: %v", r.what, err)
		}
	}
	anon := Seal(key, "files", "8", nil)
	if _, id, err := Unseal(key, anon, as(nil)); err != nil || id != "8" {
		t.Fatalf("anonymous: %q %v", id, err)
	}
	if IsSealed(newID()) {
		t.Fatal("a gateway task id reads as sealed")
	}
}
