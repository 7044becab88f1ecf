package pipeline

import (
	"strings"
	"testing"
)

func TestToolName(t *testing.T) {
	long := strings.Repeat("veryLongOperationName", 5)
	for _, tc := range []struct{ prefix, base, want string }{
		{"gh", "issues/list-for-repo", "gh_issues_list-for-repo"},
		{"", "get_/pets/{petId}/photo", "get_pets_petId_photo"},
		{"s", "a.b c__d", "s_a_b_c_d"},
		{"", "???", "tool"},
	} {
		if got := ToolName(tc.prefix, tc.base); got != tc.want {
			t.Errorf("ToolName(%q, %q) = %q, want %q", tc.prefix, tc.base, got, tc.want)
		}
	}
	a, b := ToolName("src", long+"A"), ToolName("src", long+"B")
	for _, n := range []string{a, b} {
		if !ToolNamePattern.MatchString(n) {
			t.Errorf("%q does not match %s", n, ToolNamePattern)
		}
	}
	if a == b || a != ToolName("src", long+"A") {
		t.Errorf("long names: %q and %q must differ and be stable", a, b)
	}
}
