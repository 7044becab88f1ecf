package testservices

import (
	"context"
	"database/sql"
	"testing"
	"time"

	_ "github.com/go-sql-driver/mysql" // registers "mysql" for setup connections
)

// MySQLEnv names the environment variable holding the MySQL/MariaDB DSN
// (the driver's own form, as scripts/test-services.sh exports it).
const MySQLEnv = "EDGEMCP_TEST_MYSQL_DSN"

var (
	mysql   = service{what: "MySQL/MariaDB", env: MySQLEnv, def: "root@tcp(127.0.0.1:3306)/test"}
	mysqlDB *sql.DB
)

// MySQLDSN returns the test DSN after checking, once per process, that the
// server answers.
func MySQLDSN(t testing.TB) string {
	t.Helper()
	return mysql.require(t, func(dsn string) (string, error) {
		db, err := sql.Open("mysql", dsn)
		if err != nil {
			return "", err
		}
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		if err := db.PingContext(ctx); err != nil {
			db.Close()
			return "", err
		}
		mysqlDB = db
		return dsn, nil
	})
}

// MySQLDB is a plain pool for test setup and teardown.
func MySQLDB(t testing.TB) *sql.DB {
	t.Helper()
	MySQLDSN(t)
	return mysqlDB
}

// MySQLExec runs setup SQL, failing the test on error.
func MySQLExec(t testing.TB, q string, args ...any) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if _, err := MySQLDB(t).ExecContext(ctx, q, args...); err != nil {
		t.Fatalf("setup %q: %v", q, err)
	}
}

// MySQLTable returns a unique table name starting with connectors_ and
// drops the table when the test ends; the caller creates it.
func MySQLTable(t testing.TB, what string) string {
	t.Helper()
	name := Name("connectors_" + what)
	t.Cleanup(func() { MySQLExec(t, "DROP TABLE IF EXISTS "+name) })
	return name
}
