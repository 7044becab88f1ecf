package caddymodule

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/caddyserver/caddy/v2"

	"github.com/edgemcp/edgemcp/internal/testservices"
)

// The identity tests bind the verified caller ({{ auth.subject }},
// {{ auth.claims.NAME }}) into statements of every connector type, with
// real JWTs from a local identity provider (auth_e2e_test.go).

// identityTenants are the tenant claims the tests' callers carry. Each
// owns one row: a payload bound as a value matches exactly its own row,
// one spliced into the SQL would match others or break the statement.
var identityTenants = []string{
	"acme", "globex",
	"x' OR '1'='1", "acme' --", `x\' OR 1=1 -- `, "'; DROP TABLE docs; --", "acme\" OR \"\"=\"", "%",
}

// identityEnv is where the identity tests' data lives.
type identityEnv struct {
	idp             *testIdP
	lite, maria, pg string // connection strings
	mariaTbl, pgTbl string
	kvURL, kvPrefix string
}

func newIdentityEnv(t *testing.T) *identityEnv {
	t.Helper()
	e := &identityEnv{idp: newTestIdP(t)}
	// SQLite: a file made here.
	e.lite = filepath.Join(t.TempDir(), "docs.db")
	db, err := sql.Open("sqlite", e.lite)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if _, err := db.Exec("CREATE TABLE docs (id INTEGER PRIMARY KEY, tenant TEXT NOT NULL, title TEXT NOT NULL)"); err != nil {
		t.Fatal(err)
	}
	// MariaDB.
	e.maria = testservices.MySQLDSN(t)
	e.mariaTbl = testservices.MySQLTable(t, "docs")
	testservices.MySQLExec(t, "CREATE TABLE "+e.mariaTbl+" (id INT PRIMARY KEY, tenant VARCHAR(255) NOT NULL, title VARCHAR(255) NOT NULL)")
	// Postgres.
	e.pg = postgresURL(t)
	conn := testservices.PostgresConn(t)
	e.pgTbl = testservices.PostgresSchema(t, conn) + ".docs"
	testservices.PostgresExec(t, conn, "CREATE TABLE "+e.pgTbl+" (id int PRIMARY KEY, tenant text NOT NULL, title text NOT NULL)")
	// Redis.
	e.kvURL, e.kvPrefix = testservices.RedisURL(t), testservices.RedisPrefix(t)
	rc := testservices.RedisClient(t)

	for i, tenant := range identityTenants {
		for j := 0; j < 2; j++ {
			id, title := 10*i+j, fmt.Sprintf("%s #%d", tenant, j)
			if _, err := db.Exec("INSERT INTO docs VALUES (?, ?, ?)", id, tenant, title); err != nil {
				t.Fatal(err)
			}
			testservices.MySQLExec(t, "INSERT INTO "+e.mariaTbl+" VALUES (?, ?, ?)", id, tenant, title)
			testservices.PostgresExec(t, conn, "INSERT INTO "+e.pgTbl+" VALUES ($1, $2, $3)", id, tenant, title)
		}
		rc.HSet(context.Background(), e.kvPrefix+"tenant:"+tenant, "name", tenant)
	}
	return e
}

