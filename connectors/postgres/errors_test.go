package postgres_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/edgemcp/edgemcp/connectors/postgres"
	"github.com/edgemcp/edgemcp/internal/testservices"
	"github.com/jackc/pgx/v5/pgconn"
)

const secret = "Sup3r-Secret-Pw"

// TestConnectionErrorsHideSecrets: whatever goes wrong with the
// connection, the caller reads "database unavailable" (or a fixed text for
// a bad DSN), and the password appears nowhere, not even in the full error
// that goes to the debug log.
func TestConnectionErrorsHideSecrets(t *testing.T) {
	// The real server, a database that does not exist: the FATAL message
	// names the database and the user.
	missingDB := testservices.Name("no_such_db")
	missingDSN := testservices.PostgresURLWith(t, "dbname", missingDB, "password", secret)
	cfg, err := pgconn.ParseConfig(missingDSN)
	if err != nil {
		t.Fatal(err)
	}

	cases := []struct {
		name       string
		dsn        string
		openPublic string // non-empty: Open itself fails with this text
		hidden     []string
	}{
		{"refused", "postgres://alice:" + secret + "@127.0.0.1:1/db?sslmode=disable&connect_timeout=5", "",
			[]string{secret, "alice", "127.0.0.1"}},
		{"keyword dsn refused", "host=127.0.0.1 port=1 user=alice password=" + secret + " dbname=db sslmode=disable connect_timeout=5", "",
			[]string{secret, "alice", "127.0.0.1"}},
		{"missing database", missingDSN, "",
			[]string{secret, missingDB, cfg.User, cfg.Host}},
		{"bad url", "postgres://alice:" + secret + "@127.0.0.1:notaport/db", "invalid postgres connection string",
			[]string{secret, "alice", "127.0.0.1"}},
		{"bad keyword dsn", "host=127.0.0.1 password=" + secret + " sslmode=bogus", "invalid postgres connection string",
			[]string{secret, "127.0.0.1"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c, err := postgres.Open(context.Background(), postgres.Config{DSN: tc.dsn})
			if tc.openPublic != "" {
				pe := publicErr(t, err)
				if pe.Public != tc.openPublic {
					t.Errorf("Open: public %q, want %q", pe.Public, tc.openPublic)
				}
				if strings.Contains(err.Error(), secret) {
					t.Errorf("Open error leaks the password: %v", err)
				}
				assertHidden(t, pe.Public, tc.hidden)
				return
			}
			if err != nil {
				t.Fatalf("Open must not connect (or fail) yet: %v", err)
			}
			defer c.Close()
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			_, err = c.Query(ctx, "SELECT 1", nil)
			pe := publicErr(t, err)
			if pe.Public != "database unavailable" || pe.Code != "" {
				t.Errorf("public %q code %q, want %q and no server code", pe.Public, pe.Code, "database unavailable")
			}
			assertHidden(t, pe.Public, tc.hidden)
			if strings.Contains(err.Error(), secret) {
				t.Errorf("full error leaks the password: %v", err)
			}
		})
	}
}

func assertHidden(t *testing.T, public string, hidden []string) {
	t.Helper()
	for _, h := range hidden {
		if h != "" && strings.Contains(public, h) {
			t.Errorf("public message %q contains %q", public, h)
		}
	}
}

// TestStatementErrors: server errors reach the caller as message and
// SQLSTATE, without the Detail (which can quote row values), and carry the
// SQLSTATE as their Code.
func TestStatementErrors(t *testing.T) {
	admin := testservices.PostgresConn(t)
	s := testservices.PostgresSchema(t, admin)
	testservices.PostgresExec(t, admin, "CREATE TABLE "+s+".u (email text PRIMARY KEY)")
	testservices.PostgresExec(t, admin, "INSERT INTO "+s+".u VALUES ('private@example.com')")

	c := open(t, postgres.Config{})
	cases := []struct {
		sql    string
		args   []any
		public string
	}{
		{"SELEC 1", nil, `syntax error at or near "SELEC" (SQLSTATE 42601)`},
		{"SELECT 1 / 0", nil, "division by zero (SQLSTATE 22012)"},
		{"SELECT * FROM " + s + ".nope", nil, `relation "` + s + `.nope" does not exist (SQLSTATE 42P01)`},
		{"INSERT INTO " + s + ".u VALUES ($1)", []any{"private@example.com"},
			`duplicate key value violates unique constraint "u_pkey" (SQLSTATE 23505)`},
		{"SELECT $1::int4", []any{"not a number"}, `invalid input syntax for type integer: "not a number" (SQLSTATE 22P02)`},
	}
	for _, tc := range cases {
		t.Run(tc.sql, func(t *testing.T) {
			_, err := c.Query(context.Background(), tc.sql, tc.args)
			pe := publicErr(t, err)
			if pe.Public != tc.public {
				t.Errorf("public %q, want %q", pe.Public, tc.public)
			}
			// The code error_detail safe shows instead of the text.
			if want := tc.public[strings.LastIndex(tc.public, "(")+1 : len(tc.public)-1]; pe.Code != want {
				t.Errorf("code %q, want %q", pe.Code, want)
			}
		})
	}
}

// TestReadOnlyRejectsSimpleProtocol: in the simple protocol a statement
// could close the READ ONLY transaction, so the combination is refused.
func TestReadOnlyRejectsSimpleProtocol(t *testing.T) {
	_, err := postgres.Open(context.Background(), postgres.Config{
		DSN:      testservices.PostgresURLWith(t, "default_query_exec_mode", "simple_protocol"),
		ReadOnly: true,
	})
	publicErr(t, err)
}
