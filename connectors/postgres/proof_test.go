package postgres_test

import (
	"context"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/edgemcp/edgemcp/connectors/postgres"
	"github.com/edgemcp/edgemcp/internal/testservices"
)

// proofSchema makes a schema with what the proof tests read: a plain table
// and views, functions of a user's that change their session (leak, a
// STABLE one: its declared volatility is no promise) and that do not
// (tidy), row security policies, types, an index on a user's function.
func proofSchema(t *testing.T) string {
	admin := testservices.PostgresConn(t)
	s := testservices.PostgresSchema(t, admin)
	for _, q := range []string{
		`CREATE TYPE S.mood AS ENUM ('calm', 'cross')`,
		`CREATE DOMAIN S.posint AS int CHECK (VALUE > 0)`,
		`CREATE TABLE S.t (id int8 PRIMARY KEY, name text, tenant text, mood S.mood, n S.posint)`,
		`INSERT INTO S.t VALUES (1, 'Ada', 'acme', 'calm', 1), (2, 'Bob', 'globex', 'cross', 2)`,
		`CREATE FUNCTION S.leak() RETURNS int STABLE LANGUAGE plpgsql AS $$
			BEGIN PERFORM set_config('statement_timeout', '0', false); RETURN 1; END $$`,
		`CREATE FUNCTION S.tidy(text) RETURNS text IMMUTABLE LANGUAGE sql AS $$ SELECT lower($1) $$`,
		`CREATE DOMAIN S.leaky AS int CHECK (S.leak() = 1)`,
		`CREATE VIEW S.v AS SELECT id, lower(name) AS name FROM S.t`,
		`CREATE VIEW S.v_leak AS SELECT id, name, S.leak() AS l FROM S.t`,
		`CREATE VIEW S.v_over AS SELECT id FROM S.v_leak`,
		`CREATE TABLE S.rls (id int, tenant text)`,
		`ALTER TABLE S.rls ENABLE ROW LEVEL SECURITY`,
		`CREATE POLICY tenant ON S.rls USING (tenant = current_setting('app.tenant', true))`,
		`CREATE TABLE S.rls_leak (id int)`,
		`CREATE POLICY leak ON S.rls_leak USING (S.leak() = 1)`,
		`CREATE TABLE S.indexed (name text)`,
		`CREATE INDEX ON S.indexed (S.tidy(name))`,
		`CREATE SEQUENCE S.seq`,
	} {
		testservices.PostgresExec(t, admin, strings.ReplaceAll(q, "S.", s+"."))
	}
	return s
}

