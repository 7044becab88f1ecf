package mcp

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/edgemcp/edgemcp/pipeline"
)

// TestVerbatimResult: a tools/call result reaches the gateway as the
// server sent it, marked Verbatim (written as it is where no stage needs
// it decoded), on one line whatever white space the server put in; a
// result that is not an object is left unmarked for the gateway to refuse.
func TestVerbatimResult(t *testing.T) {
	s := httpSource(startUpstream(t, "").url())
	provision(t, s)
	echo := toolNamed(t, s, "echo.a")
	res, err := echo.Executor.Execute(context.Background(), &pipeline.Call{Tool: echo, Inputs: map[string]any{"msg": "hi"}})
	if err != nil {
		t.Fatal(err)
	}
	// mcp-go's server writes this result so: the bytes are its own.
	if want := `{"content":[{"type":"text","text":"hi"}]}`; !res.Verbatim || string(res.Native) != want {
		t.Errorf("result %s (verbatim %v), want %s as sent", res.Native, res.Verbatim, want)
	}

	for _, tc := range []struct {
		raw, want string
		verbatim  bool
	}{
		{`{"content":[],"x-unmodelled":{"a":1},"_meta":{"k":"v"}}`, `{"content":[],"x-unmodelled":{"a":1},"_meta":{"k":"v"}}`, true},
		{"{\r\n  \"content\": [ {\"type\": \"text\", \"text\": \"a\\nb\"} ]\n}", `{"content":[{"type":"text","text":"a\nb"}]}`, true},
		{`null`, `null`, false},
	} {
		res, err := verbatimResult(json.RawMessage(tc.raw))
		if err != nil || string(res.Native) != tc.want || res.Verbatim != tc.verbatim {
			t.Errorf("%q: %s verbatim %v (%v), want %s verbatim %v", tc.raw, res.Native, res.Verbatim, err, tc.want, tc.verbatim)
		}
	}
}
