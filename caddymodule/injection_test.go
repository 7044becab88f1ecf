package caddymodule

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
)

// injectionCorpus are values an attacker would send. Each is bound as a
// parameter, so each must behave exactly like the literal string it is.
var injectionCorpus = []string{
	`'`, `''`, `"`, `\`, `\'`, `\\'`, `'--`, `' --`, `'#`, `' /*`, `*/`,
	`' OR '1'='1`, `' OR 1=1 --`, `" OR ""="`, `1 OR 1=1`, `1' OR '1'='1' /*`,
	`x'; DROP TABLE edgemcp_inj.items; --`, `'; DELETE FROM items; --`, `1; DROP TABLE items`,
	`'); DROP TABLE items; --`, `' UNION SELECT id, name FROM items --`, `' UNION ALL SELECT 1, version() --`,
	`' AND 1=(SELECT COUNT(*) FROM pg_tables) --`, `'||pg_sleep(5)||'`, `'; SELECT pg_sleep(5); --`,
	`$$`, `$tag$ DROP TABLE items $tag$`, `E'\x27'`, `U&'\0027'`, `' ; COMMIT; DROP TABLE items; --`,
	`%`, `_`, `%' OR '%'='`, `{{ inputs.name }}`, `{{ env.HOME }}`, `$1`, `?`, `:name`, `@p1`,
	"\u02bc OR 1=1 --", "\u2019 OR 1=1 --", "\uff07 OR 1=1 --", "\u201c OR 1=1", "ʹ",
	"a\x00b", "\x00' OR 1=1 --", "line1\nline2'; DROP TABLE items; --", "tab\t'",
	`\x27 OR 1=1`, `%27 OR 1=1`, `&#39; OR 1=1`, `' AND SLEEP(5) #`, `admin'/*`, `' OR 'x'='x`,
	`1e309`, `-0`, `NULL`, `null`, `true`,
	"O'Brien", `back\slash`, `x' OR '1'='1`, "semi;colon",
	strings.Repeat("'", 4096), strings.Repeat("A", 200000),
}

// injectionRows is the table content; some names are themselves payloads,
// so an exact match must return exactly them.
var injectionRows = []string{"apple", "banana", "O'Brien", `back\slash`, `x' OR '1'='1`, "semi;colon"}

func TestInjectionCorpus(t *testing.T) {
	if len(injectionCorpus) < 50 {
		t.Fatalf("corpus has %d payloads, want at least 50", len(injectionCorpus))
	}
	db := testDB(t)
	execSQL(t, db, `DROP SCHEMA IF EXISTS edgemcp_inj CASCADE`)
	execSQL(t, db, `CREATE SCHEMA edgemcp_inj`)
	execSQL(t, db, `CREATE TABLE edgemcp_inj.items (id int PRIMARY KEY, name text NOT NULL)`)
	execSQL(t, db, `CREATE TABLE edgemcp_inj.canary (x int)`)
	for i, n := range injectionRows {
		execSQL(t, db, `INSERT INTO edgemcp_inj.items VALUES ($1, $2)`, i+1, n)
	}
	t.Cleanup(func() { execSQL(t, testDB(t), `DROP SCHEMA IF EXISTS edgemcp_inj CASCADE`) })

	// The SQLite database is writable: binding, not read_only, is what
	// keeps it intact.
	lite := filepath.Join(t.TempDir(), "inj.db")
	seed := filepath.Join(t.TempDir(), "inj.sql")
	var sql strings.Builder
	sql.WriteString("CREATE TABLE items (id INTEGER PRIMARY KEY, name TEXT NOT NULL);\nCREATE TABLE canary (x INTEGER);\n")
	for i, n := range injectionRows {
		fmt.Fprintf(&sql, "INSERT INTO items VALUES (%d, '%s');\n", i+1, strings.ReplaceAll(n, "'", "''"))
	}
	writeFile(t, seed, sql.String())

	g := startGateway(t, fmt.Sprintf(`SITE {
	mcp /mcp {
		connector pg postgres %s
		connector lite sqlite %s {
			seed %s
		}
		tool pg-exact {
			description "injection probe"
			use pg
			statement "SELECT id, name FROM edgemcp_inj.items WHERE name = {{ inputs.name }} ORDER BY id"
			input name string required
		}
		tool pg-contains {
			description "injection probe"
			use pg
			statement "SELECT id, name FROM edgemcp_inj.items WHERE strpos(name, {{ inputs.name }}) > 0 ORDER BY id"
			input name string required
		}
		tool pg-by-id {
			description "injection probe"
			use pg
			statement "SELECT id FROM edgemcp_inj.items WHERE id = {{ inputs.id }}"
			input id int required
		}
		tool lite-exact {
			description "injection probe"
			use lite
			statement "SELECT id, name FROM items WHERE name = {{ inputs.name }} ORDER BY id"
			input name string required
		}
		tool lite-contains {
			description "injection probe"
			use lite
			statement "SELECT id, name FROM items WHERE instr(name, {{ inputs.name }}) > 0 ORDER BY id"
			input name string required
		}
	}
}`, postgresURL(t), lite, seed))
	s := g.rawSession(t, "2025-11-25")

	for i, payload := range injectionCorpus {
		for _, tool := range []string{"pg-exact", "pg-contains", "lite-exact", "lite-contains"} {
			want := expectedNames(payload, strings.HasSuffix(tool, "contains"))
			r := s.call(t, tool, map[string]any{"name": payload})
			if r.Error != nil {
				// Postgres text cannot hold NUL: refusing it is correct,
				// as long as it is a clean stage failure.
				if strings.HasPrefix(tool, "pg-") && strings.Contains(payload, "\x00") && r.Error.Code == -32000 {
					continue
				}
				t.Errorf("payload %d %.40q on %s: error %d %s", i, payload, tool, r.Error.Code, r.Error.Message)
				continue
			}
			got := []string{}
			for _, row := range r.tool(t).rows(t) {
				got = append(got, row["name"].(string))
			}
			if strings.Join(got, "\x01") != strings.Join(want, "\x01") {
				t.Errorf("payload %d %.40q on %s: rows %q, want %q", i, payload, tool, got, want)
			}
		}
		// A string where an int is declared is refused before any SQL runs.
		if r := s.call(t, "pg-by-id", map[string]any{"id": payload}); r.Error == nil && payload != "-0" {
			t.Errorf("payload %d %.40q as int: accepted", i, payload)
		}
	}

	// Everything is intact.
	var n int
	if err := db.QueryRow(context.Background(), `SELECT count(*) FROM edgemcp_inj.items`).Scan(&n); err != nil || n != len(injectionRows) {
		t.Fatalf("postgres items: %d rows, %v", n, err)
	}
	if err := db.QueryRow(context.Background(), `SELECT count(*) FROM edgemcp_inj.canary`).Scan(&n); err != nil {
		t.Fatalf("postgres canary: %v", err)
	}
	rows := s.call(t, "lite-contains", map[string]any{"name": ""}).tool(t).rows(t)
	if len(rows) != len(injectionRows) {
		t.Fatalf("sqlite items after the corpus: %d rows", len(rows))
	}
}

func expectedNames(payload string, contains bool) []string {
	out := []string{}
	for _, n := range injectionRows {
		if n == payload || (contains && strings.Contains(n, payload)) {
			out = append(out, n)
		}
	}
	return out
}
