package postgres

import (
	"fmt"
	"testing"
)

// TestPipelinableMemo: the memo answers as pipelinable does, the first
// time and from memory, and stops remembering at its bound.
func TestPipelinableMemo(t *testing.T) {
	var m pipelinableMemo
	for _, sql := range []string{
		"SELECT 1", "  /* c */ (SELECT 1)", "WITH x AS (SELECT 1) SELECT * FROM x",
		"UPDATE t SET a = $1", "VACUUM t", "SET search_path = x", "LISTEN x", "",
	} {
		for range 2 {
			if got, want := m.of(sql), pipelinable(sql); got != want {
				t.Errorf("%q: memo %v, pipelinable %v", sql, got, want)
			}
		}
	}
	for i := range maxPipelinableMemo + 10 {
		m.of(fmt.Sprintf("SELECT %d", i))
	}
	if n := m.n.Load(); n != maxPipelinableMemo {
		t.Errorf("%d texts remembered, want the bound %d", n, maxPipelinableMemo)
	}
	if !m.of("SELECT 'past the bound'") || m.of("VACUUM past_the_bound") {
		t.Error("past the bound, statements are still classified")
	}
}
