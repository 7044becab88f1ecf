package postgres

import (
	"context"
	_ "embed"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/edgemcp/edgemcp/pipeline/sqltemplate"
)

// A statement proven unable to change its session needs no session reset
// after it (resetSession: the reset is most of what Postgres spends on a
// point lookup beyond the query itself). The proof reads the catalog, at
// first use of a statement's text and again when it expires (resetProofs):
//
//   - the statement is a query: a temporary view of it can be created
//     (SELECT, VALUES, TABLE, WITH without a data-modifying part, no
//     SELECT INTO), its parameters replaced by NULLs of the types the
//     server gave them;
//   - everything reading it can run is built in and not volatile: the
//     functions and operators its query tree names, and, followed through
//     the catalog, those of the views it reads (their own trees), of every
//     row security policy of the tables it reads, of their indexes'
//     expressions, children and partition keys, and of the types of a
//     user's it touches (input and output, domain constraints, casts,
//     operator classes). A foreign table, an access method or operator
//     class of a user's, a function of a user's (whatever its declared
//     volatility: a STABLE function may call set_config) or a volatile
//     built-in one (set_config, pg_advisory_lock, nextval, setseed ...)
//     leaves the statement unproven, and so do the built-in functions that
//     run what a value names: a type's input function called directly
//     (record_in, domain_in: any function taking cstring), table_to_xml
//     and its kin (a table named at run time, with its policies), the
//     pg_input_* functions (a type named by a string).
//
// pg_depend cannot serve: it records nothing about built-in (pinned)
// objects, so set_config in a view leaves no trace there. The query trees
// (pg_rewrite.ev_action, pg_policy.polqual ...) name every object by oid.

//go:embed proof.sql
var proofQuery string

// proofView is the temporary view the proof creates, in a transaction it
// rolls back.
const proofView = "edgemcp_reset_proof"

// proveQuery reports whether the statement sql cannot change its session,
// and if not, why (reasons; nil with an error when the proof itself failed:
// a statement that is not a query, a database where a temporary view cannot
// be created, such as a standby). conn is idle and freshly reset, and is
// reset again after the proof: preparing the statement and creating the
// view run code of the database's (a user type's input function for a
// literal, an event trigger on CREATE VIEW), and a session advisory lock
// survives the rollback.
func proveQuery(ctx context.Context, conn *pgx.Conn, sql string) (reasons []string, err error) {
	defer resetSession(ctx, conn, sessionResetQuery)
	pc := conn.PgConn()
	desc, err := pc.Prepare(ctx, "", sql, nil)
	if err != nil {
		return nil, err
	}
	types, err := typeNames(ctx, pc, desc.ParamOIDs)
	if err != nil {
		return nil, err
	}
	view, err := viewOf(sql, types, len(desc.Fields))
	if err != nil {
		return nil, err
	}
	b := &pgconn.Batch{}
	b.ExecParams("BEGIN READ WRITE", nil, nil, nil, nil) // a read_only connector's sessions default to READ ONLY
	b.ExecParams(view, nil, nil, nil, nil)
	// The walk's own names are the catalog's, whatever the session's path.
	b.ExecParams("SET LOCAL search_path = pg_catalog", nil, nil, nil, nil)
	b.ExecParams(proofQuery, [][]byte{[]byte("pg_temp." + proofView)}, nil, nil, nil)
	b.ExecParams("ROLLBACK", nil, nil, nil, nil)
	results, err := pc.ExecBatch(ctx, b).ReadAll()
	if err == nil {
		for _, r := range results {
			if err = r.Err; err != nil {
				break
			}
		}
	}
	if err != nil {
		return nil, err // resetSession rolls back a transaction the batch stopped in
	}
	for _, row := range results[3].Rows {
		reasons = append(reasons, string(row[0]))
	}
	if reasons == nil {
		reasons = []string{}
	}
	return reasons, nil
}

// typeNames are the names of the types oids, in order.
func typeNames(ctx context.Context, pc *pgconn.PgConn, oids []uint32) ([]string, error) {
	if len(oids) == 0 {
		return nil, nil
	}
	list := make([]string, len(oids))
	for i, o := range oids {
		list[i] = strconv.FormatUint(uint64(o), 10)
	}
	r := pc.ExecParams(ctx, "SELECT pg_catalog.format_type(t, NULL) FROM pg_catalog.unnest($1::text::pg_catalog.oid[]) WITH ORDINALITY AS u(t, n) ORDER BY n",
		[][]byte{[]byte("{" + strings.Join(list, ",") + "}")}, nil, nil, nil).Read()
	if r.Err != nil {
		return nil, r.Err
	}
	if len(r.Rows) != len(oids) {
		return nil, errors.New("format_type: wrong number of rows")
	}
	names := make([]string, len(oids))
	for i, row := range r.Rows {
		names[i] = string(row[0])
	}
	return names, nil
}

// viewOf is the statement that creates the proof's view of sql: each
// parameter $n replaced by a NULL of types[n-1] (the parentheses keep it one
// operand wherever $n stood: ($1)[1], ($1).f), its columns named c1...cN
// (a view needs distinct names; a query may repeat one).
func viewOf(sql string, types []string, columns int) (string, error) {
	toks, err := sqltemplate.Lex(sql, sqltemplate.Postgres)
	if err != nil {
		return "", err
	}
	var b strings.Builder
	b.WriteString("CREATE TEMP VIEW " + proofView)
	if columns > 0 {
		b.WriteString(" (")
		for i := range columns {
			if i > 0 {
				b.WriteString(", ")
			}
			b.WriteString("c" + strconv.Itoa(i+1))
		}
		b.WriteString(")")
	}
	b.WriteString(" AS ")
	last := 0
	for _, t := range toks {
		if t.Kind != sqltemplate.BindParam {
			continue
		}
		n, err := strconv.Atoi(strings.TrimPrefix(t.Text, "$"))
		if err != nil || n < 1 || n > len(types) {
			return "", fmt.Errorf("parameter %s: the statement has %d", t.Text, len(types))
		}
		b.WriteString(sql[last:t.Offset])
		b.WriteString("(CAST(NULL AS " + types[n-1] + "))")
		last = t.Offset + len(t.Text)
	}
	b.WriteString(sql[last:])
	return b.String(), nil
}
