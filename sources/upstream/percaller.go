package upstream

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"strings"
	"time"

	"github.com/caddyserver/caddy/v2"
	"github.com/edgemcp/edgemcp/internal/sharedstore"
	"github.com/edgemcp/edgemcp/pipeline"
)

// CallerDependent is implemented by credentials whose value depends on the
// caller: a result fetched with one must never be served to another
// caller (the result cache keys it by identity).
type CallerDependent interface {
	DependsOnCaller()
}

func (Passthrough) DependsOnCaller() {}
func (*PerCaller) DependsOnCaller()  {}

// PerCaller is a credential chosen by the caller's verified identity
// (`credential per_caller bearer|api_key ... { file|redis ...; by ... }`):
// the caller's subject, or one of its claims, is looked up in a file or in
// Redis, and the secret found there is sent as a bearer token or an API
// key. A caller with no identity, or none on file, is refused before any
// request is sent.
type PerCaller struct {
	As     Credential // the form: Bearer or APIKey (its secret is replaced)
	Claim  string     // "" looks up the subject
	lookup func(ctx context.Context, key string) (string, bool, error)
}

// Apply implements Credential.
func (p *PerCaller) Apply(ctx context.Context, req *http.Request, call *pipeline.Call) error {
	var id *pipeline.Identity
	if call != nil {
		id = call.Identity
	}
	if id == nil {
		return &pipeline.PublicError{Public: "credential per_caller: the call has no verified identity (add an auth provider)"}
	}
	key := id.Subject
	if p.Claim != "" {
		v, ok := id.Claims[p.Claim].(string)
		if !ok || v == "" {
			return &pipeline.PublicError{Public: fmt.Sprintf("credential per_caller: the identity has no %q claim", p.Claim)}
		}
		key = v
	}
	secret, ok, err := p.lookup(ctx, key)
	if err != nil {
		return Failed("credential per_caller: the credential store does not answer", err)
	}
	if !ok {
		return &pipeline.PublicError{Public: "credential per_caller: no upstream credential for this caller"}
	}
	switch as := p.As.(type) {
	case Bearer:
		return Bearer{Token: secret}.Apply(ctx, req, call)
	case APIKey:
		as.Value = secret
		return as.Apply(ctx, req, call)
	}
	return fmt.Errorf("credential per_caller: unsupported form %T", p.As)
}

// Reserves implements Credential: what its form sets.
func (p *PerCaller) Reserves() Reserved { return p.As.Reserves() }

// Close releases what the credential holds: nothing (see Built.Close).
func (p *PerCaller) Close() {}

// maxCredentialFile bounds a per_caller file.
const maxCredentialFile = 16 << 20

// perCallerFromFile reads `<key> <secret>` lines (blank lines and #
// comments skipped). Errors name the file and line, never a secret.
func perCallerFromFile(path string) (func(context.Context, string) (string, bool, error), error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	secrets := map[string]string{}
	sc := bufio.NewScanner(io.LimitReader(f, maxCredentialFile))
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		key, secret, ok := strings.Cut(line, " ")
		secret = strings.TrimSpace(secret)
		if !ok || secret == "" || strings.ContainsAny(secret, " \t") {
			return nil, fmt.Errorf("%s:%d: want \"<subject-or-claim> <secret>\"", path, n)
		}
		secrets[key] = secret
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("%s: %v", path, err)
	}
	return func(_ context.Context, key string) (string, bool, error) {
		s, ok := secrets[key]
		return s, ok, nil
	}, nil
}

// perCallerFromRedis looks up GET <prefix><key> in the shared store for
// the Redis at url (the guest module mcp.stores.redis, which Caddy cleans
// up with the config).
func perCallerFromRedis(ctx caddy.Context, url, prefix string, timeout time.Duration) (func(context.Context, string) (string, bool, error), error) {
	store, err := sharedstore.Redis(ctx, url, timeout)
	if err != nil {
		return nil, err
	}
	return func(ctx context.Context, key string) (string, bool, error) {
		ctx, cancel := context.WithTimeout(ctx, timeout)
		defer cancel()
		b, err := store.Get(ctx, prefix+key)
		if err != nil || b == nil {
			return "", false, err
		}
		return string(b), true, nil
	}, nil
}
