package caddymodule

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"go.uber.org/zap"

	"github.com/edgemcp/edgemcp/caddymodule/approval"
	"github.com/edgemcp/edgemcp/pipeline"
)

// Which tools a policy puts the approval stage on.
func TestApplyApproval(t *testing.T) {
	yes, no := true, false
	h := &Handler{approver: approval.New(approval.Options{Keys: [][]byte{testKey('a')}, Audit: zap.NewNop()})}
	for _, tt := range []struct {
		override, policy string
		readOnly         *bool
		want             bool
	}{
		{"", "", nil, false},
		{"", approvalRequired, &yes, true},
		{"", approvalWrites, nil, true}, // not stated: may write
		{"", approvalWrites, &no, true},
		{"", approvalWrites, &yes, false},
		{approvalRequired, "", &yes, true},
		{approvalOff, approvalRequired, nil, false},
		{approvalOff, approvalWrites, &no, false},
	} {
		tool := &pipeline.Tool{Name: "t", Annotations: pipeline.Annotations{ReadOnly: tt.readOnly}}
		if err := h.applyApproval(tool, tt.override, tt.policy); err != nil {
			t.Fatal(err)
		}
		if got := tool.Approval != nil; got != tt.want {
			t.Errorf("override %q policy %q read-only %v: approval %v, want %v", tt.override, tt.policy, tt.readOnly, got, tt.want)
		}
		if tool.Approval != nil && !tool.TalksBack() {
			t.Error("a tool under approval may be answered directly")
		}
	}
	for _, bad := range [][2]string{{"writes", ""}, {"", "sometimes"}} {
		if err := h.applyApproval(&pipeline.Tool{Name: "t"}, bad[0], bad[1]); err == nil {
			t.Errorf("override %q policy %q accepted", bad[0], bad[1])
		}
	}
}

// `caddy mcp tools` marks the declared tools a person confirms: by their
// own policy or their connector's, not the exempted or read-only ones.
func TestMCPToolsApproval(t *testing.T) {
	raw, err := os.ReadFile("testdata/adapt/approval.caddytest")
	if err != nil {
		t.Fatal(err)
	}
	src, _, _ := strings.Cut(string(raw), "\n----------\n")
	src = strings.Replace(src, "\t\ttool touch {", "\t\ttool peek {\n\t\t\tdescription \"Read an order\"\n\t\t\tuse main\n\t\t\tstatement \"SELECT 1\"\n\t\t\tannotations {\n\t\t\t\tread_only\n\t\t\t}\n\t\t}\n\t\ttool touch {", 1)
	file := filepath.Join(t.TempDir(), "Caddyfile")
	writeFile(t, file, src)
	out, errOut, err := runMCPCommand(t, "tools", "--config", file, "--adapter", "caddyfile", "--json")
	if err != nil {
		t.Fatalf("mcp tools: %v\n%s", err, errOut)
	}
	var listing []struct {
		Tools []struct {
			Name     string          `json:"name"`
			Approval bool            `json:"approval"`
			Settings json.RawMessage `json:"settings"`
		} `json:"tools"`
	}
	if err := json.Unmarshal([]byte(out), &listing); err != nil || len(listing) != 1 {
		t.Fatalf("listing %s: %v", out, err)
	}
	got := map[string]bool{}
	for _, tl := range listing[0].Tools {
		got[tl.Name] = tl.Approval
		if strings.Contains(string(tl.Settings), "approval") {
			t.Errorf("%s: approval shown as a setting too: %s", tl.Name, tl.Settings)
		}
	}
	want := map[string]bool{"add-order": true, "refund": true, "peek": false, "touch": false}
	for name, w := range want {
		if got[name] != w {
			t.Errorf("%s: approval %v, want %v (listing %v)", name, got[name], w, got)
		}
	}
	text, _, err := runMCPCommand(t, "tools", "--config", file, "--adapter", "caddyfile")
	if err != nil || strings.Count(text, "approval: asked in the client before every call") != 2 {
		t.Errorf("text listing: %v\n%s", err, text)
	}
}
