package connguard

import (
	"context"

	"github.com/edgemcp/edgemcp/pipeline"
)

// Agent returns the guarded connector as pipeline.AgentSQL, for the tools
// of agent-written SQL (pipeline/sqlagent): each of its calls takes a
// slot of the same pool under the same limits as Query. ok is false when
// the connector cannot run agent-written SQL.
func (g *Guard) Agent() (db pipeline.AgentSQL, ok bool) {
	inner, ok := g.pool.conn.(pipeline.AgentSQL)
	if !ok {
		return nil, false
	}
	return agentGuard{g: g, db: inner}, true
}

type agentGuard struct {
	g  *Guard
	db pipeline.AgentSQL
}

// guarded runs f once g admits the call.
func guarded[T any](ctx context.Context, g *Guard, f func() (T, error)) (T, error) {
	if err := g.admit(ctx); err != nil {
		var zero T
		return zero, err
	}
	defer g.release()
	return f()
}

func (a agentGuard) AgentTables(ctx context.Context, s pipeline.AgentSession, schema string) ([]pipeline.TableInfo, error) {
	return guarded(ctx, a.g, func() ([]pipeline.TableInfo, error) { return a.db.AgentTables(ctx, s, schema) })
}

func (a agentGuard) AgentDescribe(ctx context.Context, s pipeline.AgentSession, schema, name string) (*pipeline.TableDetail, error) {
	return guarded(ctx, a.g, func() (*pipeline.TableDetail, error) { return a.db.AgentDescribe(ctx, s, schema, name) })
}

func (a agentGuard) AgentQuery(ctx context.Context, s pipeline.AgentSession, q pipeline.AgentStatement) (*pipeline.AgentRows, error) {
	return guarded(ctx, a.g, func() (*pipeline.AgentRows, error) { return a.db.AgentQuery(ctx, s, q) })
}

func (a agentGuard) AgentExplain(ctx context.Context, s pipeline.AgentSession, q pipeline.AgentStatement) (*pipeline.AgentPlan, error) {
	return guarded(ctx, a.g, func() (*pipeline.AgentPlan, error) { return a.db.AgentExplain(ctx, s, q) })
}