func (e *identityEnv) caddyfile(extra string) string {
	return fmt.Sprintf(`SITE {
	mcp /mcp {
		auth sso jwt {
			jwks_url %s
			issuer %s
			audience %s
		}
		connector lite sqlite %q {
			read_only
		}
		connector maria mysql %q {
			read_only
		}
		connector pg postgres %q {
			read_only
		}
		connector kv redis %q {
			read_only
		}
		cache {
			default_ttl 1m
		}
		tool lite-docs {
			description "The caller's tenant's documents"
			use lite
			statement "SELECT id, title FROM docs WHERE tenant = {{ auth.claims.tenant }} ORDER BY id"
			auth sso
		}
		tool maria-docs {
			description "The caller's tenant's documents"
			use maria
			statement "SELECT id, title FROM %s WHERE CAST(tenant AS BINARY) = CAST({{ auth.claims.tenant }} AS BINARY) ORDER BY id"
			auth sso
		}
		tool pg-docs {
			description "The caller's tenant's documents"
			use pg
			statement "SELECT id, title FROM %s WHERE tenant = {{ auth.claims.tenant }} ORDER BY id"
			auth sso
		}
		tool kv-tenant {
			description "The caller's tenant's settings"
			use kv
			statement "HGET %stenant:{{ auth.claims.tenant }} name"
			auth sso
		}
		tool whoami {
			description "Identity values with their types"
			use lite
			statement "SELECT {{ auth.subject }} AS sub, {{ auth.claims.level }} + 1 AS next_level, typeof({{ auth.claims.level }}) AS level_type, {{ auth.claims.org.id }} AS org, {{ auth.claims.region | default 'eu' }} AS region"
			auth sso
		}
		tool pg-types {
			description "Identity values with their Postgres types"
			use pg
			statement "SELECT {{ auth.claims.level }} + 1 AS next_level, cardinality({{ auth.claims.groups }}::text[]) AS n_groups"
			auth sso
		}
		%s
	}
}`, e.idp.jwks.URL, authIssuer, authAudience, e.lite, e.maria, e.pg, e.kvURL, e.mariaTbl, e.pgTbl, e.kvPrefix, extra)
}

