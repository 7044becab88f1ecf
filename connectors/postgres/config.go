package postgres

import (
	"context"
	"strconv"
	"time"

	"github.com/edgemcp/edgemcp/pipeline"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgconn/ctxwatch"
	"github.com/jackc/pgx/v5/pgxpool"
)

// Config is a connector's configuration, as written in the Caddyfile.
type Config struct {
	// DSN is a libpq connection string or URL. pgxpool options in it
	// (pool_max_conns ...) apply unless overridden below.
	DSN string
	// MaxConns caps the pool; 0 keeps pgxpool's default (or the DSN's).
	MaxConns int32
	// ReadOnly runs every statement in a READ ONLY transaction.
	ReadOnly bool
	// StatementTimeout is set as the session's statement_timeout; 0 keeps
	// the server's (or the DSN's).
	StatementTimeout time.Duration
	// MaxRows caps the rows of one result; 0 means pipeline.DefaultMaxRows.
	MaxRows int
	// MaxResultSize caps the bytes of one result, counted as its rows
	// arrive (Connector.collect); 0 means pipeline.DefaultMaxResultSize.
	MaxResultSize int64
	// ClaimsSetting, RoleClaim and Roles hand the verified caller to the
	// database with each statement (callerSession).
	ClaimsSetting string
	RoleClaim     string
	Roles         []string
}

// applicationName identifies our sessions in pg_stat_activity unless the
// DSN names one.
const applicationName = "edgemcp"

// cancelDeadline is how long a canceled query may take to acknowledge the
// cancel request before its connection is closed instead.
const cancelDeadline = time.Second

// Open builds the pool. Like pgxpool.NewWithConfig it does not connect: a
// database that is down fails the first Query ("database unavailable"),
// not the configuration load.
func Open(ctx context.Context, cfg Config) (*Connector, error) {
	pcfg, err := pgxpool.ParseConfig(cfg.DSN)
	if err != nil {
		// pgx redacts the password in its message, but the host and user
		// remain: Cause only, never Public.
		return nil, &pipeline.PublicError{Public: "invalid postgres connection string", Cause: err}
	}
	if cfg.MaxConns > 0 {
		pcfg.MaxConns = cfg.MaxConns
	}
	if pcfg.ConnConfig.ConnectTimeout == 0 {
		pcfg.ConnConfig.ConnectTimeout = defaultConnectTimeout
	}
	params := pcfg.ConnConfig.RuntimeParams
	if params["application_name"] == "" {
		params["application_name"] = applicationName
	}
	if cfg.StatementTimeout > 0 {
		ms := max(cfg.StatementTimeout.Milliseconds(), 1)
		params["statement_timeout"] = strconv.FormatInt(ms, 10)
	}
	if cfg.ReadOnly && pcfg.ConnConfig.DefaultQueryExecMode == pgx.QueryExecModeSimpleProtocol {
		// The simple protocol sends the batch as one string, in which a
		// statement could end the READ ONLY transaction and write after it.
		// Every extended-protocol mode takes one statement per Parse.
		return nil, &pipeline.PublicError{Public: "read_only cannot be combined with default_query_exec_mode=simple_protocol"}
	}
	if cfg.ReadOnly {
		// Belt and braces: each statement already runs in BEGIN READ ONLY,
		// this also covers anything that might run outside it.
		params["default_transaction_read_only"] = "on"
	}

	// On cancellation pgx's default handler expires the socket at once:
	// the call returns, the connection is closed (pgx sends a cancel
	// request as it goes), and every canceled call costs a new connection
	// (TCP, TLS, authentication). Sending the cancel request first lets the
	// server end the statement and the connection go back to the pool; the
	// socket deadline stays as the fallback for a server that does not
	// answer.
	pcfg.ConnConfig.BuildContextWatcherHandler = func(pc *pgconn.PgConn) ctxwatch.Handler {
		return &pgconn.CancelRequestContextWatcherHandler{Conn: pc, DeadlineDelay: cancelDeadline}
	}
	pcfg.PrepareConn = dropDeadConn
	pcfg.ConnConfig.BuildFrontend = buildFrontend
	pcfg.AfterConnect = func(_ context.Context, conn *pgx.Conn) error {
		registerTextOnly(conn.TypeMap())
		adoptWatch(conn.PgConn())
		return nil
	}

	caller, err := newCallerSession(cfg)
	if err != nil {
		return nil, err
	}
	pool, err := pgxpool.NewWithConfig(ctx, pcfg)
	if err != nil {
		return nil, &pipeline.PublicError{Public: msgUnavailable, Cause: err}
	}
	maxRows := cfg.MaxRows
	if maxRows <= 0 {
		maxRows = pipeline.DefaultMaxRows
	}
	maxSize := cfg.MaxResultSize
	if maxSize <= 0 {
		maxSize = pipeline.DefaultMaxResultSize
	}
	return &Connector{pool: pool, readOnly: cfg.ReadOnly, maxRows: maxRows, maxSize: maxSize, caller: caller}, nil
}
