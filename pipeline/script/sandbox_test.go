package script

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/edgemcp/edgemcp/pipeline"
)

// A script that never ends is interrupted at its limit while good calls on
// the same script keep being served by the pool (run with -race).
func TestPoolServesWhileOneSpins(t *testing.T) {
	dir := files(t, map[string]string{"s.js": `
		let calls = 0 // module state: per runtime, never shared across goroutines
		export default ({inputs}) => {
			calls++
			if (inputs.spin) { while (true) {} }
			return {n: inputs.n * 2}
		}`})
	// The spinning calls hold both cores of a small machine until the
	// timeout; the good calls share them meanwhile, so the timeout leaves
	// them room under -race (one second did not, on a loaded machine).
	s := mustLoad(t, filepath.Join(dir, "s.js"), Options{Timeout: 3 * time.Second, MaxRuntimes: 6})
	var wg sync.WaitGroup
	errs := make(chan error, 100)
	for i := 0; i < 2; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, err := s.Call(context.Background(), map[string]any{"inputs": map[string]any{"spin": true}})
			if se, ok := err.(*Error); !ok || se.Kind != KindTimeout {
				errs <- fmt.Errorf("spinning call: got %v", err)
			}
		}()
	}
	for i := 0; i < 8; i++ {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			for j := 0; j < 20; j++ {
				out, err := s.Call(context.Background(), map[string]any{"inputs": map[string]any{"n": i*100 + j}})
				if err != nil || string(out) != fmt.Sprintf(`{"n":%d}`, 2*(i*100+j)) {
					errs <- fmt.Errorf("good call: %s %v", out, err)
					return
				}
			}
		}(i)
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	// After the interrupts the pool still answers, promptly.
	if got := call(t, s, map[string]any{"inputs": map[string]any{"n": 1}}); got != `{"n":2}` {
		t.Fatalf("got %s", got)
	}
}

func TestContextCancelInterrupts(t *testing.T) {
	dir := files(t, map[string]string{"s.js": `export default () => { while (true) {} }`})
	s := mustLoad(t, filepath.Join(dir, "s.js"), Options{Timeout: 10 * time.Second})
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(50*time.Millisecond, cancel)
	start := time.Now()
	_, err := s.Call(ctx, nil)
	if se := scriptErr(t, err); se.Kind != KindCancelled || time.Since(start) > 5*time.Second {
		t.Fatalf("got %v after %s", se, time.Since(start))
	}
}

func TestConsoleGoesToLogger(t *testing.T) {
	var buf bytes.Buffer
	logger := slog.New(slog.NewJSONHandler(&buf, &slog.HandlerOptions{Level: slog.LevelDebug}))
	dir := files(t, map[string]string{"s.js": `export default () => {
		console.log('hello', {a: 1}, [1, 2], undefined)
		console.warn('careful')
		console.error(new Error('bad thing'))
		console.debug('details')
		for (let i = 0; i < 100; i++) console.info('spam', i)
		return 1
	}`})
	s := mustLoad(t, filepath.Join(dir, "s.js"), Options{Name: "my-tool", Logger: logger})
	call(t, s, nil)
	var lines []map[string]any
	for _, l := range strings.Split(strings.TrimSpace(buf.String()), "\n") {
		var m map[string]any
		if err := json.Unmarshal([]byte(l), &m); err != nil {
			t.Fatal(err)
		}
		lines = append(lines, m)
	}
	want := []struct{ level, msg string }{
		{"INFO", `hello {"a":1} [1,2] undefined`}, {"WARN", "careful"}, {"ERROR", "bad thing"}, {"DEBUG", "details"},
	}
	for i, w := range want {
		if lines[i]["level"] != w.level || lines[i]["msg"] != w.msg || lines[i]["tool"] != "my-tool" {
			t.Errorf("line %d: got %v, want %v", i, lines[i], w)
		}
	}
	if len(lines) != maxConsoleLines+1 || !strings.Contains(lines[maxConsoleLines]["msg"].(string), "limit reached") {
		t.Errorf("got %d lines, want %d and a limit notice", len(lines), maxConsoleLines+1)
	}
}

