package guardrail

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"path"
	"strconv"
	"strings"
	"time"

	"github.com/edgemcp/edgemcp/pipeline"
)

// Requires lets Tool run only after Needs has succeeded in the same
// conversation; WithinCalls (Needs among the conversation's last n
// successful calls) or Within (no longer ago than that) narrow it.
type Requires struct {
	Tool        string
	Needs       string
	WithinCalls int
	Within      time.Duration
}

// After refuses, once a tool Tool matches has succeeded in a
// conversation, every tool Deny matches in it. Tool and Deny are names or
// patterns (path.Match: pii_*).
type After struct {
	Tool string
	Deny []string
}

// Config declares the guardrails of one configuration.
type Config struct {
	Requires []Requires
	After    []After
	// Store keeps the record; required.
	Store Store
	// TTL is how long a conversation's record lasts after its last
	// recorded call; 0 means DefaultTTL.
	TTL time.Duration
	// Now is the clock; nil means time.Now.
	Now func() time.Time
}

// DefaultTTL outlasts any session a client keeps open in practice.
const DefaultTTL = 24 * time.Hour

// Guardrail is the checked Config, a pipeline.Sequencer.
type Guardrail struct {
	cfg      Config
	requires map[string][]Requires // by the guarded tool
	needed   map[string]bool       // tools some Requires needs
	counting bool                  // some Requires counts calls
}

