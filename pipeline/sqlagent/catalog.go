package sqlagent

import (
	"context"
	"fmt"
	"strings"

	"github.com/edgemcp/edgemcp/pipeline"
)

// list is the execution stage of <prefix>_list_tables.
func (ts *toolset) list(ctx context.Context, call *pipeline.Call) (*pipeline.Result, error) {
	schema, _ := call.Inputs["schema"].(string)
	tables, err := ts.tables(ctx, call, schema)
	if err != nil {
		return nil, err
	}
	return &pipeline.Result{Value: map[string]any{"tables": tables}}, nil
}

// tables are the tables the session can read and the filter shows.
func (ts *toolset) tables(ctx context.Context, call *pipeline.Call, schema string) ([]pipeline.TableInfo, error) {
	all, err := ts.cfg.DB.AgentTables(pipeline.WithCaller(ctx, call.Identity), ts.session, schema)
	if err != nil {
		return nil, pipeline.QueryFailure(err)
	}
	shown := make([]pipeline.TableInfo, 0, len(all))
	for _, t := range all {
		if ts.hidden.shown(t.Schema, t.Name) {
			shown = append(shown, t)
		}
	}
	return shown, nil
}

// describe is the execution stage of <prefix>_describe_table. The table
// is found among those list_tables shows (by name, or as schema.name),
// so a hidden table is described as one that does not exist.
func (ts *toolset) describe(ctx context.Context, call *pipeline.Call) (*pipeline.Result, error) {
	name, _ := call.Inputs["table"].(string)
	schema, _ := call.Inputs["schema"].(string)
	if name == "" {
		return nil, pipeline.Fail(pipeline.StageValidation, nil, "table: a name (string) is required")
	}
	tables, err := ts.tables(ctx, call, schema)
	if err != nil {
		return nil, err
	}
	var found []pipeline.TableInfo
	for _, t := range tables {
		if t.Name == name || t.Schema+"."+t.Name == name {
			found = append(found, t)
		}
	}
	switch len(found) {
	case 0:
		return nil, pipeline.Fail(pipeline.StageExecution, nil, "no table or view %q that you can read: call %s for the names", name, ts.cfg.Prefix+toolList)
	case 1:
	default:
		schemas := make([]string, len(found))
		for i, t := range found {
			schemas[i] = t.Schema
		}
		return nil, pipeline.Fail(pipeline.StageExecution, nil, "%q is in more than one schema (%s): give schema", name, strings.Join(schemas, ", "))
	}
	t := found[0]
	d, err := ts.cfg.DB.AgentDescribe(pipeline.WithCaller(ctx, call.Identity), ts.session, t.Schema, t.Name)
	if err != nil {
		return nil, pipeline.QueryFailure(err)
	}
	if d == nil {
		return nil, pipeline.Fail(pipeline.StageExecution, nil, "no table or view %q that you can read", fmt.Sprintf("%s.%s", t.Schema, t.Name))
	}
	// A foreign key into a hidden table would name it.
	fks := d.ForeignKeys[:0]
	for _, fk := range d.ForeignKeys {
		if ts.hidden.shown(fk.RefSchema, fk.RefTable) {
			fks = append(fks, fk)
		}
	}
	d.ForeignKeys = fks
	return &pipeline.Result{Value: d}, nil
}
