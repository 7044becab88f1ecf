package auth

import (
	"context"
	"encoding/base64"
	"testing"

	"github.com/caddyserver/caddy/v2"
	"github.com/go-jose/go-jose/v4"
	"golang.org/x/crypto/bcrypt"
)

// What one request's authentication costs (run by hand:
// go test -run '^$' -bench . -benchtime 2s ./caddymodule/auth/).

func BenchmarkJWT(b *testing.B) {
	for _, alg := range []jose.SignatureAlgorithm{jose.ES256, jose.RS256, jose.EdDSA} {
		b.Run(string(alg), func(b *testing.B) {
			k := newSigningKey(b, "k", alg)
			srv := newJWKSServer(b, k)
			j := provisionJWT(b, &JWT{JWKSURL: srv.URL})
			std, extra := validClaims()
			req := bearer(k.token(b, std, extra))
			b.Run("verify", func(b *testing.B) {
				b.ReportAllocs()
				for b.Loop() {
					j.verified = newTokenCache() // every call verifies the signature
					if _, err := j.Authenticate(context.Background(), req); err != nil {
						b.Fatal(err)
					}
				}
			})
			b.Run("cached", func(b *testing.B) {
				b.ReportAllocs()
				for b.Loop() {
					if _, err := j.Authenticate(context.Background(), req); err != nil {
						b.Fatal(err)
					}
				}
			})
		})
	}
}

func BenchmarkAPIKey(b *testing.B) {
	a := &APIKey{}
	for i := range 100 {
		a.Keys = append(a.Keys, APIKeyEntry{Key: aliceKey + string(rune('a'+i%26)) + string(rune('a'+i/26))})
	}
	if err := a.Provision(caddy.Context{}); err != nil {
		b.Fatal(err)
	}
	req := withHeader("X-API-Key", a.Keys[99].Key)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := a.Authenticate(context.Background(), req); err != nil {
			b.Fatal(err)
		}
	}
}

// A repeated wrong Basic password: the first attempt pays bcrypt, repeats
// are answered from the refused-pairs set ("fresh" resets it every time,
// which is what each new guess costs).
func BenchmarkBasicWrongPassword(b *testing.B) {
	hash, err := bcrypt.GenerateFromPassword([]byte("s3cret-pass"), bcrypt.DefaultCost)
	if err != nil {
		b.Fatal(err)
	}
	basic := &Basic{Users: []BasicUser{{Username: "alice", Password: string(hash)}}}
	if err := basic.Provision(caddy.Context{}); err != nil {
		b.Fatal(err)
	}
	req := withHeader("Authorization", "Basic "+base64.StdEncoding.EncodeToString([]byte("alice:wrong")))
	for _, fresh := range []bool{true, false} {
		b.Run(map[bool]string{true: "fresh", false: "repeated"}[fresh], func(b *testing.B) {
			for b.Loop() {
				if fresh {
					basic.refused = newPairSet(maxRefusedCache)
				}
				if _, err := basic.Authenticate(context.Background(), req); err == nil {
					b.Fatal("accepted")
				}
			}
		})
	}
}
