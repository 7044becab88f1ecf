package connguard

import (
	"context"
	"strings"
	"testing"

	"github.com/edgemcp/edgemcp/pipeline"
)

// agentGate is a gate that can also run agent-written SQL, blocking
// like its queries.
type agentGate struct{ *gate }

func (a agentGate) AgentTables(ctx context.Context, _ pipeline.AgentSession, _ string) ([]pipeline.TableInfo, error) {
	_, err := a.Query(ctx, "", nil)
	return nil, err
}
func (a agentGate) AgentDescribe(ctx context.Context, _ pipeline.AgentSession, _, _ string) (*pipeline.TableDetail, error) {
	_, err := a.Query(ctx, "", nil)
	return nil, err
}
func (a agentGate) AgentQuery(ctx context.Context, _ pipeline.AgentSession, _ pipeline.AgentStatement) (*pipeline.AgentRows, error) {
	rows, err := a.Query(ctx, "", nil)
	return &pipeline.AgentRows{Rows: rows}, err
}
func (a agentGate) AgentExplain(ctx context.Context, _ pipeline.AgentSession, _ pipeline.AgentStatement) (*pipeline.AgentPlan, error) {
	_, err := a.Query(ctx, "", nil)
	return &pipeline.AgentPlan{}, err
}

// TestAgentShareSlots: an agent's calls take the pool's slots under the
// configuration's limits, as declared tools' do; a connector that cannot
// run agent-written SQL has no Agent.
func TestAgentShareSlots(t *testing.T) {
	if _, ok := NewPool(&gate{release: make(chan struct{})}, 0, nil).Guard(Options{}).Agent(); ok {
		t.Fatal("a plain connector offers agent SQL")
	}
	g := &gate{release: make(chan struct{})}
	p := NewPool(agentGate{g}, 0, nil)
	guard := p.Guard(Options{MaxWaiting: 0})
	db, ok := guard.Agent()
	if !ok {
		t.Fatal("an agent connector offers no agent SQL")
	}
	done := make(chan error, 2)
	for range 2 { // the gate's two slots, held
		go func() { _, err := guard.Query(context.Background(), "", nil); done <- err }()
	}
	waitRunning(t, g, 2)
	if _, err := db.AgentQuery(context.Background(), pipeline.AgentSession{}, pipeline.AgentStatement{}); err == nil || !strings.Contains(err.Error(), MsgBusy) {
		t.Errorf("agent query with every slot held: %v, want %s", err, MsgBusy)
	}
	close(g.release)
	for range 2 {
		if err := <-done; err != nil {
			t.Fatal(err)
		}
	}
	if _, err := db.AgentTables(context.Background(), pipeline.AgentSession{}, ""); err != nil {
		t.Errorf("agent tables with slots free: %v", err)
	}
}
