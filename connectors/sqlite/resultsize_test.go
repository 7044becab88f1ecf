package sqlite_test

import (
	"context"
	"testing"

	"github.com/edgemcp/edgemcp/connectors/internal/conntest"
	"github.com/edgemcp/edgemcp/connectors/sqlite"
)

// TestMaxResultSize: a value counts its normalized bytes plus 16, so at
// 1000 bytes one string of 984 bytes passes and 985 fails, as do ten rows
// of 84 bytes and eleven; max_rows still applies; the connector serves
// the next call.
func TestMaxResultSize(t *testing.T) {
	c := open(t, sqlite.Config{Path: newDB(t), MaxResultSize: 1000, MaxRows: 12})
	conntest.ResultSize(t, c, 1000, "SELECT substr(hex(zeroblob(?1)), 1, ?1) AS v", []any{int64(984)}, []any{int64(985)})
	conntest.ResultSize(t, c, 1000, `WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < ?)
		SELECT substr(hex(zeroblob(84)), 1, 84) AS v FROM n`, []any{int64(10)}, []any{int64(11)})
	_, err := c.Query(context.Background(), "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 13) SELECT i FROM n", nil)
	if pe := conntest.PublicErr(t, err); pe.Public != "the statement returned more than 12 rows (max_rows); add a LIMIT or raise max_rows" {
		t.Errorf("over max_rows: %q", pe.Public)
	}
	conntest.SameValue(t, "after max_rows", conntest.Scalar(t, c, "SELECT 1"), int64(1))
}
