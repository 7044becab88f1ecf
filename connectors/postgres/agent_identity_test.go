package postgres_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/edgemcp/edgemcp/connectors/internal/conntest"
	"github.com/edgemcp/edgemcp/connectors/postgres"
	"github.com/edgemcp/edgemcp/internal/testservices"
	"github.com/edgemcp/edgemcp/pipeline"
	"github.com/edgemcp/edgemcp/pipeline/sqlagent"
	"github.com/edgemcp/edgemcp/pipeline/sqltemplate"
)

// TestAgentRowLevelSecurity: the verified caller reaches the database
// for agent-written SQL as for declared tools (claims_setting), so a
// row-level security policy shows each tenant its own rows, whatever the
// agent writes; an agent that tries to set the claims itself is refused.
func TestAgentRowLevelSecurity(t *testing.T) {
	f := newRLSFixture(t)
	c := open(t, postgres.Config{DSN: testservices.PostgresURLWith(t, "user", f.role), MaxConns: 1, ClaimsSetting: "request.jwt.claims"})
	e := conntest.AgentEngine(t, sqlagent.Config{Prefix: "db", DB: c, Dialect: sqltemplate.Postgres})
	sql := conntest.JSONArgs(t, map[string]any{"sql": "SELECT title FROM " + f.table + " ORDER BY id"})
	for _, tc := range []struct{ tenant, want string }{
		{"acme", `[["a1"],["a2"]]`},
		{"globex", `[["g1"]]`},
		{"initech", `[]`},
	} {
		ctx := conntest.AsCaller(context.Background(), &pipeline.Identity{Subject: "user-" + tc.tenant, Claims: map[string]any{"tenant": tc.tenant}})
		got := conntest.MustCall(ctx, t, e, "db_query", sql)
		if !strings.Contains(got, `"rows":`+tc.want+`,`) {
			t.Errorf("%s: %s, want rows %s", tc.tenant, got, tc.want)
		}
	}
	acme := conntest.AsCaller(context.Background(), &pipeline.Identity{Subject: "user-acme", Claims: map[string]any{"tenant": "acme"}})
	for _, sql := range []string{
		"SELECT title FROM " + f.table + " WHERE set_config('request.jwt.claims', '{\"tenant\":\"globex\"}', true) IS NOT NULL",
		`SELECT title FROM ` + f.table + ` WHERE pg_catalog."set_config"('request.jwt.claims', '{"tenant":"globex"}', true) <> ''`,
	} {
		if out, perr := conntest.CallTool(acme, t, e, "db_query", conntest.JSONArgs(t, map[string]any{"sql": sql})); perr == nil {
			t.Errorf("%q ran: %s", sql, out)
		}
	}
	// Without a verified caller the connector refuses before any round
	// trip: the claims are how the policy knows the tenant.
	if _, perr := conntest.CallTool(context.Background(), t, e, "db_query", sql); perr == nil || perr.Stage != pipeline.StageAuth {
		t.Errorf("no caller: %v, want an authentication failure", perr)
	}
}

// TestAgentRole: with role, every statement runs as that role (SET
// LOCAL ROLE in its transaction): the catalog shows what the role may
// read, and the database refuses the rest, though the connector's own
// user may read it.
func TestAgentRole(t *testing.T) {
	fx := newAgentFixture(t)
	login, agent := testservices.Name("edgemcp_login"), testservices.Name("edgemcp_agent")
	s := fx.schema
	for _, q := range []string{
		"CREATE ROLE " + agent + " NOLOGIN",
		"CREATE ROLE " + login + " LOGIN IN ROLE " + agent,
		"GRANT USAGE ON SCHEMA " + s + " TO " + agent + ", " + login,
		"GRANT SELECT ON " + s + ".items TO " + agent,
		"GRANT SELECT ON ALL TABLES IN SCHEMA " + s + " TO " + login,
	} {
		testservices.PostgresExec(t, fx.admin, q)
	}
	t.Cleanup(func() {
		for _, r := range []string{login, agent} {
			_, _ = fx.admin.Exec(context.Background(), "DROP OWNED BY "+r)
			_, _ = fx.admin.Exec(context.Background(), "DROP ROLE IF EXISTS "+r)
		}
	})
	c := open(t, postgres.Config{DSN: testservices.PostgresURLWith(t, "user", login), MaxConns: 1})
	cfg := fx.config(c)
	cfg.Role = agent
	e := conntest.AgentEngine(t, cfg)
	ctx := context.Background()

	if got := conntest.MustCall(ctx, t, e, "db_list_tables", `{}`); strings.Contains(got, "secrets") || !strings.Contains(got, `"name":"items"`) {
		t.Errorf("list_tables as %s: %s", agent, got)
	}
	if _, perr := conntest.CallTool(ctx, t, e, "db_query", `{"sql":"SELECT ssn FROM `+s+`.secrets"}`); perr == nil || !strings.Contains(perr.Message, "permission denied") {
		t.Errorf("secrets as %s: %v, want permission denied", agent, perr)
	}
	if got := conntest.MustCall(ctx, t, e, "db_query", `{"sql":"SELECT current_user, count(*) FROM `+s+`.items GROUP BY 1"}`); !strings.Contains(got, `[["`+agent+`",10]]`) {
		t.Errorf("items as %s: %s", agent, got)
	}
	// The role ends with the transaction: the connector's own statements
	// run as its user again.
	if got := scalar(t, c, "SELECT current_user"); got != login {
		t.Errorf("current_user after the agent's call: %v, want %s", got, login)
	}
}

// TestAgentStatementTimeout: statement_timeout bounds the agent's
// statement on the server.
func TestAgentStatementTimeout(t *testing.T) {
	c := open(t, postgres.Config{MaxConns: 1})
	e := conntest.AgentEngine(t, sqlagent.Config{Prefix: "db", DB: c, Dialect: sqltemplate.Postgres, StatementTimeout: 50 * time.Millisecond})
	_, perr := conntest.CallTool(context.Background(), t, e, "db_query", `{"sql":"SELECT count(*) FROM generate_series(1, 1000000000)"}`)
	if perr == nil || !strings.Contains(perr.Message, "statement timed out") {
		t.Fatalf("a long statement: %v, want statement timed out", perr)
	}
	if got := scalar(t, c, "SELECT current_setting('statement_timeout')"); got != "0" {
		t.Errorf("statement_timeout after the call: %v, want the connector's 0", got)
	}
}
