// Package testpg gives connector tests the PostgreSQL they run against:
// the URL from EDGEMCP_TEST_POSTGRES_URL (default: the server on this
// machine's standard port), checked once per test binary. A server that
// does not answer fails the test with instructions; it is never a skip, so
// a CI run without a database cannot pass by testing nothing.
package testpg

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"net/url"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
)

// EnvURL names the environment variable holding the test database URL.
const EnvURL = "EDGEMCP_TEST_POSTGRES_URL"

// DefaultURL is used when EnvURL is unset: trust auth on localhost.
const DefaultURL = "postgres://postgres@127.0.0.1:5432/test?sslmode=disable"

var (
	checkOnce sync.Once
	checkErr  error
)

// URL returns the test database URL after checking, once per process,
// that the server answers. Otherwise the test fails with a clear message.
func URL(t testing.TB) string {
	t.Helper()
	url := os.Getenv(EnvURL)
	if url == "" {
		url = DefaultURL
	}
	checkOnce.Do(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		conn, err := pgx.Connect(ctx, url)
		if err != nil {
			checkErr = err
			return
		}
		defer conn.Close(ctx)
		checkErr = conn.Ping(ctx)
	})
	if checkErr != nil {
		t.Fatalf("PostgreSQL is required by this test and did not answer: %v\n"+
			"Set %s to a reachable database (default %s), "+
			"or run the project's test command, which starts a throwaway server.",
			checkErr, EnvURL, DefaultURL)
	}
	return url
}

// URLWith returns URL with more connection parameters, given as key,
// value pairs, in either DSN form (URL or keyword=value).
func URLWith(t testing.TB, kv ...string) string {
	t.Helper()
	dsn := URL(t)
	if len(kv)%2 != 0 {
		t.Fatalf("URLWith: odd number of arguments")
	}
	if !strings.HasPrefix(dsn, "postgres://") && !strings.HasPrefix(dsn, "postgresql://") {
		quote := strings.NewReplacer(`\`, `\\`, `'`, `\'`).Replace
		for i := 0; i < len(kv); i += 2 {
			dsn += " " + kv[i] + "='" + quote(kv[i+1]) + "'"
		}
		return dsn
	}
	u, err := url.Parse(dsn)
	if err != nil {
		t.Fatalf("parse %s: %v", EnvURL, err)
	}
	q := u.Query()
	for i := 0; i < len(kv); i += 2 {
		q.Set(kv[i], kv[i+1])
	}
	u.RawQuery = q.Encode()
	return u.String()
}

// Conn opens a plain connection for test setup and teardown, closed when
// the test ends.
func Conn(t testing.TB) *pgx.Conn {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	conn, err := pgx.Connect(ctx, URL(t))
	if err != nil {
		t.Fatalf("connect to test database: %v", err)
	}
	t.Cleanup(func() { conn.Close(context.Background()) })
	return conn
}

// Name returns a unique, lower-case SQL identifier starting with prefix,
// so parallel tests (and parallel test runs) never share a table.
func Name(prefix string) string {
	var b [6]byte
	if _, err := rand.Read(b[:]); err != nil {
		panic(err)
	}
	return fmt.Sprintf("%s_%s", prefix, hex.EncodeToString(b[:]))
}

// Exec runs setup SQL, failing the test on error.
func Exec(t testing.TB, conn *pgx.Conn, sql string, args ...any) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if _, err := conn.Exec(ctx, sql, args...); err != nil {
		t.Fatalf("setup %q: %v", sql, err)
	}
}

// Schema creates a uniquely named schema and drops it (with everything in
// it) when the test ends.
func Schema(t testing.TB, conn *pgx.Conn) string {
	t.Helper()
	name := Name("edgemcp_test")
	Exec(t, conn, "CREATE SCHEMA "+name)
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		if _, err := conn.Exec(ctx, "DROP SCHEMA "+name+" CASCADE"); err != nil {
			t.Errorf("drop schema %s: %v", name, err)
		}
	})
	return name
}
