package main

import (
	"context"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/edgemcp/edgemcp/internal/testservices"
)

func TestMain(m *testing.M) {
	if os.Getenv(childEnv) != "" { // the pinned layout's gateway (layout.go)
		serveChild()
		return
	}
	os.Exit(testservices.Main(m))
}

// TestSoak is the soak scenario for 30 seconds (the test command's share
// of `go run ./bench -scenario soak -duration 5m`): mixed tools and
// session churn through the real gateway, failing if goroutines, heap,
// open files or database connections grow past the stated bounds, or if a
// call fails. Skipped with -short.
func TestSoak(t *testing.T) {
	if testing.Short() {
		t.Skip("the soak runs 30 s; skipped with -short")
	}
	dsn := testservices.PostgresURL(t)
	ctx := context.Background()
	db, err := pgxpool.New(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if err := setup(ctx, db, 10000); err != nil {
		t.Fatal(err)
	}
	var out strings.Builder
	err = runSoak(ctx, dsn, 4, 30*time.Second, "2025-11-25", &out)
	t.Log("\n" + out.String())
	if err != nil {
		t.Fatal(err)
	}
}
