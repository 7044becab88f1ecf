package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"runtime"
	"runtime/metrics"
	"strings"
	"sync/atomic"
	"time"

	"github.com/caddyserver/caddy/v2"
)

// Cost at size. -scenario bigtools: tools/list on a gateway declaring
// 10,000 tools (the first page, which the direct path answers from entries
// encoded once, and the whole list following cursors, whose later pages
// mcp-go builds), and the heap the tools hold. -scenario bigresult: a
// tool returning 10,000 rows, the largest result max_rows lets through by
// default; the heap at its peak while calls run, and a call over the
// limit; then 10,000 wide rows under max_result_size 64MiB, the default
// and 1MiB.

const bigTools = 10000

// heapInUse is the heap in use after a full collection.
func heapInUse() uint64 {
	transport.CloseIdleConnections()
	runtime.GC()
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.HeapInuse
}

func runBigToolsBench(ctx context.Context, dsn string, d time.Duration, version string) {
	port := freePort()
	url := loadSite(port, "\tmcp /mcp {\n\t}") + "/mcp"
	defer caddy.Stop()
	before := heapInUse()
	var decl strings.Builder
	for i := range bigTools {
		fmt.Fprintf(&decl, `		tool get-user-%05d {
			description "Fetch a user of area %d by id"
			use main
			statement "SELECT id, name, email, created_at FROM edgemcp_bench.users WHERE id = {{ inputs.id }}"
			input id int required
		}
`, i, i)
	}
	start := time.Now()
	loadSite(port, fmt.Sprintf("\tmcp /mcp {\n\t\tconnector main postgres %s {\n\t\t\tmax_conns 4\n\t\t}\n%s\t}", dsn, decl.String()))
	load := time.Since(start)
	transport.CloseIdleConnections()
	loaded := heapInUse()
	s, err := openSession(ctx, url, version)
	check(err)
	fmt.Printf("edgemcp bigtools bench: %d declared tools loaded in %s; heap in use %.1f → %.1f MiB (%.0f bytes per tool); %s\n",
		bigTools, load.Round(time.Millisecond), mib(before), mib(loaded), float64(loaded-before)/bigTools, loadAverage())

	var size, pages, listed atomic.Int64
	first := drive(1, d, func(*rand.Rand) error {
		b, _, err := s.post(ctx, `{"jsonrpc":"2.0","id":1,"method":"tools/list"}`)
		size.Store(int64(len(b)))
		return err
	})
	first.print("tools/list page 1")
	whole := drive(1, d, func(*rand.Rand) error {
		n, p, err := listAll(ctx, s)
		listed.Store(int64(n))
		pages.Store(int64(p))
		return err
	})
	whole.print("tools/list, all")
	fmt.Printf("first page %d bytes; the whole list %d tools in %d pages; heap in use after the lists %.1f MiB\n",
		size.Load(), listed.Load(), pages.Load(), mib(heapInUse()))
}

// listAll follows nextCursor to the end and returns the tools and pages.
func listAll(ctx context.Context, s *session) (tools, pages int, err error) {
	cursor := ""
	for {
		params := ""
		if cursor != "" {
			params = `,"params":{"cursor":"` + cursor + `"}`
		}
		b, _, err := s.post(ctx, `{"jsonrpc":"2.0","id":1,"method":"tools/list"`+params+`}`)
		if err != nil {
			return tools, pages, err
		}
		var page struct {
			Result struct {
				Tools      []json.RawMessage `json:"tools"`
				NextCursor string            `json:"nextCursor"`
			} `json:"result"`
		}
		if err := json.Unmarshal(b, &page); err != nil {
			return tools, pages, fmt.Errorf("tools/list: %v: %.200s", err, b)
		}
		tools += len(page.Result.Tools)
		pages++
		if cursor = page.Result.NextCursor; cursor == "" {
			return tools, pages, nil
		}
	}
}

