package mysql

import (
	"context"
	"fmt"

	"github.com/edgemcp/edgemcp/pipeline"
)

// The catalog an agent sees (pipeline.AgentSQL), from information_schema,
// which shows a user only what it holds a privilege on; answered in the
// column order of pipeline.TablesFromRows and pipeline.DetailFromRows.
// A schema is a database; the system ones are left out.

// myTables lists tables and views; the two pairs of ? narrow it to a
// schema and a name ("": any). TABLE_ROWS is InnoDB's estimate. A
// MariaDB sequence reads as a one-row table.
const myTables = `SELECT TABLE_SCHEMA, TABLE_NAME, CASE TABLE_TYPE WHEN 'VIEW' THEN 'view' WHEN 'SEQUENCE' THEN 'sequence' ELSE 'table' END,
  IF(TABLE_TYPE LIKE '%TABLE', TABLE_ROWS, NULL), IF(TABLE_TYPE = 'VIEW', '', TABLE_COMMENT)
FROM information_schema.TABLES
WHERE TABLE_SCHEMA NOT IN ('mysql', 'information_schema', 'performance_schema', 'sys')
  AND (? = '' OR TABLE_SCHEMA = ?) AND (? = '' OR TABLE_NAME = ?)
ORDER BY 1, 2`

const myColumns = `SELECT c.COLUMN_NAME, c.COLUMN_TYPE, c.IS_NULLABLE, c.COLUMN_DEFAULT, c.COLUMN_COMMENT,
  (SELECT k.ORDINAL_POSITION FROM information_schema.KEY_COLUMN_USAGE k
    WHERE k.TABLE_SCHEMA = c.TABLE_SCHEMA AND k.TABLE_NAME = c.TABLE_NAME AND k.CONSTRAINT_NAME = 'PRIMARY' AND k.COLUMN_NAME = c.COLUMN_NAME)
FROM information_schema.COLUMNS c WHERE c.TABLE_SCHEMA = ? AND c.TABLE_NAME = ?
ORDER BY c.ORDINAL_POSITION`

const myIndexes = `SELECT INDEX_NAME, NON_UNIQUE = 0, COLUMN_NAME, NULL
FROM information_schema.STATISTICS WHERE TABLE_SCHEMA = ? AND TABLE_NAME = ?
ORDER BY INDEX_NAME, SEQ_IN_INDEX`

const myForeignKeys = `SELECT CONSTRAINT_NAME, COLUMN_NAME, REFERENCED_TABLE_SCHEMA, REFERENCED_TABLE_NAME, REFERENCED_COLUMN_NAME
FROM information_schema.KEY_COLUMN_USAGE
WHERE TABLE_SCHEMA = ? AND TABLE_NAME = ? AND REFERENCED_TABLE_NAME IS NOT NULL
ORDER BY CONSTRAINT_NAME, ORDINAL_POSITION`

// AgentTables implements pipeline.AgentSQL.
func (c *Connector) AgentTables(ctx context.Context, s pipeline.AgentSession, schema string) ([]pipeline.TableInfo, error) {
	var tables []pipeline.TableInfo
	err := c.agentTx(ctx, s, "", func(tx *agentTx) error {
		rows, truncated, err := tx.query(myTables, []any{schema, schema, "", ""}, catalogLimits, false)
		if err != nil {
			return err
		}
		if truncated != "" {
			return &pipeline.PublicError{Public: fmt.Sprintf("more than %d tables and views: list one schema at a time", catalogLimits.Rows)}
		}
		tables = pipeline.TablesFromRows(rows)
		return nil
	})
	return tables, err
}

// AgentDescribe implements pipeline.AgentSQL.
func (c *Connector) AgentDescribe(ctx context.Context, s pipeline.AgentSession, schema, name string) (*pipeline.TableDetail, error) {
	if schema == "" || name == "" {
		return nil, nil
	}
	var d *pipeline.TableDetail
	err := c.agentTx(ctx, s, "", func(tx *agentTx) error {
		rows, _, err := tx.query(myTables, []any{schema, schema, name, name}, catalogLimits, false)
		if err != nil || len(rows.Values) != 1 {
			return err
		}
		var parts [3]*pipeline.Rows
		for i, q := range []string{myColumns, myIndexes, myForeignKeys} {
			if parts[i], _, err = tx.query(q, []any{schema, name}, catalogLimits, false); err != nil {
				return err
			}
		}
		d = pipeline.DetailFromRows(pipeline.TablesFromRows(rows)[0], parts[0], parts[1], parts[2])
		return nil
	})
	return d, err
}
