package openapi

import (
	"testing"

	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"go.uber.org/zap/zaptest/observer"
)

// TestSourceLogsWhatItLeavesOut: a source logs each operation it leaves
// out on one warning line that names it and says why, and the findings
// that change no call on one line, once per document: building the tools
// again (a registry rebuild) does not log them again.
func TestSourceLogsWhatItLeavesOut(t *testing.T) {
	core, logs := observer.New(zapcore.WarnLevel)
	s := &Source{log: zap.New(core), live: new(liveDoc)}
	s.live.doc.Store(load(t, "testdata/bodies.yaml"))
	for range 2 {
		if _, err := s.Tools("b"); err != nil {
			t.Fatal(err)
		}
	}
	left := logs.FilterMessage("openapi source: operation left out").All()
	if len(left) != 1 {
		t.Fatalf("%d lines for the operation left out, want 1: %v", len(left), logs.All())
	}
	fields := left[0].ContextMap()
	if fields["operation"] != "POST /mixed (mixed)" || fields["reason"] != "request body: no media type the gateway can send (the document offers multipart/mixed)" {
		t.Errorf("the line: %v", fields)
	}
	if n := logs.FilterMessageSnippet("validation findings that change no call").Len(); n != 1 {
		t.Errorf("%d lines for the findings, want 1", n)
	}
}

// A document's URL may carry a token in its query; the source's log lines
// name the document without it (docs/security.md, Credentials and fixed
// values on HTTP sources).
func TestSourceLogsNameTheDocumentWithoutItsQuery(t *testing.T) {
	core, logs := observer.New(zapcore.DebugLevel)
	s := &Source{log: zap.New(core), live: new(liveDoc)}
	doc := load(t, "testdata/bodies.yaml")
	doc.Location = "https://user:pw-secret@specs.example.com/bodies.yaml?token=tok-secret#frag"
	s.live.doc.Store(doc)
	if _, err := s.Tools("b"); err != nil {
		t.Fatal(err)
	}
	if logs.Len() == 0 {
		t.Fatal("no log lines")
	}
	for _, e := range logs.All() {
		spec, _ := e.ContextMap()["spec"].(string)
		if spec != "https://specs.example.com/bodies.yaml?…" {
			t.Errorf("%q names the document as %q", e.Message, spec)
		}
	}
}