func TestFetch(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/echo":
			body := new(bytes.Buffer)
			_, _ = body.ReadFrom(r.Body)
			w.Header().Set("X-Seen", r.Header.Get("X-Key"))
			_ = json.NewEncoder(w).Encode(map[string]any{"method": r.Method, "body": body.String()})
		case "/huge":
			_, _ = w.Write(bytes.Repeat([]byte("x"), 2<<20))
		case "/slow":
			select { // until the client gives up
			case <-r.Context().Done():
			case <-time.After(10 * time.Second):
			}
		case "/away":
			http.Redirect(w, r, "http://elsewhere.example/", http.StatusFound)
		}
	}))
	defer srv.Close()
	host := strings.TrimPrefix(srv.URL, "http://")
	dir := files(t, map[string]string{
		"get.js": `export default async ({inputs}) => {
			const r = await fetch(inputs.url + '/echo', {method: 'post', headers: {'X-Key': 'k1'}, body: JSON.stringify({q: 1})})
			return {status: r.status, ok: r.ok, seen: r.headers.get('x-seen'), json: await r.json()}
		}`,
		"try.js": `export default async ({inputs}) => { await fetch(inputs.url) }`,
		"has.js": `export default () => typeof fetch`,
	})
	ok := mustLoad(t, filepath.Join(dir, "get.js"), Options{FetchAllow: []string{"example.com", host}})
	got := call(t, ok, map[string]any{"inputs": map[string]any{"url": srv.URL}})
	if got != `{"status":200,"ok":true,"seen":"k1","json":{"body":"{\"q\":1}","method":"POST"}}` {
		t.Errorf("allowed fetch: %s", got)
	}
	if got := call(t, mustLoad(t, filepath.Join(dir, "has.js"), Options{}), nil); got != `"undefined"` {
		t.Errorf("without fetch_allow fetch must not exist, typeof is %s", got)
	}

	try := mustLoad(t, filepath.Join(dir, "try.js"), Options{FetchAllow: []string{host, "*.allowed.example"}, FetchTimeout: time.Second, Timeout: 10 * time.Second})
	u, _ := url.Parse(srv.URL)
	cases := map[string]string{
		"http://evil.example/x":                  `fetch: host "evil.example" is not in fetch_allow`,
		"http://allowed.example/x":               `fetch: host "allowed.example" is not in fetch_allow`,
		"http://localhost:" + u.Port() + "/echo": `is not in fetch_allow`,
		"file:///etc/passwd":                     `fetch: invalid URL`,
		"ftp://" + host + "/":                    `is not in fetch_allow`,
		srv.URL + "/huge":                        `response body larger than 1 MiB`,
		srv.URL + "/slow":                        `timed out`,
		srv.URL + "/away":                        `redirect to host "elsewhere.example", which is not in fetch_allow`,
	}
	for target, want := range cases {
		_, err := try.Call(context.Background(), map[string]any{"inputs": map[string]any{"url": target}})
		if se := scriptErr(t, err); se.Kind != KindThrown || !strings.Contains(se.Message, want) {
			t.Errorf("%s: got %q, want %q", target, se.Message, want)
		}
	}
	for _, bad := range []string{"", "http://x.example", "a/b", "*"} {
		if ParseFetchAllow(bad) == nil {
			t.Errorf("fetch_allow %q accepted", bad)
		}
	}
}

func TestHandlerResults(t *testing.T) {
	dir := files(t, map[string]string{
		"image.js": `export default () => ({content: [{type: 'image', data: 'iVBORw0KGgo=', mimeType: 'image/png'}, {type: 'text', text: 'a dot'}]})`,
		"err.js":   `export default () => ({content: [{type: 'text', text: 'no such user'}], isError: true})`,
		"bad.js":   `export default () => ({content: [{type: 'image', data: 'x'}]})`,
		"plain.js": `export default ({inputs}) => ({content: 'not a block list', hello: inputs.name})`,
		"throw.js": `export default () => { throw new Error('kaput') }`,
	})
	tool := &pipeline.Tool{Name: "t", Description: "d"}
	run := func(spec string) (*pipeline.Result, error) {
		h := Handler{Script: mustLoad(t, filepath.Join(dir, spec), Options{})}
		return h.Execute(context.Background(), &pipeline.Call{Tool: tool, Inputs: map[string]any{"name": "Ada"}})
	}
	res, err := run("image.js")
	if err != nil || !strings.Contains(string(res.Native), `"type":"image"`) || res.Value != nil {
		t.Errorf("image: %+v %v", res, err)
	}
	if res, err := run("err.js"); err != nil || !strings.Contains(string(res.Native), `"isError":true`) {
		t.Errorf("isError: %+v %v", res, err)
	}
	if res, err := run("plain.js"); err != nil || res.Native != nil || string(res.Value.(json.RawMessage)) != `{"content":"not a block list","hello":"Ada"}` {
		t.Errorf("plain: %+v %v", res, err)
	}
	_, err = run("bad.js")
	if pe, ok := err.(*pipeline.Error); !ok || pe.Stage != StageHandler || pe.Message != "invalid MCP tool result: content[0] (image): missing mimeType" {
		t.Errorf("bad: %v", err)
	}
	_, err = run("throw.js")
	if pe, ok := err.(*pipeline.Error); !ok || pe.Code != pipeline.CodeStageFailed || pe.Error() != "handler: kaput" {
		t.Errorf("throw: %v", err)
	}
}
