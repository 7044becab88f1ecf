package mcp

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
	"go.uber.org/zap"

	"github.com/edgemcp/edgemcp/pipeline"
)

// bigText is n bytes of text heavy in what JSON escapes (quotes,
// backslashes, newlines), so that the answer's string has escapes all
// along.
func bigText(n int) string {
	const unit = "a \"quoted\" \\ line\n"
	return strings.Repeat(unit, n/len(unit)+1)[:n]
}

// newBigServer is an mcp-go server with "big" (an answer of "bytes" bytes
// of text, after a log message when "notify" is set: a streamable HTTP
// server then answers the POST with an SSE stream) and "session" (the
// session it was called on).
func newBigServer() *server.MCPServer {
	m := server.NewMCPServer("big", "1", server.WithToolCapabilities(true), server.WithLogging())
	m.AddTool(mcp.NewTool("big", mcp.WithNumber("bytes"), mcp.WithBoolean("notify")),
		func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			if req.GetBool("notify", false) {
				_ = server.ServerFromContext(ctx).SendNotificationToClient(ctx, "notifications/message",
					map[string]any{"level": "info", "data": "making it"})
			}
			return mcp.NewToolResultText(bigText(req.GetInt("bytes", 0))), nil
		})
	m.AddTool(mcp.NewTool("session"), func(ctx context.Context, _ mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return mcp.NewToolResultText(server.ClientSessionFromContext(ctx).SessionID()), nil
	})
	return m
}

// startBigServer serves newBigServer over HTTP, streamable or sse, on a
// loopback port, and returns its endpoint.
func startBigServer(t *testing.T, transport string) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	base := "http://" + l.Addr().String()
	var h http.Handler = server.NewStreamableHTTPServer(newBigServer())
	url := base + "/mcp"
	if transport == TransportSSE {
		h = server.NewSSEServer(newBigServer(), server.WithBaseURL(base))
		url = base + "/sse"
	}
	srv := &http.Server{Handler: h}
	go srv.Serve(l)
	t.Cleanup(func() { _ = srv.Close() })
	return url
}

// callText calls tool and returns the text of its one content block.
func callText(t *testing.T, tool *pipeline.Tool, args map[string]any) (string, error) {
	t.Helper()
	res, err := tool.Executor.Execute(context.Background(), &pipeline.Call{Tool: tool, Inputs: args})
	if err != nil {
		return "", err
	}
	var out struct {
		Content []struct {
			Text string `json:"text"`
		} `json:"content"`
	}
	if err := json.Unmarshal(res.Native, &out); err != nil || len(out.Content) != 1 {
		t.Fatalf("%s: %.200s", tool.Name, res.Native)
	}
	return out.Content[0].Text, nil
}

func toolNamed(t *testing.T, s *Source, name string) *pipeline.Tool {
	t.Helper()
	tools, err := s.Tools("b")
	if err != nil {
		t.Fatal(err)
	}
	for _, tl := range tools {
		if tl.Original == name {
			return tl
		}
	}
	t.Fatalf("no tool %s", name)
	return nil
}

// TestMaxResponseSize: an answer larger than max_response_size is refused
// with -32000 naming the limit, on every transport (stdio, streamable HTTP
// answering with JSON or with an SSE stream, HTTP+SSE), and the session
// survives: the next call goes on the same child or upstream session. An
// answer within the bound passes unchanged. Without the bound the whole
// answer was read and forwarded.
func TestMaxResponseSize(t *testing.T) {
	const limit = 64 << 10
	cases := []struct {
		name   string
		source func(t *testing.T) *Source
		notify bool // streamable HTTP: the answer comes on an SSE stream
	}{
		{"stdio", func(t *testing.T) *Source { s, _ := stdioSource(t, time.Hour); return s }, false},
		{"streamable json", func(t *testing.T) *Source {
			return &Source{URL: startBigServer(t, TransportStreamable), Transport: TransportStreamable}
		}, false},
		{"streamable sse", func(t *testing.T) *Source {
			return &Source{URL: startBigServer(t, TransportStreamable), Transport: TransportStreamable}
		}, true},
		{"sse", func(t *testing.T) *Source {
			return &Source{URL: startBigServer(t, TransportSSE), Transport: TransportSSE}
		}, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s := tc.source(t)
			s.MaxResponseSize = limit
			provision(t, s)
			// The session (stdio: the child's pid) a call went on.
			sameName := "session"
			if tc.name == "stdio" {
				sameName = "pid"
			}
			big, same := toolNamed(t, s, "big"), toolNamed(t, s, sameName)
			before, err := callText(t, same, nil)
			if err != nil {
				t.Fatal(err)
			}
			for _, n := range []int{limit / 2, 2 * limit, 40 * limit} {
				got, err := callText(t, big, map[string]any{"bytes": n, "notify": tc.notify})
				if n < limit {
					if err != nil || got != bigText(n) {
						t.Errorf("%d bytes: %d bytes back (%v)", n, len(got), err)
					}
					continue
				}
				var safe pipeline.SafeError
				want := fmt.Sprintf("larger than max_response_size (%d bytes)", limit)
				if !errors.As(err, &safe) || !strings.Contains(safe.SafeMessage(), want) {
					t.Errorf("%d bytes: %v (%d bytes back), want %q", n, err, len(got), want)
				}
				if after, err := callText(t, same, nil); err != nil || after != before {
					t.Errorf("after %d bytes: %q (%v), want the same session %q", n, after, err, before)
				}
			}
		})
	}
}