// TestResetProofVerdicts: the statements the proof admits read only
// built-in, non-volatile code; every way a statement can reach code that
// changes its session, directly or through a view, a policy, a type or an
// index, leaves it unproven (a reason, or a proof that fails).
func TestResetProofVerdicts(t *testing.T) {
	s := proofSchema(t)
	c := open(t, postgres.Config{MaxConns: 2})
	ctx := context.Background()
	for _, tc := range []struct {
		sql  string
		pure bool
		why  string // part of a reason, "" when the proof itself fails
	}{
		{"SELECT id, name FROM S.t WHERE id = $1", true, ""},
		{"SELECT * FROM S.v WHERE name LIKE $1 || '%' ORDER BY name LIMIT $2", true, ""},
		{"WITH x AS (SELECT id FROM S.t) SELECT count(*), max(id) FROM x", true, ""},
		{"VALUES ($1::int, now(), $1 + 1)", true, ""},
		{"TABLE S.t", true, ""},
		{"SELECT * FROM S.rls", true, ""},
		{"SELECT mood, n, n + 1 FROM S.t WHERE mood = $1 AND n > $2", true, ""},
		{"SELECT json_agg(t), jsonb_build_object('a', $1::text) FROM S.t t", true, ""},
		{"SELECT id FROM S.t WHERE id = ANY($1) FOR UPDATE", true, ""},

		{"SELECT set_config('statement_timeout', '0', false)", false, "set_config"},
		{"SELECT S.leak()", false, "leak"},
		{"SELECT S.tidy(name) FROM S.t", false, "tidy"}, // a user's function, whatever it declares
		{"SELECT * FROM S.v_leak", false, "leak"},
		{"SELECT * FROM S.v_over", false, "leak"},
		{"SELECT * FROM S.rls_leak", false, "leak"},
		{"SELECT $1::S.leaky", false, "leak"},
		{"SELECT pg_advisory_lock($1)::text", false, "pg_advisory_lock"},
		{"SELECT pg_try_advisory_lock(1)", false, "pg_try_advisory_lock"},
		{"SELECT nextval('S.seq')", false, "nextval"},
		{"SELECT random()", false, "random"},
		{"SELECT record_in('(1)', 'S.t'::regtype, -1)::text", false, "record_in"},
		{"SELECT table_to_xml('S.t', true, true, '')", false, "table_to_xml"},
		{"SELECT * FROM S.indexed", false, "tidy"}, // in an index expression
		{"WITH x AS (INSERT INTO S.t VALUES (3) RETURNING id) SELECT * FROM x", false, ""},
		{"SELECT 1 INTO TEMP edgemcp_tt", false, ""},
		{"INSERT INTO S.t (id) VALUES ($1)", false, ""},
	} {
		sql := strings.ReplaceAll(tc.sql, "S.", s+".")
		reasons, err := c.ProveQuery(ctx, sql)
		switch {
		case tc.pure && (err != nil || len(reasons) > 0):
			t.Errorf("%s: not proven: %v %v", tc.sql, reasons, err)
		case !tc.pure && err == nil && len(reasons) == 0:
			t.Errorf("%s: proven, should not be", tc.sql)
		case !tc.pure && tc.why != "" && !strings.Contains(strings.Join(reasons, "\n"), tc.why):
			t.Errorf("%s: reasons %v (err %v), want one naming %s", tc.sql, reasons, err, tc.why)
		case !tc.pure && tc.why == "" && err == nil:
			t.Errorf("%s: want the proof to fail, got reasons %v", tc.sql, reasons)
		}
	}
	// The proof left nothing behind: no view, no transaction.
	if got := scalar(t, c, "SELECT count(*) FROM pg_class WHERE relname = 'edgemcp_reset_proof'"); got != int64(0) {
		t.Errorf("the proof's view survived: %v", got)
	}
}

// proofClock is a clock the test moves.
type proofClock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *proofClock) Now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.now }
func (c *proofClock) Add(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
}

