package postgres

import (
	"context"
	"time"

	"github.com/jackc/pgx/v5"
)

// defaultConnectTimeout bounds opening a connection (TCP, TLS, startup)
// when the DSN sets no connect_timeout: a database host that accepts but
// never answers (hung, half-failed over) would otherwise hold each call
// that needs a new connection until its client gives up.
var defaultConnectTimeout = 5 * time.Second

// Ping checks that the database answers, on a pooled connection (opening
// one if needed). Errors are *pipeline.PublicError.
func (c *Connector) Ping(ctx context.Context) error {
	return publicError(ctx, c.pool.Ping(ctx))
}

// MaxConns is the pool size.
func (c *Connector) MaxConns() int { return int(c.pool.Config().MaxConns) }

// dropDeadConn is the pool's PrepareConn hook: an idle connection whose
// server went away (restart, pg_terminate_backend, failover) has the
// server's FATAL message or EOF waiting in its socket. Seeing that before
// use lets pgxpool destroy it and take or open another, so that after a
// restart only the calls that were running fail, not every call that
// happens to pick a stale connection. The check is one non-blocking peek
// at the socket, not a round trip.
func dropDeadConn(_ context.Context, conn *pgx.Conn) (bool, error) {
	return !socketDead(conn.PgConn().Conn()), nil
}