// callAs calls tool with the bearer token (none when token is "").
func callAs(t testing.TB, s *rawSession, token, tool string, args any) rpcResponse {
	t.Helper()
	s.nextID++
	if args == nil {
		args = map[string]any{}
	}
	a, _ := json.Marshal(args)
	hdr := map[string]string{}
	if token != "" {
		hdr["Authorization"] = "Bearer " + token
	}
	resp, _ := s.postWith(t, fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":%q,"arguments":%s}}`, s.nextID, tool, a), hdr)
	return resp
}

func titles(t testing.TB, r rpcResponse) []string {
	t.Helper()
	var out []string
	for _, row := range r.tool(t).rows(t) {
		out = append(out, row["title"].(string))
	}
	return out
}

// TestIdentityValuesEndToEnd: each caller sees only its tenant's rows
// through the same tools on SQLite, MariaDB, Postgres and Redis,
// concurrently and with the cache on; injection payloads in the claim bind
// as values; the caller cannot supply the claim as an argument; a call
// without a token, or with a token lacking the claim, is an
// authentication failure.
func TestIdentityValuesEndToEnd(t *testing.T) {
	e := newIdentityEnv(t)
	g := startGateway(t, e.caddyfile(""))
	s := g.rawSession(t, "2025-11-25")

	tokens := make([]string, len(identityTenants))
	for i, tenant := range identityTenants {
		tokens[i] = e.idp.token(t, fmt.Sprintf("user%d", i), "", map[string]any{"tenant": tenant}, time.Hour)
	}
	var wg sync.WaitGroup
	errs := make(chan string, 1000)
	for round := 0; round < 2; round++ { // the second round is served from the cache
		for i, tenant := range identityTenants {
			for _, tool := range []string{"lite-docs", "maria-docs", "pg-docs", "kv-tenant"} {
				wg.Add(1)
				go func() {
					defer wg.Done()
					s := g.rawSession(t, "2025-11-25")
					r := callAs(t, s, tokens[i], tool, nil)
					if r.Error != nil {
						errs <- fmt.Sprintf("%s as %q: %+v", tool, tenant, r.Error)
						return
					}
					if tool == "kv-tenant" {
						if got, want := r.tool(t).Content[0].Text, string(must(json.Marshal(tenant))); got != want {
							errs <- fmt.Sprintf("%s as %q: %s, want %s", tool, tenant, got, want)
						}
						return
					}
					want := []string{tenant + " #0", tenant + " #1"}
					if got := titles(t, r); !slices.Equal(got, want) {
						errs <- fmt.Sprintf("%s as %q: %q, want %q", tool, tenant, got, want)
					}
				}()
			}
		}
		wg.Wait()
	}
	close(errs)
	for e := range errs {
		t.Error(e)
	}

	// The claim is not an input: passing it is a validation error.
	r := callAs(t, s, tokens[0], "pg-docs", map[string]any{"tenant": "globex"})
	if r.Error == nil || r.Error.Code != -32000 || !strings.Contains(r.Error.Message, `input "tenant": unknown input`) {
		t.Errorf("tenant as an argument: %+v, want the validation error", r.Error)
	}
	// No token, or a token without the claim: authentication failures.
	for _, tool := range []string{"lite-docs", "maria-docs", "pg-docs", "kv-tenant"} {
		r := callAs(t, s, "", tool, nil)
		if r.Error == nil || r.Error.Code != -32000 || !strings.HasPrefix(r.Error.Message, "authentication") {
			t.Errorf("%s without a token: %+v", tool, r.Error)
		}
		r = callAs(t, s, e.idp.token(t, "carol", "", nil, time.Hour), tool, nil)
		if r.Error == nil || r.Error.Code != -32000 || r.Error.Message != `authentication: the tool needs claim "tenant" and the verified identity does not carry it` {
			t.Errorf("%s without the claim: %+v", tool, r.Error)
		}
	}

	// Claim types are kept: a number binds as a number, a list as an
	// array, a nested claim by its path; "| default" fills a missing claim.
	tok := e.idp.token(t, "dave", "", map[string]any{"level": 2, "groups": []string{"a", "b", "c"}, "org": map[string]any{"id": "o-7"}}, time.Hour)
	rows := callAs(t, s, tok, "whoami", nil).tool(t).rows(t)
	if got := fmt.Sprint(rows); got != "[map[level_type:integer next_level:3 org:o-7 region:eu sub:dave]]" {
		t.Errorf("whoami: %s", got)
	}
	rows = callAs(t, s, tok, "pg-types", nil).tool(t).rows(t)
	if got := fmt.Sprint(rows); got != "[map[n_groups:3 next_level:3]]" {
		t.Errorf("pg-types: %s", got)
	}
}

// TestIdentityValuesRefusedAtLoad: every misuse of identity values is a
// load error naming the tool, and the running config keeps serving.
func TestIdentityValuesRefusedAtLoad(t *testing.T) {
	e := newIdentityEnv(t)
	g := startGateway(t, e.caddyfile(""))
	for _, tc := range []struct{ name, tool, want string }{
		{"no auth provider", `tool anon {
			description "x"
			use lite
			statement "SELECT * FROM docs WHERE tenant = {{ auth.claims.tenant }}"
		}`, `tool "anon": the statement binds the caller's identity (auth.claims.tenant) but the tool has no auth provider: give it an auth block or set default_auth`},
		{"no auth provider, redis", `tool anon {
			description "x"
			use kv
			statement "GET {{ auth.subject }}"
		}`, `tool "anon": the statement binds the caller's identity (auth.subject) but the tool has no auth provider`},
		{"cache shared", `tool shared {
			description "x"
			use lite
			statement "SELECT * FROM docs WHERE tenant = {{ auth.claims.tenant }}"
			auth sso
			cache shared 1m
		}`, `tool "shared": cache shared: the statement binds the caller's identity (auth.claims.tenant), so its results differ per caller and cannot be shared`},
		{"identifier position", `tool ident {
			description "x"
			use lite
			statement "SELECT * FROM docs ORDER BY {{ auth.claims.col | ident }}"
			auth sso
		}`, `tool "ident": statement: line 1, column 29: an identity value cannot be an identifier`},
		{"identifier position by grammar", `tool ident {
			description "x"
			use pg
			statement "SELECT * FROM {{ auth.claims.table }}"
			auth sso
		}`, `identity value auth.claims.table is in identifier position`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := g.load(e.caddyfile(tc.tool))
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("load: %v\nwant %q", err, tc.want)
			}
		})
	}
	// Identity values with default_auth need no tool auth block.
	if err := g.load(strings.Replace(e.caddyfile(`tool anon {
			description "x"
			use lite
			statement "SELECT * FROM docs WHERE tenant = {{ auth.claims.tenant }}"
		}`), "connector lite", "default_auth sso\n\t\tconnector lite", 1)); err != nil {
		t.Fatalf("with default_auth: %v", err)
	}
}

