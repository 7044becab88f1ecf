package mysql

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/edgemcp/edgemcp/connectors/internal/conntest"
	"github.com/edgemcp/edgemcp/internal/testservices"
)

// TestReadOnlyRefusesWrites: the server refuses every kind of write inside
// START TRANSACTION READ ONLY, and the data is unchanged.
func TestReadOnlyRefusesWrites(t *testing.T) {
	tbl := testservices.MySQLTable(t, "ro")
	testservices.MySQLExec(t, "CREATE TABLE "+tbl+" (id INT PRIMARY KEY, name VARCHAR(20))")
	testservices.MySQLExec(t, "INSERT INTO "+tbl+" VALUES (1, 'kept')")
	c := open(t, Config{ReadOnly: true, MaxConns: 2})

	for _, tc := range []struct {
		name string
		sql  string
		args []any
	}{
		{"insert", "INSERT INTO " + tbl + " VALUES (?, 'x')", []any{int64(2)}},
		{"update", "UPDATE " + tbl + " SET name = ? WHERE id = 1", []any{"changed"}},
		{"delete", "DELETE FROM " + tbl, nil},
		{"insert select", "INSERT INTO " + tbl + " SELECT id + 10, name FROM " + tbl, nil},
		{"replace", "REPLACE INTO " + tbl + " VALUES (1, ?)", []any{"replaced"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := c.Query(ctxTimeout(t, 10*time.Second), tc.sql, tc.args)
			pe := conntest.PublicErr(t, err)
			if !strings.Contains(pe.Public, "READ ONLY") || !strings.Contains(pe.Public, "1792") {
				t.Errorf("error %q, want the server's READ ONLY refusal (error 1792)", pe.Public)
			}
		})
	}
	rows := conntest.Query(t, c, "SELECT id, name FROM "+tbl)
	conntest.SameValue(t, "table after the refused writes", rows.Values, [][]any{{int64(1), "kept"}})

	// The connection that saw the refusals is clean: reads still work in
	// both protocols, and no transaction was left open.
	conntest.SameValue(t, "read with args", conntest.Scalar(t, c, "SELECT name FROM "+tbl+" WHERE id = ?", int64(1)), "kept")
	variable := "transaction_read_only"
	if isMariaDB(t, c) {
		variable = "tx_read_only"
	}
	conntest.SameValue(t, "session default", conntest.Scalar(t, c, "SELECT @@SESSION."+variable), int64(1))
}

// TestReadWriteConnector: without read_only, writes go through (so the
// refusals above are the read_only setting's doing).
func TestReadWriteConnector(t *testing.T) {
	tbl := testservices.MySQLTable(t, "rw")
	testservices.MySQLExec(t, "CREATE TABLE "+tbl+" (id INT PRIMARY KEY)")
	c := open(t, Config{})
	conntest.Query(t, c, "INSERT INTO "+tbl+" VALUES (?)", int64(7))
	conntest.SameValue(t, "inserted", conntest.Scalar(t, c, "SELECT COUNT(*) FROM "+tbl), int64(1))
}

func TestMaxRows(t *testing.T) {
	c := open(t, Config{MaxRows: 3})
	rows := conntest.Query(t, c, "SELECT 1 UNION ALL SELECT 2 UNION ALL SELECT 3")
	if len(rows.Values) != 3 {
		t.Fatalf("3 rows at max_rows 3: got %d", len(rows.Values))
	}
	_, err := c.Query(ctxTimeout(t, 10*time.Second), "SELECT 1 UNION ALL SELECT 2 UNION ALL SELECT 3 UNION ALL SELECT ?", []any{int64(4)})
	if pe := conntest.PublicErr(t, err); !strings.Contains(pe.Public, "max_rows") {
		t.Errorf("error %q, want the max_rows refusal", pe.Public)
	}
	// The pool serves after the abandoned result.
	conntest.SameValue(t, "after max_rows", conntest.Scalar(t, c, "SELECT ?", int64(5)), int64(5))
}

