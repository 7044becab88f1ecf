// Package testmysql gives tests the MySQL/MariaDB they run against: the
// DSN from EDGEMCP_TEST_MYSQL_DSN (default: the server on this machine's
// standard port), checked once per test binary. A server that does not
// answer fails the test with instructions; it is never a skip.
package testmysql

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"fmt"
	"os"
	"sync"
	"testing"
	"time"

	_ "github.com/go-sql-driver/mysql" // registers "mysql" for setup connections
)

// EnvDSN names the environment variable holding the test DSN (the
// driver's own form, as scripts/test-services.sh exports it).
const EnvDSN = "EDGEMCP_TEST_MYSQL_DSN"

// DefaultDSN is used when EnvDSN is unset: root without password on localhost.
const DefaultDSN = "root@tcp(127.0.0.1:3306)/test"

var (
	checkOnce sync.Once
	checkErr  error
	setupDB   *sql.DB
)

// DSN returns the test DSN after checking, once per process, that the
// server answers. Otherwise the test fails with a clear message.
func DSN(t testing.TB) string {
	t.Helper()
	dsn := os.Getenv(EnvDSN)
	if dsn == "" {
		dsn = DefaultDSN
	}
	checkOnce.Do(func() {
		db, err := sql.Open("mysql", dsn)
		if err != nil {
			checkErr = err
			return
		}
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		if checkErr = db.PingContext(ctx); checkErr != nil {
			db.Close()
			return
		}
		setupDB = db
	})
	if checkErr != nil {
		t.Fatalf("MySQL/MariaDB is required by this test and did not answer: %v\n"+
			"Set %s to a reachable database (default %s), "+
			"or run the project's test command, which starts a throwaway server.",
			checkErr, EnvDSN, DefaultDSN)
	}
	return dsn
}

// DB is a plain pool for test setup and teardown.
func DB(t testing.TB) *sql.DB {
	t.Helper()
	DSN(t)
	return setupDB
}

// Exec runs setup SQL, failing the test on error.
func Exec(t testing.TB, q string, args ...any) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if _, err := DB(t).ExecContext(ctx, q, args...); err != nil {
		t.Fatalf("setup %q: %v", q, err)
	}
}

// Table returns a unique table name starting with connectors_ and drops
// the table when the test ends; the caller creates it.
func Table(t testing.TB, what string) string {
	t.Helper()
	var b [5]byte
	if _, err := rand.Read(b[:]); err != nil {
		t.Fatal(err)
	}
	name := fmt.Sprintf("connectors_%s_%s", what, hex.EncodeToString(b[:]))
	t.Cleanup(func() { Exec(t, "DROP TABLE IF EXISTS "+name) })
	return name
}
