package caddymodule

import (
	"fmt"
	"net/url"
	"path/filepath"
	"testing"
)

// The observability tests share one Caddyfile: two tools on Postgres (one
// takes a string input, so a value can be searched for in the telemetry),
// one whose statement fails, and a SQLite connector (its pool shows in the
// metrics). The schema is this branch's own.

// Values that must never appear in spans, metrics or logs.
const (
	secretInput    = "obs-input-secret-4711@example.com"
	secretBadInput = "obs-bad-input-secret-0815"
)

func obsSchema(t testing.TB) {
	t.Helper()
	db := testDB(t)
	execSQL(t, db, `DROP SCHEMA IF EXISTS obs_telemetry CASCADE`)
	execSQL(t, db, `CREATE SCHEMA obs_telemetry`)
	execSQL(t, db, `CREATE TABLE obs_telemetry.users (id int8 PRIMARY KEY, name text NOT NULL, email text NOT NULL)`)
	execSQL(t, db, `INSERT INTO obs_telemetry.users VALUES (1, 'Ada', 'ada@example.com'), (2, 'Grace', $1)`, secretInput)
	t.Cleanup(func() { execSQL(t, testDB(t), `DROP SCHEMA IF EXISTS obs_telemetry CASCADE`) })
}

// obsDSN is the test database's URL with a password in it, and that
// password: the local server trusts loopback, so the password is never
// checked, but it is in the connection string the gateway holds. When the
// environment's URL has a password of its own, that one is the secret.
func obsDSN(t testing.TB) (dsn, password string) {
	t.Helper()
	u, err := url.Parse(postgresURL(t))
	if err != nil {
		t.Fatal(err)
	}
	if pw, ok := u.User.Password(); ok {
		return u.String(), pw
	}
	user := "postgres"
	if u.User != nil && u.User.Username() != "" {
		user = u.User.Username()
	}
	u.User = url.UserPassword(user, "obs-dsn-secret-pw-31337")
	return u.String(), "obs-dsn-secret-pw-31337"
}

// obsCaddyfile is the test config; siteExtra goes into the site block
// (e.g. `tracing`), toolsExtra into the mcp block.
func obsCaddyfile(t testing.TB, dsn, siteExtra, toolsExtra string) string {
	seed, _ := filepath.Abs("../examples/data/demo.sql")
	lite := filepath.Join(t.TempDir(), "obs.db")
	return fmt.Sprintf(`SITE {
	%s
	mcp /mcp {
		connector obsdb postgres %q {
			max_conns 3
			read_only
			statement_timeout 2s
		}
		connector obslite sqlite %s {
			read_only
			seed %s
		}
		tool obs-find {
			description "Find users by email"
			use obsdb
			statement "SELECT id, name FROM obs_telemetry.users WHERE email = {{ inputs.email }}"
			input email string required
		}
		tool obs-get {
			description "Fetch a user by id"
			use obsdb
			statement "SELECT id, name FROM obs_telemetry.users WHERE id = {{ inputs.id }}"
			input id int required
		}
		tool obs-broken {
			description "Queries a missing table"
			use obsdb
			statement "SELECT * FROM obs_telemetry.missing"
		}
		%s
	}
}
`, siteExtra, dsn, lite, seed, toolsExtra)
}
