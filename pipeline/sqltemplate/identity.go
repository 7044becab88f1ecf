package sqltemplate

import (
	"fmt"
	"math"
	"slices"
	"sort"
	"strings"
)

// Identity is the verified caller as {{ auth.subject }} and
// {{ auth.claims.NAME }} read it (README, Statement templates). It comes
// from the auth provider only, never from the call's arguments.
type Identity struct {
	Subject string
	Claims  map[string]any
}

// authRef is one identity value a statement binds.
type authRef struct {
	claim  []string // the claim path; nil for the subject
	def    any      // "| default VALUE"
	hasDef bool
}

// MissingIdentityError is returned by Render when a statement binds an
// identity value the call's identity does not carry (no identity at all, an
// empty subject, or an absent or null claim) and the template gives no
// "| default". It is an authentication failure, not a NULL: a policy written
// as tenant = {{ auth.claims.tenant }} must not run with tenant = NULL.
type MissingIdentityError struct {
	Name string // auth.subject or auth.claims.a.b
}

func (e *MissingIdentityError) Error() string {
	if e.Name == "auth.subject" {
		return "the tool needs the caller's subject and the verified identity has none"
	}
	return fmt.Sprintf("the tool needs claim %q and the verified identity does not carry it", e.Name[len("auth.claims."):])
}

// Lookup is the value at name ("auth.subject", "auth.claims.a.b") in id.
func (id *Identity) Lookup(name string) (any, bool) {
	if id == nil || !isAuth(name) {
		return nil, false
	}
	if name == "auth.subject" {
		return id.Subject, id.Subject != ""
	}
	var cur any = id.Claims
	for _, part := range strings.Split(name[len("auth.claims."):], ".") {
		m, ok := cur.(map[string]any)
		if !ok {
			return nil, false
		}
		if cur, ok = m[part]; !ok {
			return nil, false
		}
	}
	if cur == nil {
		return nil, false
	}
	return claimValue(cur), true
}

// claimValue keeps a claim's JSON type for binding: a whole number (JSON
// decoders give float64) binds as an integer, so tenant_id = {{ ... }}
// compares with an integer column; lists and objects stay as they are
// (arrays or JSON, as the connector binds []any and maps).
func claimValue(v any) any {
	switch x := v.(type) {
	case float64:
		if x == math.Trunc(x) && math.Abs(x) <= 1<<53 {
			return int64(x)
		}
	case int:
		return int64(x)
	case int32:
		return int64(x)
	case float32:
		return claimValue(float64(x))
	case []string:
		out := make([]any, len(x))
		for i, s := range x {
			out[i] = s
		}
		return out
	}
	return v
}

// authValue is the argument bound for an identity value in this call.
func (s *Statement) authValue(name string, id *Identity) (any, error) {
	if v, ok := id.Lookup(name); ok {
		return v, nil
	}
	if ref := s.auth[name]; ref.hasDef {
		return ref.def, nil
	}
	return nil, &MissingIdentityError{Name: name}
}

// IdentityValues lists the identity values the statement binds
// (auth.subject, auth.claims.x), sorted; nil when it binds none. Tools
// that bind any need an auth provider and a per-identity cache.
func (s *Statement) IdentityValues() []string {
	if s == nil || len(s.auth) == 0 {
		return nil
	}
	out := make([]string, 0, len(s.auth))
	for n := range s.auth {
		out = append(out, n)
	}
	sort.Strings(out)
	return slices.Clip(out)
}
