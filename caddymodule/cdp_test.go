package caddymodule

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"golang.org/x/net/websocket"
)

// browserPage is one headless Chromium tab driven over the DevTools
// protocol, for tests that interact with a page (the catalog's try-it
// forms): evaluate JavaScript in it and read what it logged. The DevTools
// connection is a websocket to a loopback port Chromium picks.
type browserPage struct {
	t  testing.TB
	ws *websocket.Conn

	mu      sync.Mutex
	nextID  int
	pending map[int]chan cdpMessage
	console []string // errors and warnings: console, log entries, exceptions
}

type cdpMessage struct {
	ID     int             `json:"id,omitempty"`
	Method string          `json:"method,omitempty"`
	Params json.RawMessage `json:"params,omitempty"`
	Result json.RawMessage `json:"result,omitempty"`
	Error  *struct {
		Message string `json:"message"`
	} `json:"error,omitempty"`
}

var devtoolsURL = regexp.MustCompile(`DevTools listening on (ws://[^\s]+)`)

// openBrowserPage starts Chromium with remote debugging and returns its
// first tab, with the Runtime, Log and Page domains enabled. A script
// registered for every document records CSP violations in
// window.__cspViolations (DevTools scripts are not subject to the CSP).
func openBrowserPage(t testing.TB) *browserPage {
	t.Helper()
	bin := chromiumPath(t)
	// The profile is removed best-effort: helper processes of a killed
	// browser may still be writing to it (t.TempDir would fail the test).
	profile, err := os.MkdirTemp("", "edgemcp-chromium-")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cmd := exec.CommandContext(ctx, bin, "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
		"--disable-background-networking", "--disable-component-update", "--disable-sync", "--disable-dev-shm-usage",
		"--user-data-dir="+profile, "--remote-debugging-port=0", "--remote-debugging-address=127.0.0.1",
		"--remote-allow-origins=http://127.0.0.1", "about:blank")
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan struct{})
	go func() {
		_ = cmd.Wait()
		close(exited)
	}()
	t.Cleanup(func() {
		cancel() // kills the browser unless it closed already
		<-exited
		_ = os.RemoveAll(profile)
	})
	found := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			if m := devtoolsURL.FindStringSubmatch(sc.Text()); m != nil {
				found <- m[1]
				break
			}
		}
		_, _ = io.Copy(io.Discard, stderr) // keep the pipe drained
	}()
	var browserWS string
	select {
	case browserWS = <-found:
	case <-time.After(60 * time.Second):
		t.Fatal("Chromium did not print its DevTools address")
	}
	host := strings.TrimPrefix(browserWS, "ws://")
	host = host[:strings.Index(host, "/")]

	// The first tab's own websocket.
	var targets []struct {
		Type string `json:"type"`
		WS   string `json:"webSocketDebuggerUrl"`
	}
	waitFor(t, "Chromium's first tab", func() bool {
		res, err := http.Get("http://" + host + "/json/list")
		if err != nil {
			return false
		}
		defer res.Body.Close()
		targets = nil
		_ = json.NewDecoder(res.Body).Decode(&targets)
		for _, tg := range targets {
			if tg.Type == "page" {
				return true
			}
		}
		return false
	})
	var pageWS string
	for _, tg := range targets {
		if tg.Type == "page" {
			pageWS = tg.WS
			break
		}
	}
	ws, err := websocket.Dial(pageWS, "", "http://127.0.0.1")
	if err != nil {
		t.Fatalf("DevTools websocket: %v", err)
	}
	p := &browserPage{t: t, ws: ws, pending: map[int]chan cdpMessage{}}
	t.Cleanup(func() {
		// Closed by request, the browser ends its helper processes too.
		msg, _ := json.Marshal(map[string]any{"id": 1 << 30, "method": "Browser.close"})
		_ = websocket.Message.Send(ws, string(msg))
		select {
		case <-exited:
		case <-time.After(30 * time.Second):
		}
		ws.Close()
	})
	go p.read()
	for _, m := range []string{"Runtime.enable", "Log.enable", "Page.enable"} {
		p.call(m, nil)
	}
	// A headless tab is never focused, and the Clipboard API wants focus.
	p.call("Emulation.setFocusEmulationEnabled", map[string]any{"enabled": true})
	p.call("Page.addScriptToEvaluateOnNewDocument", map[string]any{"source": `window.__cspViolations = [];
document.addEventListener("securitypolicyviolation", e => window.__cspViolations.push(e.violatedDirective + " " + e.blockedURI));`})
	return p
}