func runBigResultBench(ctx context.Context, dsn string, d time.Duration, rows int, version string) {
	url := loadSite(freePort(), fmt.Sprintf(`	mcp /mcp {
		connector main postgres %s {
			max_conns 8
		}
		connector bounded postgres %s {
			max_conns 8
			max_result_size 1MiB
		}
		connector raised postgres %s {
			max_conns 8
			max_result_size 64MiB
		}
		tool list-users {
			description "The first n users"
			use main
			statement "SELECT id, name, email, created_at FROM edgemcp_bench.users ORDER BY id LIMIT {{ inputs.n }}"
			input n int required
		}
		tool wide-users {
			description "The first n users, with 1 KiB of text each"
			use main
			statement "`+wideUsers+`"
			input n int required
		}
		tool wide-users-raised {
			description "The first n users, with 1 KiB of text each, max_result_size 64MiB"
			use raised
			statement "`+wideUsers+`"
			input n int required
		}
		tool wide-users-bounded {
			description "The first n users, with 1 KiB of text each, max_result_size 1MiB"
			use bounded
			statement "`+wideUsers+`"
			input n int required
		}
	}`, dsn, dsn, dsn)) + "/mcp"
	defer caddy.Stop()
	fmt.Printf("edgemcp bigresult bench: 10,000-row results (default max_rows 10000), %d rows in the table, %s\n", rows, loadAverage())
	s, err := openSession(ctx, url, version)
	check(err)
	body, _, err := s.post(ctx, `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"list-users","arguments":{"n":10000}}}`)
	check(err)
	fmt.Printf("answer: %d bytes\n", len(body))
	for _, clients := range []int{1, 8} {
		heapUnderCalls(ctx, url, version, fmt.Sprintf("%d client(s)", clients), clients, d, func(s *session) error {
			return s.callTool(ctx, "list-users", `{"n":10000}`)
		})
	}
	// Wide rows: 10,000 rows of about 1 KiB count about 10.4 MiB: over
	// the default max_result_size (4 MiB) and 1MiB, the call fails once
	// that much is counted (the statement is canceled, the connection
	// kept); under 64MiB the whole result is built and encoded (one
	// client: eight would hold over a GiB on this machine).
	body, _, err = s.post(ctx, `{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"wide-users-raised","arguments":{"n":10000}}}`)
	check(err)
	fmt.Printf("wide rows: answer %d bytes\n", len(body))
	heapUnderCalls(ctx, url, version, "wide rows, max_result_size 64MiB, 1 client", 1, d, func(s *session) error {
		return s.callTool(ctx, "wide-users-raised", `{"n":10000}`)
	})
	for _, tool := range []string{"wide-users", "wide-users-bounded"} {
		heapUnderCalls(ctx, url, version, tool+" (refused), 8 clients", 8, d, func(s *session) error {
			b, _, err := s.post(ctx, `{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"`+tool+`","arguments":{"n":10000}}}`)
			if err == nil && !bytes.Contains(b, []byte("(max_result_size)")) {
				err = fmt.Errorf("%s: %.200s", tool, b)
			}
			return err
		})
	}
	if rows > 10000 {
		b, _, err := s.post(ctx, `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"list-users","arguments":{"n":10001}}}`)
		check(err)
		if i := bytes.Index(b, []byte(`"message"`)); i >= 0 {
			b = b[i:]
		}
		fmt.Printf("10,001 rows: %.200s\n", b)
	}
}

// wideUsers is a statement returning about 1 KiB of text per row.
const wideUsers = "SELECT id, name, repeat(md5(email), 32) AS bio FROM edgemcp_bench.users ORDER BY id LIMIT {{ inputs.n }}"

// heapUnderCalls runs call from clients sessions for d and prints the
// latencies and the heap's peak while they run.
func heapUnderCalls(ctx context.Context, url, version, what string, clients int, d time.Duration, call func(*session) error) {
	sessions := openSessions(ctx, url, version, clients)
	base := heapInUse()
	stop := make(chan struct{})
	peak := make(chan uint64)
	go func() { peak <- heapPeak(stop) }()
	st := drive(clients, d, func(r *rand.Rand) error { return call(sessions[r.IntN(clients)]) })
	close(stop)
	p := <-peak
	st.print(what)
	fmt.Printf("  heap: %.1f MiB in use before, peak of live+unswept objects %.1f MiB (%.1f MiB per call in flight)\n",
		mib(base), mib(p), (mib(p)-mib(base))/float64(clients))
}

// heapPeak samples the heap's object bytes every millisecond until stop.
func heapPeak(stop <-chan struct{}) uint64 {
	sample := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
	var peak uint64
	t := time.NewTicker(time.Millisecond)
	defer t.Stop()
	for {
		select {
		case <-stop:
			return peak
		case <-t.C:
			metrics.Read(sample)
			peak = max(peak, sample[0].Value.Uint64())
		}
	}
}
