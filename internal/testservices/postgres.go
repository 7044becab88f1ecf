package testservices

import (
	"context"
	"fmt"
	"net/url"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
)

// PostgresEnv names the environment variable holding the PostgreSQL URL.
const PostgresEnv = "EDGEMCP_TEST_POSTGRES_URL"

var postgres = service{what: "PostgreSQL", env: PostgresEnv, def: "postgres://postgres@127.0.0.1:5432/test?sslmode=disable"}

// databasePrefix starts the name of every per-process test database; the
// process id follows, so that a later run can drop what a killed run left.
const databasePrefix = "edgemcp_t_"

// created is the database this process created (dropped by Main), and
// the URL of the server's own database, to drop it from.
var created struct{ name, adminURL string }

// PostgresURL is the URL of this test binary's own database, created on
// first use on the server that PostgresEnv names, empty and dropped when
// the tests end (Main). Schemas created by one package's tests cannot meet
// another package's, or another run's.
func PostgresURL(t testing.TB) string {
	t.Helper()
	return postgres.require(t, createDatabase)
}

// createDatabase creates the per-process database on the server at admin,
// after dropping those left by test processes that no longer run.
func createDatabase(admin string) (string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	conn, err := pgx.Connect(ctx, admin)
	if err != nil {
		return "", err
	}
	defer conn.Close(ctx)
	dropAbandoned(ctx, conn)
	name := fmt.Sprintf("%s%d_%s", databasePrefix, os.Getpid(), randomHex())
	if _, err := conn.Exec(ctx, "CREATE DATABASE "+name+" TEMPLATE template0"); err != nil {
		return "", fmt.Errorf("create the test database: %w", err)
	}
	created.name, created.adminURL = name, admin
	return withDatabase(admin, name)
}

// dropAbandoned drops test databases whose process has ended (a run that
// was killed before Main could drop its own).
func dropAbandoned(ctx context.Context, conn *pgx.Conn) {
	rows, err := conn.Query(ctx, "SELECT datname FROM pg_database WHERE datname LIKE $1", databasePrefix+"%")
	if err != nil {
		return
	}
	names, _ := pgx.CollectRows(rows, pgx.RowTo[string])
	for _, n := range names {
		pid, err := strconv.Atoi(strings.SplitN(strings.TrimPrefix(n, databasePrefix), "_", 2)[0])
		if err != nil || processRuns(pid) {
			continue
		}
		_, _ = conn.Exec(ctx, "DROP DATABASE IF EXISTS "+pgx.Identifier{n}.Sanitize()+" WITH (FORCE)")
	}
}

// processRuns reports whether a process with this id runs on this machine.
func processRuns(pid int) bool {
	_, err := os.Stat(fmt.Sprintf("/proc/%d", pid))
	return err == nil
}

// dropDatabase drops the database this process created, if any.
func dropDatabase() {
	if created.name == "" {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	conn, err := pgx.Connect(ctx, created.adminURL)
	if err != nil {
		fmt.Fprintf(os.Stderr, "testservices: cannot drop the test database %s: %v\n", created.name, err)
		return
	}
	defer conn.Close(ctx)
	if _, err := conn.Exec(ctx, "DROP DATABASE IF EXISTS "+created.name+" WITH (FORCE)"); err != nil {
		fmt.Fprintf(os.Stderr, "testservices: cannot drop the test database %s: %v\n", created.name, err)
	}
}

// withDatabase returns dsn (URL or keyword=value form) naming database db.
func withDatabase(dsn, db string) (string, error) {
	if isURL(dsn) {
		u, err := url.Parse(dsn)
		if err != nil {
			return "", fmt.Errorf("parse %s: %w", PostgresEnv, err)
		}
		u.Path = "/" + db
		return u.String(), nil
	}
	return dsn + " dbname=" + db, nil // the last dbname= wins
}

func isURL(dsn string) bool {
	return strings.HasPrefix(dsn, "postgres://") || strings.HasPrefix(dsn, "postgresql://")
}

// PostgresURLWith returns PostgresURL with more connection parameters,
// given as key, value pairs, in either DSN form.
func PostgresURLWith(t testing.TB, kv ...string) string {
	t.Helper()
	dsn := PostgresURL(t)
	if len(kv)%2 != 0 {
		t.Fatalf("PostgresURLWith: odd number of arguments")
	}
	if !isURL(dsn) {
		quote := strings.NewReplacer(`\`, `\\`, `'`, `\'`).Replace
		for i := 0; i < len(kv); i += 2 {
			dsn += " " + kv[i] + "='" + quote(kv[i+1]) + "'"
		}
		return dsn
	}
	u, err := url.Parse(dsn)
	if err != nil {
		t.Fatalf("parse %s: %v", PostgresEnv, err)
	}
	q := u.Query()
	for i := 0; i < len(kv); i += 2 {
		q.Set(kv[i], kv[i+1])
	}
	u.RawQuery = q.Encode()
	return u.String()
}

// PostgresConn opens a plain connection to the test database for setup
// and teardown, closed when the test ends.
func PostgresConn(t testing.TB) *pgx.Conn {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	conn, err := pgx.Connect(ctx, PostgresURL(t))
	if err != nil {
		t.Fatalf("connect to the test database: %v", err)
	}
	t.Cleanup(func() { conn.Close(context.Background()) })
	return conn
}

// PostgresExec runs setup SQL, failing the test on error.
func PostgresExec(t testing.TB, conn *pgx.Conn, sql string, args ...any) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if _, err := conn.Exec(ctx, sql, args...); err != nil {
		t.Fatalf("setup %q: %v", sql, err)
	}
}

// PostgresSchema creates a uniquely named schema and drops it (with
// everything in it) when the test ends.
func PostgresSchema(t testing.TB, conn *pgx.Conn) string {
	t.Helper()
	name := Name("edgemcp_test")
	PostgresExec(t, conn, "CREATE SCHEMA "+name)
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		if _, err := conn.Exec(ctx, "DROP SCHEMA "+name+" CASCADE"); err != nil {
			t.Errorf("drop schema %s: %v", name, err)
		}
	})
	return name
}
