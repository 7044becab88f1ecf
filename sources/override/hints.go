package override

import (
	"fmt"

	"github.com/edgemcp/edgemcp/pipeline"
)

// The words of `annotate <tool> <hint...>`. Each states one MCP hint; the
// not_ form states its opposite. read_only also says the tool destroys
// nothing, and destructive that it is not read-only: an upstream that
// calls a deleting tool read-only is corrected in one word, and
// `approval writes` (which asks unless a tool is read-only) follows.
var hintWords = map[string]func(h *hintSet){
	"read_only":       func(h *hintSet) { h.readOnly, h.destructive = set(true), set(false) },
	"destructive":     func(h *hintSet) { h.destructive, h.readOnly = set(true), set(false) },
	"idempotent":      func(h *hintSet) { h.idempotent = set(true) },
	"open_world":      func(h *hintSet) { h.openWorld = set(true) },
	"not_read_only":   func(h *hintSet) { h.readOnly = set(false) },
	"not_destructive": func(h *hintSet) { h.destructive = set(false) },
	"not_idempotent":  func(h *hintSet) { h.idempotent = set(false) },
	"not_open_world":  func(h *hintSet) { h.openWorld = set(false) },
}

// HintWords are the words annotate accepts, for usage messages.
const HintWords = "read_only, destructive, idempotent, open_world (or not_ before one)"

type hintSet struct{ readOnly, destructive, idempotent, openWorld *bool }

func set(v bool) *bool { return &v }

// hints reads annotate's words; two that contradict each other are an
// error.
func hints(words []string) (hintSet, error) {
	var h hintSet
	for i, w := range words {
		one, err := hint(w)
		if err != nil {
			return h, err
		}
		for _, earlier := range words[:i] {
			if e, _ := hint(earlier); one.clashes(e) {
				return h, fmt.Errorf("annotate: %s contradicts %s", w, earlier)
			}
		}
		h = hintSet{or(one.readOnly, h.readOnly), or(one.destructive, h.destructive), or(one.idempotent, h.idempotent), or(one.openWorld, h.openWorld)}
	}
	return h, nil
}

func hint(word string) (hintSet, error) {
	var h hintSet
	apply, ok := hintWords[word]
	if !ok {
		return h, fmt.Errorf("annotate: unknown hint %q (want %s)", word, HintWords)
	}
	apply(&h)
	return h, nil
}

func (h hintSet) clashes(o hintSet) bool {
	return clash(h.readOnly, o.readOnly) || clash(h.destructive, o.destructive) ||
		clash(h.idempotent, o.idempotent) || clash(h.openWorld, o.openWorld)
}

// over is a with every hint h states in place of a's.
func (h hintSet) over(a pipeline.Annotations) pipeline.Annotations {
	return pipeline.Annotations{
		ReadOnly:    or(h.readOnly, a.ReadOnly),
		Destructive: or(h.destructive, a.Destructive),
		Idempotent:  or(h.idempotent, a.Idempotent),
		OpenWorld:   or(h.openWorld, a.OpenWorld),
	}
}

func clash(a, b *bool) bool { return a != nil && b != nil && *a != *b }

func or(a, b *bool) *bool {
	if a != nil {
		return a
	}
	return b
}