// TestResetProofSkipsReset: on a one-connection pool with proofs, a
// proven statement is the last thing its backend ran (no reset after it),
// and the reset still follows, call after call, every statement that could
// leave something in its session: set_config through a user's STABLE
// function, an advisory lock, and a view replaced after the proof (once
// the proof expires: the window the proof's life leaves is documented).
func TestResetProofSkipsReset(t *testing.T) {
	s := proofSchema(t)
	admin := testservices.PostgresConn(t)
	clock := &proofClock{now: time.Now()}
	const life = time.Minute
	for _, ro := range []bool{false, true} {
		c := open(t, postgres.Config{MaxConns: 1, ReadOnly: ro, StatementTimeout: 1234 * time.Millisecond})
		c.EnableResetProofs(life)
		c.SetProofClock(clock.Now)
		ctx := context.Background()
		pid := scalar(t, c, "SELECT pg_backend_pid()")
		lastQuery := func() string {
			var q string
			if err := admin.QueryRow(ctx, "SELECT query FROM pg_stat_activity WHERE pid = $1", pid).Scan(&q); err != nil {
				t.Fatal(err)
			}
			return q
		}
		call := func(sql string, args ...any) {
			t.Helper()
			if _, err := c.Query(ctx, strings.ReplaceAll(sql, "S.", s+"."), args); err != nil {
				t.Fatalf("%s: %v", sql, err)
			}
			c.WaitProofs()
		}
		timeoutKept := func(after string) {
			t.Helper()
			if got := scalar(t, c, "SELECT current_setting('statement_timeout')"); got != "1234ms" {
				t.Errorf("read_only=%v: statement_timeout after %s: %v, want 1234ms", ro, after, got)
			}
			c.WaitProofs()
		}

		// The last statement of a proven call is its own, not the reset's
		// (read_only's too: its session is read-only, sessionReadOnly).
		proven := func(what string) {
			t.Helper()
			q := lastQuery()
			if !strings.HasPrefix(q, "SELECT") {
				t.Errorf("read_only=%v: %s was followed by %q", ro, what, q)
			}
		}
		pure := "SELECT id, name FROM S.t WHERE id = $1"
		call(pure, 1) // reset, then proven
		call(pure, 2)
		proven("a proven statement")

		for range 2 { // unproven, then proven impure: reset both times
			call("SELECT S.leak()")
			timeoutKept("a user's function's set_config")
			key := time.Now().UnixNano()
			call("SELECT pg_try_advisory_lock($1::int8)", key)
			var free bool
			if err := admin.QueryRow(ctx, "SELECT pg_try_advisory_lock($1)", key).Scan(&free); err != nil {
				t.Fatal(err)
			}
			if !free {
				t.Errorf("read_only=%v: an advisory lock survived its call", ro)
			}
			testservices.PostgresExec(t, admin, "SELECT pg_advisory_unlock_all()")
		}

		// A view proven pure, then replaced by one that leaks, with the
		// same columns (no stale plan to say so).
		testservices.PostgresExec(t, admin, "CREATE OR REPLACE VIEW "+s+".v AS SELECT id, lower(name) AS name FROM "+s+".t")
		view := "SELECT * FROM S.v WHERE id = $1"
		call(view, 1)
		call(view, 1)
		proven("the view's statement")
		testservices.PostgresExec(t, admin, "CREATE OR REPLACE VIEW "+s+".v AS SELECT id, lower(name) AS name FROM "+s+".t WHERE "+s+".leak() = 1")
		clock.Add(life + time.Second)
		for range 2 { // expired: reset and proven again, impure: reset
			call(view, 1)
			timeoutKept("a view replaced after its proof")
		}
		testservices.PostgresExec(t, admin, "CREATE OR REPLACE VIEW "+s+".v AS SELECT id, lower(name) AS name FROM "+s+".t")
	}
}

// TestResetProofLeavesNothing: the proof itself runs the database's code
// (an event trigger on the CREATE VIEW it makes); what that code leaves in
// the session, here a session advisory lock, which survives the proof's
// rollback, is reset before the connection serves another call.
func TestResetProofLeavesNothing(t *testing.T) {
	admin := testservices.PostgresConn(t)
	s := testservices.PostgresSchema(t, admin)
	key := strconv.FormatInt(time.Now().UnixNano(), 10)
	testservices.PostgresExec(t, admin, "CREATE FUNCTION "+s+".lock() RETURNS event_trigger LANGUAGE plpgsql AS $$ BEGIN PERFORM pg_try_advisory_lock("+key+"); END $$")
	testservices.PostgresExec(t, admin, "CREATE EVENT TRIGGER edgemcp_proof_lock ON ddl_command_end WHEN TAG IN ('CREATE VIEW') EXECUTE FUNCTION "+s+".lock()")
	t.Cleanup(func() { testservices.PostgresExec(t, admin, "DROP EVENT TRIGGER edgemcp_proof_lock") })
	c := open(t, postgres.Config{MaxConns: 1})
	c.EnableResetProofs(time.Hour)
	if _, err := c.Query(context.Background(), "SELECT 1", nil); err != nil {
		t.Fatal(err)
	}
	c.WaitProofs()
	var free bool
	if err := admin.QueryRow(context.Background(), "SELECT pg_try_advisory_lock("+key+")").Scan(&free); err != nil {
		t.Fatal(err)
	}
	if !free {
		t.Error("a session advisory lock taken while proving a statement was left on the connection")
	}
}
