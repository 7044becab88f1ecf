package cli

import (
	"bytes"
	"path/filepath"
	"strings"
	"testing"

	"github.com/edgemcp/edgemcp/pipeline"
	"github.com/edgemcp/edgemcp/pipeline/pin"
)

func pinTool(name, desc string) *pipeline.Tool {
	return &pipeline.Tool{Name: "s_" + name, Original: name, Description: desc}
}

// TestPinSources: a first run pins every tool; --tool re-pins one and
// keeps the others' entries as they were; a file shared by two sources
// keeps both; a source that gives no tools while its file pins some
// writes nothing (an unreachable upstream must not wipe the approvals).
func TestPinSources(t *testing.T) {
	path := filepath.Join(t.TempDir(), "pins.json")
	var out bytes.Buffer
	first := []PinSource{
		{Name: "a", File: path, Tools: []*pipeline.Tool{pinTool("add", "Adds."), pinTool("echo", "Echoes.")}},
		{Name: "b", File: path, Tools: []*pipeline.Tool{pinTool("get", "Gets.")}},
	}
	if changed, err := pinSources(&out, first, nil, true); err != nil || !changed || !strings.Contains(out.String(), "new add") {
		t.Fatalf("%v %v\n%s", changed, err, out.String())
	}
	changedA := []PinSource{{Name: "a", File: path, Tools: []*pipeline.Tool{pinTool("add", "Adds, now differently."), pinTool("echo", "Echoes, changed too.")}}}
	out.Reset()
	if changed, err := pinSources(&out, changedA, []string{"add"}, true); err != nil || !changed ||
		!strings.Contains(out.String(), "changed add") || strings.Contains(out.String(), "echo") {
		t.Fatalf("--tool add: %v %v\n%s", changed, err, out.String())
	}
	f, err := pin.Read(path)
	if err != nil {
		t.Fatal(err)
	}
	if v := pin.Check(f.Source("a"), changedA[0].Tools, false); len(v.Held) != 1 || v.Held[0].Key != "echo" {
		t.Errorf("after re-pinning add only: %+v", v.Held)
	}
	if len(f.Source("b")) != 1 {
		t.Errorf("the other source's entries: %v", f.Source("b"))
	}
	out.Reset()
	if _, err := pinSources(&out, []PinSource{{Name: "b", File: path}}, nil, true); err == nil || !strings.Contains(err.Error(), "nothing written") {
		t.Errorf("a source with no tools: %v", err)
	}
	if f, _ := pin.Read(path); len(f.Source("b")) != 1 {
		t.Errorf("its pins were dropped")
	}
}
