package upstreams

import "testing"

// TestURIScheme: the scheme of a URI or template, lower case, "" when it
// has none.
func TestURIScheme(t *testing.T) {
	for uri, want := range map[string]string{
		"Demo://resource/1": "demo",
		"file:///notes":     "file",
		"a+b-c.d:x":         "a+b-c.d",
		"{+uri}":            "",
		"1abc:x":            "",
		"no scheme":         "",
		":x":                "",
	} {
		if got := uriScheme(uri); got != want {
			t.Errorf("uriScheme(%q) = %q, want %q", uri, got, want)
		}
	}
}

// TestCompactJSON: a source's entry loses its line breaks (they would end
// an SSE event's data); text that is not JSON is kept.
func TestCompactJSON(t *testing.T) {
	if got := string(compactJSON([]byte("{\n  \"uri\": \"a://b\"\n}"))); got != `{"uri":"a://b"}` {
		t.Errorf("compactJSON = %s", got)
	}
	if got := string(compactJSON([]byte("{oops"))); got != "{oops" {
		t.Errorf("compactJSON of bad JSON = %s", got)
	}
}
