package testservices

import (
	"context"
	"fmt"
	"os"
	"strings"
	"testing"
)

func TestMain(m *testing.M) { os.Exit(Main(m)) }

// TestPostgresOwnDatabase: the URL names a database of this process, which
// the tests can use, and both DSN forms are pointed at it.
func TestPostgresOwnDatabase(t *testing.T) {
	conn := PostgresConn(t)
	var db string
	if err := conn.QueryRow(context.Background(), "SELECT current_database()").Scan(&db); err != nil {
		t.Fatal(err)
	}
	if want := fmt.Sprintf("%s%d_", databasePrefix, os.Getpid()); !strings.HasPrefix(db, want) || db != created.name {
		t.Errorf("current_database() = %q, want %s... (created %q)", db, want, created.name)
	}
	for in, want := range map[string]string{
		"postgres://u@h:5432/test?sslmode=disable": "postgres://u@h:5432/" + db + "?sslmode=disable",
		"host=h user=u dbname=test":                "host=h user=u dbname=test dbname=" + db,
	} {
		if got, err := withDatabase(in, db); err != nil || got != want {
			t.Errorf("withDatabase(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
	if processRuns(os.Getpid()) != true {
		t.Error("processRuns(own pid) = false")
	}
}
