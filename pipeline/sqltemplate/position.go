package sqltemplate

import (
	"fmt"
	"sort"
	"unicode/utf8"
)

// CompileError is returned for every load-time refusal. Line and Column are
// 1-based positions in the operator's text (Column counts characters, not
// bytes; a tab is one column). A refusal that is about no position in the
// text (an unknown dialect) has Line and Column 0.
type CompileError struct {
	Line, Column int
	Msg          string
}

func (e *CompileError) Error() string {
	if e.Line == 0 {
		return e.Msg
	}
	return fmt.Sprintf("line %d, column %d: %s", e.Line, e.Column, e.Msg)
}

// errorAt makes a CompileError at byte offset off of src.
func errorAt(src string, off int, msg string) *CompileError {
	line, col := lineCol(src, off)
	return &CompileError{Line: line, Column: col, Msg: msg}
}

func lineCol(src string, off int) (line, col int) {
	off = min(max(off, 0), len(src))
	line, start := 1, 0
	for i := 0; i < off; i++ {
		if src[i] == '\n' {
			line, start = line+1, i+1
		}
	}
	return line, utf8.RuneCountInString(src[start:off]) + 1
}

// segment is a stretch of the expanded text (env values substituted, inputs
// in canonical form) and where it came from in the operator's text.
type segment struct {
	exp, src int    // start offsets in the expanded and the original text
	env      string // the variable, when this is an env value
	slot     bool   // an input placeholder in canonical form
}

// posMap maps offsets of the expanded text back to the operator's text, so
// that an error found by the lexer points at what the operator wrote. An
// offset inside an env value or a canonical placeholder maps to the start of
// its template, and the message names the variable.
type posMap struct {
	src  string
	segs []segment // sorted by exp; contiguous
}

func (m *posMap) errorAt(expOff int, msg string) *CompileError {
	if len(m.segs) == 0 {
		return errorAt(m.src, expOff, msg)
	}
	// The last segment starting at or before expOff. An empty env value
	// makes a zero-length segment; the literal after it wins, as it should.
	i := sort.Search(len(m.segs), func(i int) bool { return m.segs[i].exp > expOff }) - 1
	seg := m.segs[max(i, 0)]
	switch {
	case seg.env != "":
		return errorAt(m.src, seg.src, fmt.Sprintf("%s (in the value of environment variable %q)", msg, seg.env))
	case seg.slot:
		return errorAt(m.src, seg.src, msg)
	}
	return errorAt(m.src, seg.src+expOff-seg.exp, msg)
}

// at turns a lexer error into a CompileError. With a nil map the lexed text
// is the operator's text itself.
func (e *lexError) at(src string, m *posMap) *CompileError {
	if m == nil {
		return errorAt(src, e.off, e.msg)
	}
	return m.errorAt(e.off, e.msg)
}
