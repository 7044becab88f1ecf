package main

import (
	"context"
	"fmt"
	"runtime"
	"sync"
	"sync/atomic"

	"github.com/caddyserver/caddy/v2"
)

// runSessionsBench measures what an idle session costs the gateway: n
// sessions are opened (initialize and notifications/initialized, as a
// client does) and left idle; the heap in use after a GC, before and
// after, divided by n is the cost of one. Then the same with
// `max_sessions bound`: the heap must stay at about bound sessions' worth.
//
//	go run ./bench -scenario sessions -sessions 10000 -max_sessions 1000
func runSessionsBench(ctx context.Context, n, bound int, version string) {
	fmt.Printf("edgemcp sessions bench: %d idle sessions (protocol %s), GOMAXPROCS=%d\n", n, version, runtime.GOMAXPROCS(0))
	defer caddy.Stop()
	for _, limit := range []int{0, bound} {
		directive := ""
		if limit > 0 {
			directive = fmt.Sprintf("\t\tmax_sessions %d\n", limit)
		}
		base := loadSite(freePort(), "\tmcp /mcp {\n"+directive+"\t}")
		before := heapInUse()
		var opened, failed atomic.Int64
		var wg sync.WaitGroup
		next := make(chan struct{})
		go func() {
			for range n {
				next <- struct{}{}
			}
			close(next)
		}()
		for range 16 {
			wg.Go(func() {
				for range next {
					if _, err := openSession(ctx, base+"/mcp", version); err != nil {
						if failed.Add(1) == 1 {
							fmt.Println("open:", err)
						}
						continue
					}
					opened.Add(1)
				}
			})
		}
		wg.Wait()
		after := heapInUse()
		per := float64(int64(after)-int64(before)) / float64(opened.Load())
		name := "unbounded"
		if limit > 0 {
			name = fmt.Sprintf("max_sessions %d", limit)
		}
		fmt.Printf("%-18s %6d opened (%d failed): heap in use %.1f MiB → %.1f MiB, +%.1f MiB, %.0f bytes per session opened\n",
			name, opened.Load(), failed.Load(), mib(before), mib(after), mib(after)-mib(before), per)
	}
}
