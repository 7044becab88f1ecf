package postgres_test

import (
	"context"
	"testing"

	"github.com/edgemcp/edgemcp/connectors/internal/conntest"
	"github.com/edgemcp/edgemcp/connectors/postgres"
	"github.com/edgemcp/edgemcp/internal/testservices"
	"github.com/edgemcp/edgemcp/pipeline"
)

// open returns a connector on the test database, closed when the test ends.
func open(t testing.TB, cfg postgres.Config) *postgres.Connector {
	t.Helper()
	if cfg.DSN == "" {
		cfg.DSN = testservices.PostgresURL(t)
	}
	c, err := postgres.Open(context.Background(), cfg)
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	t.Cleanup(c.Close)
	return c
}

// The shared connector assertions, under the names these tests use.
var (
	query = func(t testing.TB, c *postgres.Connector, sql string, args ...any) *pipeline.Rows {
		return conntest.Query(t, c, sql, args...)
	}
	scalar = func(t testing.TB, c *postgres.Connector, sql string, args ...any) any {
		return conntest.Scalar(t, c, sql, args...)
	}
	publicErr = conntest.PublicErr
	sameValue = conntest.SameValue
)
