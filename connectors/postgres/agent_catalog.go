package postgres

import (
	"context"
	"fmt"

	"github.com/edgemcp/edgemcp/pipeline"
)

// The catalog an agent sees (pipeline.AgentSQL): what the transaction's
// role may read, answered in the column order of pipeline.TablesFromRows
// and pipeline.DetailFromRows. Every name is qualified with pg_catalog,
// so no search_path can put another function in its place.

// pgTables lists tables, views, materialized views and foreign tables
// (partitions left out: their parent stands for them) in schemas other
// than the system ones, on which the role has USAGE and SELECT (on the
// table or on a column). $1 and $2 narrow it to a schema and a name ("":
// any). reltuples is -1 for a table never analyzed: no estimate.
const pgTables = `SELECT n.nspname, c.relname,
  CASE c.relkind WHEN 'v' THEN 'view' WHEN 'm' THEN 'materialized view' WHEN 'f' THEN 'foreign table' ELSE 'table' END,
  CASE WHEN c.relkind IN ('r', 'p', 'm') AND c.reltuples >= 0 THEN c.reltuples END,
  pg_catalog.obj_description(c.oid, 'pg_class')
FROM pg_catalog.pg_class c JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace
WHERE c.relkind IN ('r', 'p', 'v', 'm', 'f') AND NOT c.relispartition
  AND n.nspname <> 'information_schema' AND n.nspname !~ '^pg_'
  AND ($1::text = '' OR n.nspname = $1::text) AND ($2::text = '' OR c.relname = $2::text)
  AND pg_catalog.has_schema_privilege(n.oid, 'USAGE')
  AND (pg_catalog.has_table_privilege(c.oid, 'SELECT') OR pg_catalog.has_any_column_privilege(c.oid, 'SELECT'))
ORDER BY 1, 2`

// pgTable is the relation $1.$2, for the describing statements.
const pgTable = `WITH t AS (SELECT c.oid FROM pg_catalog.pg_class c JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace
  WHERE n.nspname = $1::text AND c.relname = $2::text) `

// pgColumns lists the columns the role may read.
const pgColumns = pgTable + `SELECT a.attname, pg_catalog.format_type(a.atttypid, a.atttypmod), NOT a.attnotnull,
  pg_catalog.pg_get_expr(d.adbin, d.adrelid), pg_catalog.col_description(a.attrelid, a.attnum),
  pg_catalog.array_position(pk.conkey, a.attnum)
FROM t JOIN pg_catalog.pg_attribute a ON a.attrelid = t.oid
LEFT JOIN pg_catalog.pg_attrdef d ON d.adrelid = a.attrelid AND d.adnum = a.attnum
LEFT JOIN pg_catalog.pg_constraint pk ON pk.conrelid = t.oid AND pk.contype = 'p'
WHERE a.attnum > 0 AND NOT a.attisdropped AND pg_catalog.has_column_privilege(t.oid, a.attnum, 'SELECT')
ORDER BY a.attnum`

// pgIndexes lists each index's key columns (or expressions), in order.
const pgIndexes = pgTable + `SELECT i.relname, x.indisunique, pg_catalog.pg_get_indexdef(x.indexrelid, k.n, true), pg_catalog.pg_get_indexdef(x.indexrelid)
FROM t JOIN pg_catalog.pg_index x ON x.indrelid = t.oid JOIN pg_catalog.pg_class i ON i.oid = x.indexrelid
CROSS JOIN LATERAL pg_catalog.generate_series(1, x.indnkeyatts) k(n)
ORDER BY i.relname, k.n`

// pgForeignKeys lists each foreign key's column pairs, in order.
const pgForeignKeys = pgTable + `SELECT con.conname, a.attname, fn.nspname, fc.relname, fa.attname
FROM t JOIN pg_catalog.pg_constraint con ON con.conrelid = t.oid AND con.contype = 'f'
CROSS JOIN LATERAL ROWS FROM (pg_catalog.unnest(con.conkey), pg_catalog.unnest(con.confkey)) WITH ORDINALITY k(col, fcol, n)
JOIN pg_catalog.pg_attribute a ON a.attrelid = con.conrelid AND a.attnum = k.col
JOIN pg_catalog.pg_class fc ON fc.oid = con.confrelid
JOIN pg_catalog.pg_namespace fn ON fn.oid = fc.relnamespace
JOIN pg_catalog.pg_attribute fa ON fa.attrelid = con.confrelid AND fa.attnum = k.fcol
ORDER BY con.conname, k.n`

// AgentTables implements pipeline.AgentSQL.
func (c *Connector) AgentTables(ctx context.Context, s pipeline.AgentSession, schema string) ([]pipeline.TableInfo, error) {
	res, err := c.catalog(ctx, s, schema, "", pgTables)
	if err != nil {
		return nil, err
	}
	if res[0].truncated != "" {
		return nil, &pipeline.PublicError{Public: fmt.Sprintf("more than %d tables and views: list one schema at a time", catalogLimits.rows)}
	}
	return pipeline.TablesFromRows(res[0].rows), nil
}

// AgentDescribe implements pipeline.AgentSQL.
func (c *Connector) AgentDescribe(ctx context.Context, s pipeline.AgentSession, schema, name string) (*pipeline.TableDetail, error) {
	if schema == "" || name == "" {
		return nil, nil
	}
	res, err := c.catalog(ctx, s, schema, name, pgTables, pgColumns, pgIndexes, pgForeignKeys)
	if err != nil {
		return nil, err
	}
	tables := pipeline.TablesFromRows(res[0].rows)
	if len(tables) != 1 {
		return nil, nil
	}
	return pipeline.DetailFromRows(tables[0], res[1].rows, res[2].rows, res[3].rows), nil
}

// catalog runs catalog statements, each with $1 = schema and $2 = name,
// in one agent transaction and one round trip.
func (c *Connector) catalog(ctx context.Context, s pipeline.AgentSession, schema, name string, stmts ...string) ([]*result, error) {
	args := [][]byte{[]byte(schema), []byte(name)}
	q := make([]agentStmt, len(stmts))
	for i, sql := range stmts {
		q[i] = agentStmt{sql: sql, args: args, lim: &catalogLimits, fixed: true}
	}
	var res []*result
	err := c.agentTx(ctx, s, func(tx *agentTx) (err error) {
		res, err = tx.send(true, q...)
		return err
	})
	return res, err
}
