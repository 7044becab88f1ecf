package caddymodule

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/edgemcp/edgemcp/internal/testservices"
)

// BenchmarkServeAgentQuery prints what a point lookup costs through
// ServeHTTP on the direct path of a session, against Postgres: a declared
// tool, the same statement as an agent's db_query, db_query with the cost
// guard (max_cost: an EXPLAIN first), and db_query under a `requires`
// guardrail (the record in memory). Without the call's log line.
//
//	go test ./caddymodule -run '^$' -bench ServeAgentQuery -benchmem
func BenchmarkServeAgentQuery(b *testing.B) {
	conn := testservices.PostgresConn(b)
	schema := testservices.PostgresSchema(b, conn)
	testservices.PostgresExec(b, conn, "CREATE TABLE "+schema+".a (id int PRIMARY KEY, v int)")
	testservices.PostgresExec(b, conn, "INSERT INTO "+schema+".a SELECT i, i FROM generate_series(1, 10000) i")
	testservices.PostgresExec(b, conn, "ANALYZE "+schema+".a")
	post := benchHandler(b, fmt.Sprintf(`mcp {
		connector pg postgres %q {
			read_only
		}
		tool point {
			description "one row"
			use pg
			statement "SELECT id, v FROM %s.a WHERE id = {{ inputs.id }}"
			input id int required
		}
		sql_tools pg {
			prefix db
		}
		sql_tools pg {
			prefix costed
			max_cost 10000
		}
		sql_tools pg {
			prefix guarded
			requires guarded_list_tables
		}
	}`, postgresURL(b), schema))
	session := benchSession(b, post)
	call := func(tool string, args any) string {
		a, _ := json.Marshal(args)
		return fmt.Sprintf(`{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":%q,"arguments":%s}}`, tool, a)
	}
	if w := post(call("guarded_list_tables", map[string]any{"schema": schema}), session); !strings.Contains(w.Body.String(), `"result"`) {
		b.Fatalf("guarded_list_tables: %s", w.Body)
	}
	query := map[string]any{"sql": "SELECT id, v FROM " + schema + ".a WHERE id = $1", "params": []any{4242}}
	for _, c := range []struct{ name, body string }{
		{"declared", call("point", map[string]any{"id": 4242})},
		{"db_query", call("db_query", query)},
		{"db_query+max_cost", call("costed_query", query)},
		{"db_query+requires", call("guarded_query", query)},
	} {
		b.Run(c.name, func(b *testing.B) {
			if w := post(c.body, session); !strings.Contains(w.Body.String(), `4242`) {
				b.Fatalf("%s", w.Body)
			}
			b.ReportAllocs()
			for b.Loop() {
				post(c.body, session)
			}
		})
	}
}
