package mysql

import (
	"fmt"
	"testing"
	"time"

	"github.com/edgemcp/edgemcp/connectors/internal/conntest"
	"github.com/edgemcp/edgemcp/internal/testservices"
)

func TestChangesSession(t *testing.T) {
	for _, tc := range []struct {
		sql  string
		want bool
	}{
		{"SELECT id FROM t WHERE id = ?", false},
		{"(SELECT 1) UNION (SELECT 2)", false},
		{"INSERT INTO t VALUES (?, ?)", false},
		{"select @@session.max_statement_time, '@v' AS x -- @v := 1", false},
		{"SELECT GET_LOCKS FROM t", false},
		{"SELECT @v := ?", true},
		{"SELECT @v", true},
		{"SELECT @'v' := 1", true},
		{"SELECT 1 INTO @v", true},
		{"SELECT get_lock('a', 0)", true},
		{"SELECT `RELEASE_ALL_LOCKS`()", true},
		{"SELECT LAST_INSERT_ID(5)", true},
		{"SET SESSION max_statement_time = 0", true},
		{"SET STATEMENT max_statement_time = 0 FOR SELECT 1", true},
		{"USE mysql", true},
		{"START TRANSACTION", true},
		{"CREATE TEMPORARY TABLE x (a INT)", true},
		{"PREPARE s FROM 'SELECT 1'", true},
		{"CALL p()", true},
		{"LOCK TABLES t READ", true},
		{"SELECT 'unterminated", true},
	} {
		if got := changesSession(tc.sql); got != tc.want {
			t.Errorf("changesSession(%q) = %t, want %t", tc.sql, got, tc.want)
		}
	}
}

// TestSessionNotShared: on a one-connection pool, what a caller leaves in
// its session (a user variable, a named lock, a setting, a temporary
// table, an open transaction, another database) is not there for the
// next caller, who gets the connector's settings; an ordinary statement
// keeps its connection.
func TestSessionNotShared(t *testing.T) {
	for _, ro := range []bool{false, true} {
		t.Run(fmt.Sprintf("read_only=%t", ro), func(t *testing.T) {
			c := open(t, Config{ReadOnly: ro, MaxConns: 1, StatementTimeout: 2 * time.Second})
			mariadb := isMariaDB(t, c)

			id := conntest.Scalar(t, c, "SELECT CONNECTION_ID()")
			conntest.SameValue(t, "connection of an ordinary statement", conntest.Scalar(t, c, "SELECT CONNECTION_ID()"), id)

			// Caller A assigns @v (READ ONLY lets it); caller B reads NULL.
			conntest.SameValue(t, "A sets @v", conntest.Scalar(t, c, "SELECT @edgemcp_v := ?", int64(42)), int64(42))
			conntest.SameValue(t, "B reads @v", conntest.Scalar(t, c, "SELECT @edgemcp_v"), nil)

			// A named lock is released with the call.
			lock := testservices.MySQLTable(t, "lock")
			conntest.SameValue(t, "A takes the lock", conntest.Scalar(t, c, "SELECT GET_LOCK(?, 0)", lock), int64(1))
			// The server frees it when it has ended the closed connection's
			// session, which it does on its own time: wait for that.
			var free int64
			for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(20 * time.Millisecond) {
				err := testservices.MySQLDB(t).QueryRow("SELECT IS_FREE_LOCK(?)", lock).Scan(&free)
				if err == nil && free == 1 {
					break
				}
				if time.Now().After(deadline) {
					t.Errorf("lock after A's call: free=%d, %v", free, err)
					break
				}
			}

			// A setting changed by A: B has the connector's again.
			if _, err := c.Query(ctxTimeout(t, 10*time.Second), "SET SESSION TRANSACTION READ WRITE", nil); err != nil {
				t.Fatal(err)
			}
			if mariadb {
				conntest.SameValue(t, "read-only default after A's SET", conntest.Scalar(t, c, "SELECT @@SESSION.tx_read_only"), map[bool]int64{true: 1, false: 0}[ro])
				if _, err := c.Query(ctxTimeout(t, 10*time.Second), "SET SESSION max_statement_time = 0", nil); err != nil {
					t.Fatal(err)
				}
				conntest.SameValue(t, "statement timeout after A's SET", conntest.Scalar(t, c, "SELECT @@SESSION.max_statement_time"), 2.0)
			}
			if ro {
				return
			}
			for _, tc := range []struct{ leave, check string }{
				{"USE mysql", "SELECT DATABASE()"},
				{"START TRANSACTION", "SELECT @@in_transaction"}, // MariaDB's
			} {
				if !mariadb && tc.leave == "START TRANSACTION" {
					continue
				}
				before := conntest.Scalar(t, c, tc.check)
				if _, err := c.Query(ctxTimeout(t, 10*time.Second), tc.leave, nil); err != nil {
					t.Fatalf("%s: %v", tc.leave, err)
				}
				conntest.SameValue(t, "after "+tc.leave, conntest.Scalar(t, c, tc.check), before)
			}
			if _, err := c.Query(ctxTimeout(t, 10*time.Second), "CREATE TEMPORARY TABLE edgemcp_tmp (a INT)", nil); err != nil {
				t.Fatal(err)
			}
			if _, err := c.Query(ctxTimeout(t, 10*time.Second), "SELECT * FROM edgemcp_tmp", nil); err == nil {
				t.Errorf("the previous caller's temporary table is visible")
			}
		})
	}
}
