package postgres

import (
	"context"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
)

// resetProofs remembers, per statement text, whether the statement was
// proven unable to change its session (proveQuery), and until when that
// holds. A proof is a reading of the catalog at one moment: a view
// replaced, a policy added, a function created that shadows a built-in
// one may later make the same text run something else, and neither the
// server nor pgx tells the client when a prepared statement is analyzed
// again. So a proof holds for life only; a call after that is reset as
// before while the statement is proven again, and a statement whose
// result type changed (isStalePlan) loses its proof at once. What a
// schema change made within life can do is the one thing the reset after
// every call guards against and the proof does not: for life after a view
// of the statement is replaced by one that calls set_config, say, the
// setting can reach the connection's next caller. Hence off unless the
// operator enables it.
type resetProofs struct {
	life  time.Duration // 0: nothing is proven, every call is reset
	now   func() time.Time
	known sync.Map // statement text → *proof
	n     atomic.Int32
	// busy holds the one proof of the connector in flight: a proof runs
	// on the connection of the call that found it due, after the call
	// (the caller has its rows), and one at a time keeps those
	// connections few.
	busy    atomic.Bool
	running sync.WaitGroup // the proof in flight (tests wait for it)
}

type proof struct {
	pure    bool
	expires time.Time
}

// maxProofs bounds the statements remembered, as pipelinableMemo does;
// beyond it new texts are never proven (always reset).
const maxProofs = 4096

// EnableResetProofs makes the connector skip the session reset after a
// statement proven unable to change its session (proveQuery), each proof
// holding for life (> 0). Call it before the first Query. Connectors
// that hand the caller's role to the database (role_claim) keep the
// reset: the role changes how the statement's names resolve.
func (c *Connector) EnableResetProofs(life time.Duration) {
	if c.caller != nil && c.caller.roleClaim != "" {
		return
	}
	c.proofs.life = life
}

// holds reports whether sql is proven now.
func (p *resetProofs) holds(sql string) bool {
	if p.life <= 0 {
		return false
	}
	v, ok := p.known.Load(sql)
	if !ok {
		return false
	}
	pr := v.(*proof)
	return pr.pure && p.clock().Before(pr.expires)
}

// due reports whether sql should be proven (again) now: a query never
// proven or whose proof expired, while no other proof runs. It takes the
// connector's one proof slot; prove gives it back.
func (p *resetProofs) due(sql string) bool {
	if p.life <= 0 {
		return false
	}
	if v, ok := p.known.Load(sql); ok {
		if p.clock().Before(v.(*proof).expires) {
			return false
		}
	} else if p.n.Load() >= maxProofs || !isQuery(sql) {
		return false
	}
	if !p.busy.CompareAndSwap(false, true) {
		return false
	}
	p.running.Add(1)
	return true
}

// prove proves sql on pc, a connection just reset after a call, and
// releases it. Any failure leaves the statement unproven until life has
// passed.
func (p *resetProofs) prove(ctx context.Context, pc *pgxpool.Conn, sql string) {
	defer p.running.Done()
	// The slot is free before the connection is: the call that gets the
	// connection next, on a one-connection pool the very next call, may
	// prove its own statement.
	defer pc.Release()
	defer p.busy.Store(false)
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), proofTimeout)
	defer cancel()
	reasons, err := proveQuery(ctx, pc.Conn(), sql)
	p.record(sql, err == nil && len(reasons) == 0)
}

// proofTimeout bounds a proof: a few catalog reads.
const proofTimeout = 5 * time.Second

func (p *resetProofs) record(sql string, pure bool) {
	pr := &proof{pure: pure, expires: p.clock().Add(p.life)}
	if _, loaded := p.known.Swap(sql, pr); !loaded {
		p.n.Add(1)
	}
}

// forget drops sql's proof: its prepared statement was found stale.
func (p *resetProofs) forget(sql string) {
	if _, loaded := p.known.LoadAndDelete(sql); loaded {
		p.n.Add(-1)
	}
}

func (p *resetProofs) clock() time.Time {
	if p.now != nil {
		return p.now()
	}
	return time.Now()
}

// isQuery reports whether sql starts like a query (SELECT, WITH, VALUES,
// TABLE): the statements a proof can admit, saving a doomed proof of the
// rest.
func isQuery(sql string) bool {
	switch firstVerb(sql) {
	case "SELECT", "WITH", "VALUES", "TABLE":
		return true
	}
	return false
}