// TestMaxResponseSizeListPage: a tools/list page larger than
// max_response_size fails the listing, naming the limit.
func TestMaxResponseSizeListPage(t *testing.T) {
	m := server.NewMCPServer("wordy", "1", server.WithToolCapabilities(true))
	m.AddTool(mcp.NewTool("wordy", mcp.WithDescription(bigText(256<<10))), func(context.Context, mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return mcp.NewToolResultText("ok"), nil
	})
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: server.NewStreamableHTTPServer(m)}
	go srv.Serve(l)
	t.Cleanup(func() { _ = srv.Close() })
	s := &Source{URL: "http://" + l.Addr().String() + "/mcp", Transport: TransportStreamable, Required: true}
	s.MaxResponseSize = 64 << 10
	err = provisionErr(t, s)
	if err == nil || !strings.Contains(err.Error(), "tools/list") || !strings.Contains(err.Error(), "max_response_size (65536 bytes)") {
		t.Errorf("provision: %v", err)
	}
}

// TestTopLevel: the id and method of a message are found wherever they
// stand, whatever splits its bytes; nested ones and ids in strings do not
// count.
func TestTopLevel(t *testing.T) {
	for _, tc := range []struct {
		msg, id string
		answer  bool
	}{
		{`{"jsonrpc":"2.0","id":"edgemcp-7","result":{"content":[{"type":"text","text":"x"}]}}`, `"edgemcp-7"`, true},
		{`{"result":{"id":1,"text":"\"id\":2, \\"},"jsonrpc":"2.0","id":42}`, `42`, true},
		{`{ "\u0069d" : "e\"1" , "error":{"code":1}}`, `"e\"1"`, true},
		{`{"jsonrpc":"2.0","method":"notifications/message","params":{"id":3}}`, ``, false},
		{`{"jsonrpc":"2.0","id":5,"method":"sampling/createMessage","params":{}}`, ``, false},
		{`{"jsonrpc":"2.0","id":{"x":1},"result":{}}`, ``, false},
		{`{"jsonrpc":"2.0","result":{}}`, ``, false},
	} {
		for _, size := range []int{1, 3, 7, len(tc.msg)} {
			var s topLevel
			for b := []byte(tc.msg); len(b) > 0; {
				n := min(size, len(b))
				s.write(b[:n])
				b = b[n:]
			}
			id, ok := s.answered()
			if ok != tc.answer || string(id) != tc.id {
				t.Errorf("%s in chunks of %d: %s %t, want %s %t", tc.msg, size, id, ok, tc.id, tc.answer)
			}
		}
	}
}

// BenchmarkFramedBound measures what the bound costs a large answer that
// passes: a 4 MiB line read through framedBound, with the id first (as
// mcp-go and the Python SDK write it) or last (as the TypeScript SDK
// does), against the line read as it is.
func BenchmarkFramedBound(b *testing.B) {
	result, _ := json.Marshal(mcp.NewToolResultText(bigText(4 << 20)))
	idFirst := []byte(`{"jsonrpc":"2.0","id":"edgemcp-1","result":` + string(result) + "}\n")
	idLast := []byte(`{"result":` + string(result) + `,"jsonrpc":"2.0","id":"edgemcp-1"}` + "\n")
	read := func(b *testing.B, line []byte, wrap func(r io.Reader) io.Reader) {
		b.SetBytes(int64(len(line)))
		buf := make([]byte, 32<<10)
		r := bytes.NewReader(line)
		for b.Loop() {
			r.Reset(line)
			for rd := wrap(r); ; {
				if _, err := rd.Read(buf); err != nil {
					break
				}
			}
		}
	}
	bounded := func(r io.Reader) io.Reader { return newFramedBound(r, defaultMaxResponseSize, false, zap.NewNop()) }
	b.Run("id first", func(b *testing.B) { read(b, idFirst, bounded) })
	b.Run("id last", func(b *testing.B) { read(b, idLast, bounded) })
	b.Run("unbounded", func(b *testing.B) {
		read(b, idLast, func(r io.Reader) io.Reader { return bufio.NewReaderSize(r, 64<<10) })
	})
}

// TestDefaultTimeout: a source without timeout still bounds each request
// to the server (it waited forever), and max_response_size has its
// default.
func TestDefaultTimeout(t *testing.T) {
	s := &Source{URL: startBigServer(t, TransportStreamable), Transport: TransportStreamable}
	provision(t, s)
	if got := s.conn.set.built.Timeout; got != defaultTimeout {
		t.Errorf("timeout %v, want %v", got, defaultTimeout)
	}
	if got := s.conn.set.maxResponse; got != defaultMaxResponseSize {
		t.Errorf("max_response_size %d, want %d", got, defaultMaxResponseSize)
	}
}
