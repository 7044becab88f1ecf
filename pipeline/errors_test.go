package pipeline

import (
	"errors"
	"strings"
	"testing"
)

// TestWithoutServerText: error_detail safe keeps our words, the stage and
// the wire code, and replaces a server's own text by its code and the
// request id; errors without server text are left alone.
func TestWithoutServerText(t *testing.T) {
	const server = `division by zero (SQLSTATE 22012)`
	driver := errors.New("ERROR: division by zero (SQLSTATE 22012)")
	coded := &PublicError{Public: server, Cause: driver, Code: "SQLSTATE 22012"}
	tests := []struct {
		name string
		in   *Error
		rid  string
		want string
	}{
		{"db tool", Fail(StageExecution, coded, "query failed: %s", coded.Public), "req-1",
			"execution: query failed (SQLSTATE 22012, request_id req-1)"},
		{"message is the server text", Fail(StageExecution, coded, "%s", coded.Public), "req-1",
			"execution: failed (SQLSTATE 22012, request_id req-1)"},
		{"wrapped cause", Fail(StageExecution, &PublicError{Public: "x", Cause: coded}, "command failed: %s", server), "",
			"execution: command failed (SQLSTATE 22012)"},
		{"message reshaped elsewhere", Fail(StageExecution, coded, "something else"), "r",
			"execution: failed (SQLSTATE 22012, request_id r)"},
		{"our own text", Fail(StageExecution, &PublicError{Public: "timed out"}, "query failed: timed out"), "r",
			"execution: query failed: timed out"},
		{"validation", Fail(StageValidation, nil, `input "id": no value`), "r",
			`input validation: input "id": no value`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := tt.in.WithoutServerText(tt.rid)
			if got.Error() != tt.want {
				t.Fatalf("got %q\nwant %q", got.Error(), tt.want)
			}
			if got.Code != tt.in.Code || got.Stage != tt.in.Stage || got.Cause != tt.in.Cause {
				t.Fatalf("code, stage or cause changed: %+v", got)
			}
			if strings.Contains(got.Message, "division by zero") {
				t.Fatalf("server text shown: %q", got.Message)
			}
		})
	}
}
