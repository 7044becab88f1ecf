package sqlagent

import (
	"encoding/json"
	"fmt"

	"github.com/edgemcp/edgemcp/pipeline"
)

// The tool names' endings.
const (
	toolList     = "_list_tables"
	toolDescribe = "_describe_table"
	toolQuery    = "_query"
	toolExplain  = "_explain"
)

// toolset is one Config, checked, as its tools' executors share it.
type toolset struct {
	cfg         Config
	hidden      filter // as written, for the catalog's names
	lowerHidden filter // lowercased, for names read in a statement
	session     pipeline.AgentSession
}

// Build checks cfg and returns its tools: list_tables, describe_table,
// query and, with Explain, explain. Their errors name the stage that
// refused (StageGuard, StageCost, StageInterceptor, or the pipeline's).
func Build(cfg Config) ([]*pipeline.Tool, error) {
	if err := cfg.check(); err != nil {
		return nil, fmt.Errorf("sql tools %q: %w", cfg.Prefix, err)
	}
	ts := &toolset{
		cfg:     cfg,
		hidden:  filter{include: cfg.Include, exclude: cfg.Exclude},
		session: pipeline.AgentSession{Role: cfg.Role, Timeout: cfg.StatementTimeout},
	}
	ts.lowerHidden = ts.hidden.lower()
	tools := []*pipeline.Tool{
		ts.tool(toolList, ts.describeList(), listSchema, pipeline.ExecutorFunc(ts.list)),
		ts.tool(toolDescribe, ts.describeDescribe(), describeSchema, pipeline.ExecutorFunc(ts.describe)),
		ts.tool(toolQuery, ts.describeQuery(), querySchema(cfg.Dialect), pipeline.ExecutorFunc(ts.query)),
	}
	if cfg.Explain {
		tools = append(tools, ts.tool(toolExplain, ts.describeExplain(), querySchema(cfg.Dialect), pipeline.ExecutorFunc(ts.explain)))
	}
	return tools, nil
}

func (ts *toolset) tool(suffix, description string, schema json.RawMessage, ex pipeline.Executor) *pipeline.Tool {
	yes, no := true, false
	return &pipeline.Tool{
		Name:        ts.cfg.Prefix + suffix,
		Description: description,
		InputSchema: schema,
		Annotations: pipeline.Annotations{ReadOnly: &yes, Destructive: &no, Idempotent: &yes, OpenWorld: &no},
		Executor:    ex,
		Source:      ts.cfg.Connector,
	}
}

var (
	listSchema = json.RawMessage(`{"type":"object","properties":{"schema":{"type":"string","description":"Only the tables of this schema"}},"additionalProperties":false}`)

	describeSchema = json.RawMessage(`{"type":"object","properties":{"table":{"type":"string","description":"The table or view, as list_tables names it (schema.table also works)"},"schema":{"type":"string","description":"Its schema, when the name is in more than one"}},"required":["table"],"additionalProperties":false}`)
)

func querySchema(d fmt.Stringer) json.RawMessage {
	marker := "$1, $2 ..."
	if d.String() != "postgres" {
		marker = "?"
	}
	s := map[string]any{
		"type": "object",
		"properties": map[string]any{
			"sql":    map[string]any{"type": "string", "description": "One read-only query (SELECT, WITH, VALUES or TABLE) in " + dialectName(d) + " SQL; write " + marker + " where a value goes"},
			"params": map[string]any{"type": "array", "description": "The values of the statement's parameters, in order", "items": map[string]any{}},
		},
		"required":             []string{"sql"},
		"additionalProperties": false,
	}
	b, _ := json.Marshal(s)
	return b
}