// New checks cfg. A rule that names no tool, a malformed pattern, a
// negative window, or a tool that requires itself is an error.
func New(cfg Config) (*Guardrail, error) {
	if cfg.Store == nil {
		return nil, errors.New("guardrails need a store")
	}
	if cfg.TTL <= 0 {
		cfg.TTL = DefaultTTL
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	g := &Guardrail{cfg: cfg, requires: map[string][]Requires{}, needed: map[string]bool{}}
	for _, r := range cfg.Requires {
		switch {
		case r.Tool == "" || r.Needs == "":
			return nil, errors.New("requires: a tool and the tool it needs")
		case r.Tool == r.Needs:
			return nil, fmt.Errorf("requires: %s cannot need itself", r.Tool)
		case r.WithinCalls < 0 || r.Within < 0:
			return nil, fmt.Errorf("requires %s: within must be positive", r.Needs)
		case r.WithinCalls > 0 && r.Within > 0:
			return nil, fmt.Errorf("requires %s: within is a number of calls or a duration, not both", r.Needs)
		}
		g.requires[r.Tool] = append(g.requires[r.Tool], r)
		g.needed[r.Needs] = true
		g.counting = g.counting || r.WithinCalls > 0
	}
	for _, a := range cfg.After {
		if a.Tool == "" || len(a.Deny) == 0 {
			return nil, errors.New("after: a tool and the tools it denies")
		}
		for _, p := range append([]string{a.Tool}, a.Deny...) {
			if _, err := path.Match(p, ""); err != nil {
				return nil, fmt.Errorf("after %s: %q is not a tool name or pattern", a.Tool, p)
			}
		}
	}
	return g, nil
}

func matches(pattern, name string) bool {
	ok, _ := path.Match(pattern, name)
	return ok
}

// denyingTriggers are the After rules' tools whose success refuses name.
func (g *Guardrail) denyingTriggers(name string) []string {
	var out []string
	for _, a := range g.cfg.After {
		for _, d := range a.Deny {
			if matches(d, name) {
				out = append(out, a.Tool)
				break
			}
		}
	}
	return out
}

// triggered are the After rules' tools that name's success sets off.
func (g *Guardrail) triggered(name string) []string {
	var out []string
	for _, a := range g.cfg.After {
		if matches(a.Tool, name) {
			out = append(out, a.Tool)
		}
	}
	return out
}

// conversation is the record key of the call's conversation (hashed: a
// session id and a caller's subject are not kept as they are), or "" and
// why the call belongs to none.
func conversation(call *pipeline.Call) (key, why string) {
	var parts []string
	switch req := call.Request; {
	case req != nil && req.Session != "":
		parts = []string{"session", req.Session}
	case req == nil || req.Conversation == "":
		return "", "the call belongs to no session, and the client sent no conversation id in _meta (protocol 2026-07-28 has no sessions)"
	case call.Identity == nil || call.Identity.Subject == "":
		return "", "the client's conversation id holds only with a verified caller, and this call has none"
	default:
		parts = []string{"conversation", call.Identity.Provider, call.Identity.Subject, req.Conversation}
	}
	h := sha256.Sum256([]byte(strings.Join(parts, "\x00")))
	return "guardrail:" + hex.EncodeToString(h[:16]), ""
}

// Admit implements pipeline.Sequencer.
func (g *Guardrail) Admit(ctx context.Context, call *pipeline.Call) error {
	name := call.Tool.Name
	reqs, triggers := g.requires[name], g.denyingTriggers(name)
	if len(reqs) == 0 && len(triggers) == 0 {
		return nil
	}
	key, why := conversation(call)
	if key == "" {
		return refuse(nil, "%s runs only where its conversation's earlier calls are known, and %s", name, why)
	}
	keys := []string{key + ":n"}
	for _, r := range reqs {
		keys = append(keys, key+":t:"+r.Needs)
	}
	for _, t := range triggers {
		keys = append(keys, key+":a:"+t)
	}
	vals, err := g.cfg.Store.Get(ctx, keys...)
	if err != nil {
		return refuse(err, "%s is refused: the record of this conversation cannot be read", name)
	}
	for i, t := range triggers {
		if vals[1+len(reqs)+i] != nil {
			return refuse(nil, "%s is not allowed in this conversation any more: %s has run in it (after %s deny %s)", name, t, t, name)
		}
	}
	calls, _ := strconv.ParseInt(string(vals[0]), 10, 64)
	for i, r := range reqs {
		rec := vals[1+i]
		if rec == nil {
			return refuse(nil, "call %s first: %s runs only after %s has succeeded in this conversation", r.Needs, name, r.Needs)
		}
		seq, at := parseRecord(rec)
		if r.WithinCalls > 0 && calls-seq >= int64(r.WithinCalls) {
			return refuse(nil, "call %s again first: %s runs only within %d calls after it, and %d calls have succeeded since", r.Needs, name, r.WithinCalls, calls-seq)
		}
		if r.Within > 0 && g.cfg.Now().Sub(at) > r.Within {
			return refuse(nil, "call %s again first: %s runs only within %s after it, and it last succeeded %s ago", r.Needs, name, r.Within, g.cfg.Now().Sub(at).Round(time.Second))
		}
	}
	return nil
}

// Record implements pipeline.Sequencer.
func (g *Guardrail) Record(ctx context.Context, call *pipeline.Call) error {
	name := call.Tool.Name
	needed, triggers := g.needed[name], g.triggered(name)
	if !g.counting && !needed && len(triggers) == 0 {
		return nil
	}
	key, _ := conversation(call)
	if key == "" {
		return nil // no conversation: its guarded tools are refused anyway
	}
	var seq int64
	if g.counting {
		var err error
		if seq, err = g.cfg.Store.Incr(ctx, key+":n", g.cfg.TTL); err != nil {
			return refuse(err, "the success of %s cannot be recorded, so its result is withheld", name)
		}
	}
	rec := []byte(fmt.Sprintf("%d %d", seq, g.cfg.Now().UnixNano()))
	var keys []string
	if needed {
		keys = append(keys, key+":t:"+name)
	}
	for _, t := range triggers {
		keys = append(keys, key+":a:"+t)
	}
	for _, k := range keys {
		if err := g.cfg.Store.Set(ctx, k, rec, g.cfg.TTL); err != nil {
			return refuse(err, "the success of %s cannot be recorded, so its result is withheld", name)
		}
	}
	return nil
}

// parseRecord reads "<calls> <unix nanoseconds>".
func parseRecord(b []byte) (seq int64, at time.Time) {
	s, t, _ := strings.Cut(string(b), " ")
	seq, _ = strconv.ParseInt(s, 10, 64)
	ns, _ := strconv.ParseInt(t, 10, 64)
	return seq, time.Unix(0, ns)
}

// refuse is the guardrail's -32000.
func refuse(cause error, format string, args ...any) *pipeline.Error {
	return pipeline.Fail(pipeline.StageGuardrail, cause, format, args...)
}

var _ pipeline.Sequencer = (*Guardrail)(nil)
