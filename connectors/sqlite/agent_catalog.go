package sqlite

import (
	"context"
	"fmt"

	"github.com/edgemcp/edgemcp/pipeline"
)

// The catalog an agent sees (pipeline.AgentSQL), from sqlite_schema and
// the schema-reading pragmas, answered in the column order of
// pipeline.TablesFromRows and pipeline.DetailFromRows. There is one
// schema, main (the agent's pool cannot ATTACH). Row estimates come from
// sqlite_stat1 when ANALYZE has written it; foreign keys have no names
// in SQLite, so they are numbered.

const liteTables = `SELECT 'main', name, type, NULL, NULL FROM sqlite_schema
WHERE type IN ('table', 'view') AND name NOT LIKE 'sqlite\_%' ESCAPE '\'
  AND (?1 = '' OR ?1 = 'main') AND (?2 = '' OR name = ?2)
ORDER BY name`

// liteTablesStat is liteTables with sqlite_stat1's estimates: the first
// number of a table's stat is its row count.
const liteTablesStat = `SELECT 'main', name, type, (SELECT max(CAST(stat AS INTEGER)) FROM sqlite_stat1 WHERE tbl = name), NULL FROM sqlite_schema
WHERE type IN ('table', 'view') AND name NOT LIKE 'sqlite\_%' ESCAPE '\'
  AND (?1 = '' OR ?1 = 'main') AND (?2 = '' OR name = ?2)
ORDER BY name`

const liteHasStat = `SELECT count(*) FROM sqlite_schema WHERE name = 'sqlite_stat1'`

const liteColumns = `SELECT name, type, NOT "notnull", dflt_value, NULL, pk FROM pragma_table_info(?) ORDER BY cid`

const liteIndexes = `SELECT il.name, il."unique", ii.name, NULL FROM pragma_index_list(?) il, pragma_index_info(il.name) ii ORDER BY il.name, ii.seqno`

const liteForeignKeys = `SELECT printf('fk_%d', id), "from", 'main', "table", "to" FROM pragma_foreign_key_list(?) ORDER BY id, seq`

// catalogLimits bound a catalog statement's answer.
var catalogLimits = limits{Rows: 10000, Size: 16 << 20, Cut: true}

// AgentTables implements pipeline.AgentSQL.
func (c *Connector) AgentTables(ctx context.Context, s pipeline.AgentSession, schema string) ([]pipeline.TableInfo, error) {
	rows, err := c.catalogTables(ctx, s, schema, "")
	if err != nil {
		return nil, err
	}
	return pipeline.TablesFromRows(rows), nil
}

func (c *Connector) catalogTables(ctx context.Context, s pipeline.AgentSession, schema, name string) (*pipeline.Rows, error) {
	stat, _, err := c.agentQuery(ctx, s, liteHasStat, nil, catalogLimits)
	if err != nil {
		return nil, err
	}
	q := liteTables
	if n, _ := stat.Values[0][0].(int64); n > 0 {
		q = liteTablesStat
	}
	rows, truncated, err := c.agentQuery(ctx, s, q, []any{schema, name}, catalogLimits)
	if err != nil {
		return nil, err
	}
	if truncated != "" {
		return nil, &pipeline.PublicError{Public: fmt.Sprintf("more than %d tables and views", catalogLimits.Rows)}
	}
	return rows, nil
}

// AgentDescribe implements pipeline.AgentSQL.
func (c *Connector) AgentDescribe(ctx context.Context, s pipeline.AgentSession, schema, name string) (*pipeline.TableDetail, error) {
	if schema != "main" || name == "" {
		return nil, nil
	}
	tables, err := c.catalogTables(ctx, s, schema, name)
	if err != nil || len(tables.Values) != 1 {
		return nil, err
	}
	var parts [3]*pipeline.Rows
	for i, q := range []string{liteColumns, liteIndexes, liteForeignKeys} {
		if parts[i], _, err = c.agentQuery(ctx, s, q, []any{name}, catalogLimits); err != nil {
			return nil, err
		}
	}
	return pipeline.DetailFromRows(pipeline.TablesFromRows(tables)[0], parts[0], parts[1], parts[2]), nil
}