// read dispatches answers to their callers and records errors and warnings.
func (p *browserPage) read() {
	for {
		var raw []byte
		if err := websocket.Message.Receive(p.ws, &raw); err != nil {
			p.mu.Lock()
			for id, ch := range p.pending {
				close(ch)
				delete(p.pending, id)
			}
			p.mu.Unlock()
			return
		}
		var m cdpMessage
		if json.Unmarshal(raw, &m) != nil {
			continue
		}
		p.mu.Lock()
		if ch, ok := p.pending[m.ID]; ok && m.ID != 0 {
			delete(p.pending, m.ID)
			ch <- m
		} else if line := consoleLine(m); line != "" {
			p.console = append(p.console, line)
		}
		p.mu.Unlock()
	}
}

// consoleLine is an event worth reporting: a console error or warning, a
// log entry of level error or warning (CSP violations are such entries) but
// a failed HTTP status, an uncaught exception.
func consoleLine(m cdpMessage) string {
	switch m.Method {
	case "Runtime.consoleAPICalled":
		var e struct {
			Type string            `json:"type"`
			Args []json.RawMessage `json:"args"`
		}
		_ = json.Unmarshal(m.Params, &e)
		if e.Type == "error" || e.Type == "warning" {
			return "console." + e.Type + ": " + fmt.Sprint(e.Args)
		}
	case "Log.entryAdded":
		var e struct {
			Entry struct {
				Level, Source, Text string
			} `json:"entry"`
		}
		_ = json.Unmarshal(m.Params, &e)
		// Network entries are HTTP statuses the tests cause on purpose
		// (a call without credentials is answered 401).
		if (e.Entry.Level == "error" || e.Entry.Level == "warning") && e.Entry.Source != "network" {
			return "log " + e.Entry.Source + " " + e.Entry.Level + ": " + e.Entry.Text
		}
	case "Runtime.exceptionThrown":
		return "exception: " + string(m.Params)
	}
	return ""
}

// call sends one DevTools command and returns its result.
func (p *browserPage) call(method string, params any) json.RawMessage {
	p.t.Helper()
	p.mu.Lock()
	p.nextID++
	id := p.nextID
	ch := make(chan cdpMessage, 1)
	p.pending[id] = ch
	p.mu.Unlock()
	msg, _ := json.Marshal(map[string]any{"id": id, "method": method, "params": params})
	if err := websocket.Message.Send(p.ws, string(msg)); err != nil {
		p.t.Fatalf("%s: %v", method, err)
	}
	select {
	case m, ok := <-ch:
		if !ok {
			p.t.Fatalf("%s: DevTools connection closed", method)
		}
		if m.Error != nil {
			p.t.Fatalf("%s: %s", method, m.Error.Message)
		}
		return m.Result
	case <-time.After(60 * time.Second):
		p.t.Fatalf("%s: no answer from Chromium", method)
	}
	return nil
}

// eval evaluates a JavaScript expression (awaiting a promise) and decodes
// its value into out (may be nil).
func (p *browserPage) eval(expr string, out any) {
	p.t.Helper()
	raw := p.call("Runtime.evaluate", map[string]any{"expression": expr, "awaitPromise": true, "returnByValue": true})
	var r struct {
		Result struct {
			Value json.RawMessage `json:"value"`
		} `json:"result"`
		Exception *struct {
			Text      string `json:"text"`
			Exception struct {
				Description string `json:"description"`
			} `json:"exception"`
		} `json:"exceptionDetails"`
	}
	if err := json.Unmarshal(raw, &r); err != nil {
		p.t.Fatal(err)
	}
	if r.Exception != nil {
		p.t.Fatalf("evaluating %s: %s %s", expr, r.Exception.Text, r.Exception.Exception.Description)
	}
	if out != nil && len(r.Result.Value) > 0 {
		if err := json.Unmarshal(r.Result.Value, out); err != nil {
			p.t.Fatalf("evaluating %s: %v (%s)", expr, err, r.Result.Value)
		}
	}
}

// text is the value of a JavaScript expression (a promise awaited) as a
// string.
func (p *browserPage) text(expr string) string {
	p.t.Helper()
	var s string
	p.eval(`(async () => String(await (`+expr+`)))()`, &s)
	return s
}

// navigate opens url and waits until the document and its script loaded.
func (p *browserPage) navigate(url string) {
	p.t.Helper()
	p.call("Page.navigate", map[string]any{"url": url})
	waitFor(p.t, "the page to load", func() bool {
		return p.text(`location.href`) == url && p.text(`document.readyState`) == "complete"
	})
}

// problems are the errors and warnings the page reported so far, CSP
// violations included.
func (p *browserPage) problems() []string {
	p.t.Helper()
	var violations []string
	p.eval(`window.__cspViolations || []`, &violations)
	p.mu.Lock()
	defer p.mu.Unlock()
	out := append([]string(nil), p.console...)
	for _, v := range violations {
		out = append(out, "CSP violation: "+v)
	}
	return out
}
