package caddymodule

import (
	"encoding/json"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/edgemcp/edgemcp/internal/testservices"
)

// errorDetailCaddyfile: a division on Postgres (its connection string, with
// a password that trust authentication ignores, in EDGEMCP_ERRDETAIL_PG_DSN)
// and a unique insert on MariaDB/MySQL, with the given error_detail line.
func errorDetailCaddyfile(t *testing.T, tbl, detail string) string {
	return fmt.Sprintf(`SITE {
	mcp /mcp {
		%s
		connector pg postgres {env.EDGEMCP_ERRDETAIL_PG_DSN}
		connector my mysql %q
		tool divide {
			description "Divides 10"
			use pg
			statement "SELECT 10 / {{ inputs.d }} AS q"
			input d int required
		}
		tool add-email {
			description "Adds an email"
			use my
			statement "INSERT INTO %s (email) VALUES ({{ inputs.email }})"
			input email string required
		}
	}
}`, detail, testservices.MySQLDSN(t), tbl)
}

// TestErrorDetail: with error_detail safe (the default) a failing statement
// answers with the stage, the server's code and the request id, never the
// server's text; with full, the text; the debug log has the full text
// under the same request id either way; the connection string's password
// appears nowhere.
func TestErrorDetail(t *testing.T) {
	const password = "Err0r-Detail-Pw-5c1e"
	u, err := url.Parse(postgresURL(t))
	if err != nil {
		t.Fatal(err)
	}
	u.User = url.UserPassword(u.User.Username(), password)
	// As the README advises, the DSN is a placeholder: Caddy logs the
	// whole config at debug level, and a literal password would be in it.
	t.Setenv("EDGEMCP_ERRDETAIL_PG_DSN", u.String())
	tbl := testservices.MySQLTable(t, "errdetail")
	testservices.MySQLExec(t, "CREATE TABLE "+tbl+" (email VARCHAR(80) PRIMARY KEY)")
	testservices.MySQLExec(t, "INSERT INTO "+tbl+" VALUES ('taken@example.com')")

	logFile := filepath.Join(t.TempDir(), "caddy.log")
	g := startGateway(t, errorDetailCaddyfile(t, tbl, ""), withLogFile(logFile))
	requestID := regexp.MustCompile(`request_id ([0-9a-f-]{36})\)$`)

	type failure struct {
		tool      string
		args      map[string]any
		safe      string // prefix of the safe message
		server    string // the server's text, shown only with full
		serverLog string // what of it the debug log must hold
	}
	failures := []failure{
		{"divide", map[string]any{"d": 0}, "execution: query failed (SQLSTATE 22012, request_id ",
			"division by zero (SQLSTATE 22012)", "division by zero"},
		{"add-email", map[string]any{"email": "taken@example.com"}, "execution: query failed (error 1062, SQLSTATE 23000, request_id ",
			"Duplicate entry 'taken@example.com'", "Duplicate entry 'taken@example.com'"},
	}
	// call answers both ways: the direct path and, with _meta, mcp-go's
	// dispatcher (whose error fastpath.Writer rewrites).
	call := func(t *testing.T, s *rawSession, id int, f failure, viaMCPGo bool) string {
		t.Helper()
		args, _ := json.Marshal(f.args)
		meta := ""
		if viaMCPGo {
			meta = `,"_meta":{}`
		}
		r, _ := s.post(t, fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":%q,"arguments":%s%s}}`, id, f.tool, args, meta))
		if r.Error == nil || r.Error.Code != -32000 {
			t.Fatalf("%s: want a -32000 error, got %+v %s", f.tool, r.Error, r.Result)
		}
		return r.Error.Message
	}

	t.Run("safe by default", func(t *testing.T) {
		s := g.rawSession(t, "2025-11-25")
		for i, f := range failures {
			for _, viaMCPGo := range []bool{false, true} {
				msg := call(t, s, 10+2*i+btoi(viaMCPGo), f, viaMCPGo)
				m := requestID.FindStringSubmatch(msg)
				if !strings.HasPrefix(msg, f.safe) || m == nil {
					t.Fatalf("%s (mcp-go %v): message %q, want %q<request id>)", f.tool, viaMCPGo, msg, f.safe)
				}
				if strings.Contains(msg, f.serverLog) {
					t.Errorf("%s: the server's text reached the caller: %q", f.tool, msg)
				}
				// The debug log has the full text under that request id.
				if !debugLineHas(t, logFile, m[1], f.serverLog) {
					t.Errorf("%s: no debug line with request_id %s and %q", f.tool, m[1], f.serverLog)
				}
			}
		}
	})

	t.Run("error_mode result is safe too", func(t *testing.T) {
		if err := g.load(errorDetailCaddyfile(t, tbl, "error_mode result")); err != nil {
			t.Fatal(err)
		}
		s := g.rawSession(t, "2025-11-25")
		res := s.call(t, "divide", map[string]any{"d": 0}).tool(t)
		if !res.IsError || len(res.Content) != 1 || !strings.HasPrefix(res.Content[0].Text, failures[0].safe) ||
			strings.Contains(res.Content[0].Text, "division by zero") {
			t.Fatalf("isError result %+v", res)
		}
	})

	t.Run("full", func(t *testing.T) {
		if err := g.load(errorDetailCaddyfile(t, tbl, "error_detail full")); err != nil {
			t.Fatal(err)
		}
		s := g.rawSession(t, "2025-11-25")
		for i, f := range failures {
			for _, viaMCPGo := range []bool{false, true} {
				msg := call(t, s, 20+2*i+btoi(viaMCPGo), f, viaMCPGo)
				if !strings.HasPrefix(msg, "execution: query failed: ") || !strings.Contains(msg, f.server) || strings.Contains(msg, "request_id") {
					t.Errorf("%s (mcp-go %v): message %q, want the server's text %q", f.tool, viaMCPGo, msg, f.server)
				}
			}
		}
	})

	// Neither answers nor the debug log ever hold the password.
	assertLogsClean(t, logFile, []string{password})
}

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}

// debugLineHas reports whether the gateway's log has a "tool call failed"
// debug line of request id whose message or cause contains text.
func debugLineHas(t *testing.T, path, id, text string) bool {
	t.Helper()
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(string(raw), "\n") {
		var e struct {
			Level, Msg, Message, Cause string
			RequestID                  string `json:"request_id"`
		}
		if json.Unmarshal([]byte(line), &e) != nil || e.Msg != "tool call failed" || e.RequestID != id {
			continue
		}
		if e.Level == "debug" && (strings.Contains(e.Message, text) || strings.Contains(e.Cause, text)) {
			return true
		}
	}
	return false
}