// TestClaimsSettingEndToEnd: a Postgres connector with claims_setting, as
// a role that does not own the table, serves one tool whose statement has
// no filter at all: the row-level security policy, reading the verified
// claims, gives each caller its tenant's rows, concurrently and with the
// cache on. role_claim switches to a listed role; a caller cannot pass the
// tenant, and a call without a token fails authentication.
func TestClaimsSettingEndToEnd(t *testing.T) {
	idp := newTestIdP(t)
	conn := testservices.PostgresConn(t)
	role := testservices.Name("edgemcp_rls")
	testservices.PostgresExec(t, conn, "CREATE ROLE "+role+" LOGIN NOSUPERUSER NOBYPASSRLS")
	t.Cleanup(func() { _, _ = conn.Exec(context.Background(), "DROP ROLE IF EXISTS "+role) })
	schema := testservices.PostgresSchema(t, conn)
	table := schema + ".docs"
	for _, q := range []string{
		"CREATE TABLE " + table + " (id int PRIMARY KEY, tenant text NOT NULL, title text NOT NULL)",
		"INSERT INTO " + table + " VALUES (1, 'acme', 'a1'), (2, 'acme', 'a2'), (3, 'globex', 'g1')",
		"ALTER TABLE " + table + " ENABLE ROW LEVEL SECURITY",
		"CREATE POLICY tenant_rows ON " + table + " USING (tenant = current_setting('request.jwt.claims', true)::json->>'tenant')",
		"GRANT USAGE ON SCHEMA " + schema + " TO " + role,
		"GRANT SELECT ON " + table + " TO " + role,
	} {
		testservices.PostgresExec(t, conn, q)
	}
	caddyfile := func(extra string) string {
		return fmt.Sprintf(`SITE {
	mcp /mcp {
		auth sso jwt {
			jwks_url %s
			issuer %s
			audience %s
		}
		connector app postgres %q {
			read_only
			claims_setting request.jwt.claims
		}
		connector admin postgres %q {
			read_only
			claims_setting request.jwt.claims
			role_claim db_role
			roles %s
		}
		cache {
			default_ttl 1m
		}
		tool docs {
			description "The caller's documents"
			use app
			statement "SELECT title FROM %s ORDER BY id"
			auth sso
		}
		tool docs-as-role {
			description "The caller's documents, as the role its token names"
			use admin
			statement "SELECT current_user::text AS title FROM %s ORDER BY id"
			auth sso
		}
		%s
	}
}`, idp.jwks.URL, authIssuer, authAudience, testservices.PostgresURLWith(t, "user", role), postgresURL(t), role, table, table, extra)
	}
	g := startGateway(t, caddyfile(""))
	acme := idp.token(t, "alice", "", map[string]any{"tenant": "acme", "db_role": role}, time.Hour)
	globex := idp.token(t, "bob", "", map[string]any{"tenant": "globex", "db_role": "postgres"}, time.Hour)

	var wg sync.WaitGroup
	errs := make(chan string, 100)
	for range 2 { // the second round is served from the cache
		for range 4 {
			for _, c := range []struct {
				token string
				want  []string
			}{{acme, []string{"a1", "a2"}}, {globex, []string{"g1"}}} {
				wg.Add(1)
				go func() {
					defer wg.Done()
					r := callAs(t, g.rawSession(t, "2025-11-25"), c.token, "docs", nil)
					if r.Error != nil {
						errs <- fmt.Sprintf("docs: %+v", r.Error)
					} else if got := titles(t, r); !slices.Equal(got, c.want) {
						errs <- fmt.Sprintf("docs: %q, want %q", got, c.want)
					}
				}()
			}
		}
		wg.Wait()
	}
	close(errs)
	for e := range errs {
		t.Error(e)
	}

	s := g.rawSession(t, "2025-11-25")
	if got := titles(t, callAs(t, s, acme, "docs-as-role", nil)); !slices.Equal(got, []string{role, role}) {
		t.Errorf("docs-as-role: %q", got)
	}
	r := callAs(t, s, globex, "docs-as-role", nil)
	if r.Error == nil || r.Error.Code != -32000 || r.Error.Message != `authentication: claim "db_role" names a role the connector does not allow` {
		t.Errorf("a role not listed: %+v", r.Error)
	}
	r = callAs(t, s, acme, "docs", map[string]any{"tenant": "globex"})
	if r.Error == nil || r.Error.Code != -32000 || !strings.Contains(r.Error.Message, `input "tenant": unknown input`) {
		t.Errorf("tenant as an argument: %+v", r.Error)
	}
	r = callAs(t, s, "", "docs", nil)
	if r.Error == nil || r.Error.Code != -32000 || !strings.HasPrefix(r.Error.Message, "authentication") {
		t.Errorf("without a token: %+v", r.Error)
	}

	for _, tc := range []struct{ name, extra, want string }{
		{"no auth provider", `tool anon {
			description "x"
			use app
			statement "SELECT 1 AS x"
		}`, `tool "anon": the statement binds the caller's identity (auth.claims (claims_setting request.jwt.claims)) but the tool has no auth provider`},
		{"cache shared", `tool shared {
			description "x"
			use app
			statement "SELECT 1 AS x"
			auth sso
			cache shared 1m
		}`, `tool "shared": cache shared: the statement binds the caller's identity`},
		{"set_config in an operator's statement", `tool sneaky {
			description "x"
			use app
			statement "SELECT set_config('request.jwt.claims', '{\"tenant\":\"globex\"}', true) AS x"
			auth sso
		}`, `calls set_config()`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if err := g.load(caddyfile(tc.extra)); err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("load: %v\nwant %q", err, tc.want)
			}
		})
	}
}

