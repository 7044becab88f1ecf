package postgres_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/edgemcp/edgemcp/connectors/postgres"
	"github.com/edgemcp/edgemcp/internal/testservices"
	"github.com/edgemcp/edgemcp/pipeline"
)

// rlsFixture: a table with a row-level security policy on the claims a
// connector hands over, and a non-owner role that may read it (the owner,
// postgres, is a superuser and would bypass the policy).
type rlsFixture struct {
	table, role string
}

func newRLSFixture(t testing.TB) rlsFixture {
	t.Helper()
	admin := testservices.PostgresConn(t)
	role := testservices.Name("edgemcp_rls")
	testservices.PostgresExec(t, admin, "CREATE ROLE "+role+" LOGIN NOSUPERUSER NOBYPASSRLS")
	t.Cleanup(func() { _, _ = admin.Exec(context.Background(), "DROP ROLE IF EXISTS "+role) })
	s := testservices.PostgresSchema(t, admin)
	table := s + ".docs"
	for _, q := range []string{
		"CREATE TABLE " + table + " (id int PRIMARY KEY, tenant text NOT NULL, title text NOT NULL)",
		"INSERT INTO " + table + " VALUES (1, 'acme', 'a1'), (2, 'acme', 'a2'), (3, 'globex', 'g1')",
		"ALTER TABLE " + table + " ENABLE ROW LEVEL SECURITY",
		"CREATE POLICY tenant_rows ON " + table + " USING (tenant = current_setting('request.jwt.claims', true)::json->>'tenant')",
		"GRANT USAGE ON SCHEMA " + s + " TO " + role,
		"GRANT SELECT ON " + table + " TO " + role,
	} {
		testservices.PostgresExec(t, admin, q)
	}
	return rlsFixture{table: table, role: role}
}

func as(tenant string, claims map[string]any) context.Context {
	id := &pipeline.Identity{Subject: "user-" + tenant, Claims: map[string]any{"tenant": tenant}}
	for k, v := range claims {
		id.Claims[k] = v
	}
	return pipeline.WithCaller(context.Background(), id)
}

func titlesOf(t testing.TB, rows *pipeline.Rows) string {
	t.Helper()
	var out []string
	for _, r := range rows.Values {
		out = append(out, fmt.Sprint(r...))
	}
	return strings.Join(out, ",")
}

func authFailure(t testing.TB, err error, want string) {
	t.Helper()
	var pe *pipeline.Error
	if !errors.As(err, &pe) || pe.Stage != pipeline.StageAuth || pe.Code != pipeline.CodeStageFailed || !strings.Contains(pe.Message, want) {
		t.Fatalf("err = %v, want an authentication failure containing %q", err, want)
	}
}

// TestClaimsSettingRowLevelSecurity: with claims_setting, each statement
// runs after set_config('request.jwt.claims', <claims>, true) in its own
// transaction, so a policy on current_setting sees the caller's tenant;
// the setting never outlives the call, on read-only and read-write
// connectors alike.
func TestClaimsSettingRowLevelSecurity(t *testing.T) {
	f := newRLSFixture(t)
	dsn := testservices.PostgresURLWith(t, "user", f.role)
	sql := "SELECT title FROM " + f.table + " ORDER BY id"
	for _, readOnly := range []bool{true, false} {
		t.Run(fmt.Sprintf("read_only=%t", readOnly), func(t *testing.T) {
			c := open(t, postgres.Config{DSN: dsn, ReadOnly: readOnly, MaxConns: 1, ClaimsSetting: "request.jwt.claims"})
			for _, tc := range []struct{ tenant, want string }{
				{"acme", "a1,a2"}, {"globex", "g1"}, {"initech", ""}, {"acme' OR '1'='1", ""}, {"globex", "g1"},
			} {
				rows, err := c.Query(as(tc.tenant, nil), sql, nil)
				if err != nil {
					t.Fatal(err)
				}
				if got := titlesOf(t, rows); got != tc.want {
					t.Errorf("as %q: %q, want %q", tc.tenant, got, tc.want)
				}
			}
			rows, err := c.Query(as("acme", map[string]any{"level": 3}), "SELECT current_setting('request.jwt.sub'), (current_setting('request.jwt.claims')::jsonb->>'level')::int", nil)
			if err != nil {
				t.Fatal(err)
			}
			if got := fmt.Sprint(rows.Values); got != "[[user-acme 3]]" {
				t.Errorf("settings: %s", got)
			}
			// One connection (MaxConns 1): after the call its session has
			// neither setting nor rows to show (is_local, and the reset).
			var claims, sub string
			if err := c.Pool().QueryRow(context.Background(), "SELECT coalesce(current_setting('request.jwt.claims', true), ''), coalesce(current_setting('request.jwt.sub', true), '')").Scan(&claims, &sub); err != nil {
				t.Fatal(err)
			}
			if claims != "" || sub != "" {
				t.Errorf("the settings outlived the call: %q %q", claims, sub)
			}
			plain := open(t, postgres.Config{DSN: dsn, MaxConns: 1})
			if got := titlesOf(t, query(t, plain, sql)); got != "" {
				t.Errorf("without claims: %q, want no rows", got)
			}
			_, err = c.Query(context.Background(), sql, nil)
			authFailure(t, err, "the call has none")
		})
	}
}

// TestRoleClaim: role_claim switches the statement's role to the one the
// claim names, from the roles list only; any other value or none is an
// authentication failure, and the role ends with the call.
func TestRoleClaim(t *testing.T) {
	f := newRLSFixture(t)
	c := open(t, postgres.Config{ReadOnly: true, MaxConns: 1, ClaimsSetting: "request.jwt.claims", RoleClaim: "db_role", Roles: []string{f.role, "edgemcp_no_such_role"}})
	sql := "SELECT current_user::text, count(*) FROM " + f.table
	rows, err := c.Query(as("acme", map[string]any{"db_role": f.role}), sql, nil)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := fmt.Sprint(rows.Values), fmt.Sprintf("[[%s 2]]", f.role); got != want {
		t.Errorf("as the role: %s, want %s", got, want)
	}
	_, err = c.Query(as("acme", map[string]any{"db_role": "postgres"}), sql, nil)
	authFailure(t, err, `claim "db_role" names a role the connector does not allow`)
	_, err = c.Query(as("acme", nil), sql, nil)
	authFailure(t, err, `the connector takes the role from claim "db_role" and the verified identity does not carry it`)
	// The superuser the DSN names is back for the next call: it bypasses
	// the policy.
	plain := open(t, postgres.Config{ReadOnly: true, MaxConns: 1})
	if got := fmt.Sprint(query(t, plain, "SELECT current_user::text").Values); got != "[[postgres]]" {
		t.Errorf("after the call: %s", got)
	}
	if _, err := postgres.Open(context.Background(), postgres.Config{DSN: testservices.PostgresURL(t), RoleClaim: "r"}); err == nil || !strings.Contains(err.Error(), "role_claim needs roles") {
		t.Errorf("role_claim without roles: %v", err)
	}
	if _, err := postgres.Open(context.Background(), postgres.Config{DSN: testservices.PostgresURL(t), ClaimsSetting: "claims"}); err == nil || !strings.Contains(err.Error(), "a prefix and a dot") {
		t.Errorf("claims_setting without a prefix: %v", err)
	}
}
