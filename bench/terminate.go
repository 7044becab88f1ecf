package main

import (
	"context"
	"fmt"
	"os"
	"runtime"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/caddyserver/caddy/v2"
	"github.com/jackc/pgx/v5"
)

// runTerminateBench drives the DB tool while another connection terminates
// the gateway's Postgres backends in a loop (pg_terminate_backend of all
// of them every second). Statements that never reached a backend are
// retried (connectors/postgres/unsent.go); those running when their
// backend went fail.
//
//	go run ./bench -scenario terminate -clients 16 -duration 15s
func runTerminateBench(ctx context.Context, dsn string, clients int, d time.Duration, rows int, version string) {
	app := "edgemcp_terminate_" + strconv.Itoa(os.Getpid())
	url := startGateway(withParam(dsn, "application_name", app), clients, false)
	defer caddy.Stop()
	admin, err := pgx.Connect(ctx, dsn)
	check(err)
	defer admin.Close(context.Background())

	var killed atomic.Int64
	stop := make(chan struct{})
	done := make(chan struct{})
	go func() {
		defer close(done)
		for {
			select {
			case <-stop:
				return
			case <-time.After(time.Second):
			}
			var n int64
			if err := admin.QueryRow(ctx, "SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity WHERE application_name = $1", app).Scan(&n); err == nil {
				killed.Add(n)
			}
		}
	}()
	fmt.Printf("edgemcp terminate bench: %d clients, %s, every backend terminated each second, GOMAXPROCS=%d\n", clients, d, runtime.GOMAXPROCS(0))
	st := runGateway(ctx, url, clients, d, rows, version)
	close(stop)
	<-done
	st.print("DB tool under terminations")
	fmt.Printf("%d backends terminated; %d of %d calls failed; slowest successful call %s\n",
		killed.Load(), st.errors, st.errors+len(st.lat), st.max())
}