// TestIdentityValuesRefusedAtProvision: a JSON config skips the
// Caddyfile's adapt-time checks; Provision refuses the same misuses.
func TestIdentityValuesRefusedAtProvision(t *testing.T) {
	g := startGateway(t, `SITE {
	mcp /mcp {
		connector lite sqlite ":memory:"
	}
}`)
	load := func(connector, tool string) error {
		cfg := fmt.Sprintf(`{"admin":{"disabled":true},"apps":{"http":{"servers":{"srv0":{"listen":["127.0.0.1:%d"],"routes":[{"handle":[
			{"handler":"mcp",
			 "auth":[{"name":"sso","provider":{"provider":"jwt","secret":"0123456789abcdef0123456789abcdef","audience":["x"]}}],
			 "connectors":[%s],
			 "tools":[%s]}]}]}}}}}`, g.port, connector, tool)
		return caddy.Load([]byte(cfg), true)
	}
	lite := `{"name":"lite","type":"sqlite","dsn":":memory:"}`
	for _, tc := range []struct{ name, connector, tool, want string }{
		{"no auth provider", lite, `{"name":"t","description":"d","use":"lite","statement":"SELECT {{ auth.subject }} AS s"}`,
			`tool "t": the statement binds the caller's identity (auth.subject) but the tool has no auth provider`},
		{"cache shared", lite, `{"name":"t","description":"d","use":"lite","statement":"SELECT {{ auth.subject }} AS s","auth":{"use":"sso"},"cache":{"ttl":60000000000,"shared":true}}`,
			`tool "t": cache shared: the statement binds the caller's identity (auth.subject)`},
		{"claims_setting on sqlite", `{"name":"lite","type":"sqlite","dsn":":memory:","claims_setting":"request.jwt.claims"}`, `{"name":"t","description":"d","use":"lite","statement":"SELECT 1 AS s"}`,
			`connector "lite": claims_setting, role_claim and roles are for connectors that hand the caller to the database (postgres), not sqlite`},
		{"roles without role_claim", `{"name":"pg","type":"postgres","dsn":"postgres://x@127.0.0.1:1/x","roles":["a"]}`, `{"name":"t","description":"d","use":"pg","statement":"SELECT 1 AS s"}`,
			`connector "pg": loading module 'postgres': mcp.connectors.postgres: invalid configuration: roles needs role_claim <claim>`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if err := load(tc.connector, tc.tool); err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("load: %v\nwant %q", err, tc.want)
			}
		})
	}
	// The same tool with an auth provider and a per-caller cache loads.
	if err := load(lite, `{"name":"t","description":"d","use":"lite","statement":"SELECT {{ auth.subject }} AS s","auth":{"use":"sso"},"cache":{"ttl":60000000000}}`); err != nil {
		t.Fatalf("valid config: %v", err)
	}
}