// TestMaxResultSize: a value counts its normalized bytes plus 16, so at
// 1000 bytes one string of 984 bytes passes and 985 fails, as do ten rows
// of 84 bytes and eleven, also on the read-only path; max_rows still applies; the pool serves the
// next call.
func TestMaxResultSize(t *testing.T) {
	for _, ro := range []bool{false, true} {
		t.Run(map[bool]string{false: "read-write", true: "read-only"}[ro], func(t *testing.T) {
			c := open(t, Config{MaxResultSize: 1000, MaxRows: 12, ReadOnly: ro, MaxConns: 1})
			conntest.ResultSize(t, c, 1000, "SELECT REPEAT('x', ?) AS v", []any{int64(984)}, []any{int64(985)})
			n := "SELECT 1 n"
			for i := 2; i <= 13; i++ {
				n += fmt.Sprintf(" UNION ALL SELECT %d", i)
			}
			conntest.ResultSize(t, c, 1000, "SELECT REPEAT('x', 84) AS v FROM ("+n+") s WHERE n <= ?", []any{int64(10)}, []any{int64(11)})
			_, err := c.Query(ctxTimeout(t, 10*time.Second), "SELECT n FROM ("+n+") s", nil)
			if pe := conntest.PublicErr(t, err); pe.Public != "the statement returned more than 12 rows (max_rows); add a LIMIT or raise max_rows" {
				t.Errorf("over max_rows: %q", pe.Public)
			}
			conntest.SameValue(t, "after max_rows", conntest.Scalar(t, c, "SELECT ?", int64(5)), int64(5))
		})
	}
}

// TestMaxRowsDoesNotDrain: a statement that forgot its LIMIT (here 10^8
// generated rows) fails at max_rows, or max_result_size, at once, in both
// protocols and on the read-only path, instead of the driver reading the
// whole result to drain it; the server stops producing it.
func TestMaxRowsDoesNotDrain(t *testing.T) {
	d := "(SELECT 0 d UNION ALL SELECT 1 UNION ALL SELECT 2 UNION ALL SELECT 3 UNION ALL SELECT 4 UNION ALL SELECT 5 UNION ALL SELECT 6 UNION ALL SELECT 7 UNION ALL SELECT 8 UNION ALL SELECT 9)"
	for _, tc := range []struct {
		name string
		cfg  Config
		want string
	}{
		{"read-write", Config{MaxRows: 10}, "max_rows"},
		{"read-only", Config{MaxRows: 10, ReadOnly: true}, "max_rows"},
		{"read-write max_result_size", Config{MaxResultSize: 1024}, "the result is larger than 1 KiB (max_result_size)"},
		{"read-only max_result_size", Config{MaxResultSize: 1024, ReadOnly: true}, "the result is larger than 1 KiB (max_result_size)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tc.cfg.MaxConns = 1
			c := open(t, tc.cfg)
			marker := testservices.MySQLTable(t, "drain")
			q := "SELECT a.d AS `" + marker + "` FROM " + d + " a, " + d + " b, " + d + " c, " + d + " e, " + d + " f, " + d + " g, " + d + " h, " + d + " i WHERE a.d >= ?"
			start := time.Now()
			_, err := c.Query(ctxTimeout(t, 60*time.Second), q, []any{int64(0)})
			if pe := conntest.PublicErr(t, err); !strings.Contains(pe.Public, tc.want) {
				t.Fatalf("error %q", pe.Public)
			}
			// Draining 10^8 rows takes minutes; a loaded machine may take
			// seconds to refuse.
			if d := time.Since(start); d > 20*time.Second {
				t.Errorf("the refusal took %v: the result was drained", d)
			}
			waitGone(t, marker, 3*time.Second)
			conntest.SameValue(t, "after", conntest.Scalar(t, c, "SELECT ?", int64(1)), int64(1))
		})
	}
}
