package main

import (
	"bytes"
	"io"
	"net/http"
	"strconv"

	"github.com/caddyserver/caddy/v2"
	"github.com/caddyserver/caddy/v2/caddyconfig/httpcaddyfile"
	"github.com/caddyserver/caddy/v2/modules/caddyhttp"
	"github.com/jackc/pgx/v5/pgxpool"
)

// dbFloor is the DB floor of the limits scenario: a Caddy handler, in the
// gateway's process, that runs the DB tool's query through a pgx pool for
// each request and answers with respond's bytes. Its cost is Caddy's HTTP
// exchange with a body of the same size (respond's) plus the Postgres
// client's work for the same query on the same server, and nothing of
// MCP: what a DB tool call cannot cost less than. (The driver loop's
// client CPU per call would count pgx in another process, with another
// scheduler and allocator, on top of respond measured here.)
//
//	bench_db_floor <dsn> <max_conns> <body>
//
// The user id is read from the request, a tools/call of get-user as the
// driver posts it to respond (callBody).
type dbFloor struct {
	DSN      string `json:"dsn"`
	MaxConns int32  `json:"max_conns"`
	Body     string `json:"body"`
	pool     *pgxpool.Pool
}

func init() {
	caddy.RegisterModule(dbFloor{})
	httpcaddyfile.RegisterHandlerDirective("bench_db_floor", func(h httpcaddyfile.Helper) (caddyhttp.MiddlewareHandler, error) {
		var f dbFloor
		h.Next()
		var conns string
		if !h.Args(&f.DSN, &conns, &f.Body) {
			return nil, h.ArgErr()
		}
		n, err := strconv.Atoi(conns)
		if err != nil {
			return nil, h.Errf("max_conns: %v", err)
		}
		f.MaxConns = int32(n)
		return &f, nil
	})
}

func (dbFloor) CaddyModule() caddy.ModuleInfo {
	return caddy.ModuleInfo{ID: "http.handlers.bench_db_floor", New: func() caddy.Module { return new(dbFloor) }}
}

func (f *dbFloor) Provision(ctx caddy.Context) error {
	cfg, err := pgxpool.ParseConfig(f.DSN)
	if err != nil {
		return err
	}
	cfg.MaxConns = f.MaxConns
	f.pool, err = pgxpool.NewWithConfig(ctx, cfg)
	return err
}

func (f *dbFloor) Cleanup() error {
	if f.pool != nil {
		f.pool.Close()
	}
	return nil
}

var argumentsID = []byte(`"arguments":{"id":`)

func (f *dbFloor) ServeHTTP(w http.ResponseWriter, r *http.Request, _ caddyhttp.Handler) error {
	body, err := io.ReadAll(io.LimitReader(r.Body, 1<<16))
	if err != nil {
		return caddyhttp.Error(http.StatusBadRequest, err)
	}
	i := bytes.Index(body, argumentsID)
	if i < 0 {
		return caddyhttp.Error(http.StatusBadRequest, nil)
	}
	rest := body[i+len(argumentsID):]
	end := bytes.IndexByte(rest, '}')
	id, err := strconv.ParseInt(string(rest[:max(end, 0)]), 10, 64)
	if err != nil {
		return caddyhttp.Error(http.StatusBadRequest, err)
	}
	if err := lookupUser(r.Context(), f.pool, id); err != nil {
		return caddyhttp.Error(http.StatusInternalServerError, err)
	}
	w.Header().Set("Content-Type", "application/json")
	_, err = io.WriteString(w, f.Body)
	return err
}

var (
	_ caddy.Provisioner           = (*dbFloor)(nil)
	_ caddy.CleanerUpper          = (*dbFloor)(nil)
	_ caddyhttp.MiddlewareHandler = (*dbFloor)(nil)
)
