package backoff

import (
	"errors"
	"testing"
	"time"
)

// TestGate: a failure closes the gate for the retry period, after which
// one try (not every caller) goes through; going down and coming back are
// told once each, however many tries fail meanwhile.
func TestGate(t *testing.T) {
	var downs, ups int
	g := New(time.Minute, func(error) { downs++ }, func() { ups++ })
	now := time.Unix(1000, 0)
	g.now = func() time.Time { return now }
	if !g.Open() {
		t.Fatal("a new gate is closed")
	}
	g.Report(nil)
	g.Report(errors.New("timeout"))
	for range 100 {
		if g.Open() {
			t.Fatal("tried again within the retry period")
		}
	}
	now = now.Add(time.Minute)
	if !g.Open() || g.Open() {
		t.Fatal("after the retry period: want one try, and one only")
	}
	g.Report(errors.New("timeout again"))
	now = now.Add(time.Minute)
	if !g.Open() {
		t.Fatal("no try in the next period")
	}
	g.Report(nil)
	if !g.Open() || !g.Open() {
		t.Fatal("closed after the store answered")
	}
	if downs != 1 || ups != 1 {
		t.Errorf("told %d downs and %d ups, want 1 and 1", downs, ups)
	}
	var nilGate *Gate
	if !nilGate.Open() {
		t.Error("a nil gate is closed")
	}
	nilGate.Report(errors.New("x"))
}
