package mcp

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/caddyserver/caddy/v2"
	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/client/transport"
	"github.com/mark3labs/mcp-go/mcp"
	"go.uber.org/zap"
	"go.uber.org/zap/exp/zapslog"

	"github.com/edgemcp/edgemcp/pipeline"
	"github.com/edgemcp/edgemcp/sources/upstream"
)

// pool shares connections between configs: a reload whose source settings
// are unchanged keeps the child process and the session (README, Sources:
// MCP servers).
var pool = caddy.NewUsagePool()

// Timeouts of the gateway's own requests and of stopping a child.
const (
	connectTimeout = 30 * time.Second
	listTimeout    = 30 * time.Second
	stopGrace      = 3 * time.Second
	cancelTimeout  = 5 * time.Second
)

// conn is one upstream MCP server: its session (nil while it is down), the
// tools it listed last, and who to tell when they change.
type conn struct {
	set *settings
	log *zap.Logger

	ctx    context.Context // ends when the connection is destroyed
	cancel context.CancelFunc

	mu    sync.Mutex
	sess  *session
	tools []listedTool
	cat   pipeline.SourceCatalog // resources, templates, prompts (listCatalog)
	vers  int64                  // counts the tool lists set
	subs  map[*Source]func()
	// Resource subscriptions (SubscribeResource), under mu: the downstream
	// sessions subscribed to each URI, and each config's delivery.
	watched   map[string]map[string]struct{}
	onUpdated map[*Source]func(uri string, sessions []string)
	watchMu   sync.Mutex // one upstream subscribe or unsubscribe at a time

	trOnce sync.Once
	tr     *http.Transport // HTTP sources: shared by the sessions (httpTransport)

	connectMu sync.Mutex // one connect at a time
	reviving  atomic.Bool
	backoff   time.Duration // next restart wait of a crashing child

	callers *callers // session per_caller: the callers' sessions (callerSession); nil else

	// The listings again after the server's list_changed, coalesced: a
	// flood of notices costs two listings, not one each.
	relistTools, relistCatalog *pipeline.Coalescer
}

// session is one connected client: for stdio, one child process.
type session struct {
	client *client.Client
	tr     transport.Interface
	cmd    *exec.Cmd // stdio only
	start  time.Time
	nextID atomic.Int64
	relay  *relay
	// broken is set when the stdio transport closed: the child closed
	// its output, and is exiting if it has not yet.
	broken atomic.Bool
	// written counts the writes to a stdio child's stdin (countedWriter).
	written atomic.Int64
	// caller is set on a caller's own session (session per_caller): it
	// serves that caller's calls, and the tools are listed elsewhere.
	caller bool
	// instructions are the server's, from its initialize result.
	instructions string
	// tasks is the server's tasks capability (taskCapability).
	tasks  pipeline.TaskCapability
	closed sync.Once
}

// open makes the connection and connects once. A server that cannot be
// reached fails when the source is required; else it is retried in the
// background.
func open(set *settings, log *zap.Logger) (*conn, error) {
	ctx, cancel := context.WithCancel(context.Background())
	c := &conn{set: set, log: log, ctx: ctx, cancel: cancel, subs: map[*Source]func(){},
		watched: map[string]map[string]struct{}{}, onUpdated: map[*Source]func(string, []string){}, backoff: set.backoff}
	c.relistTools, c.relistCatalog = pipeline.NewCoalescer(c.relist), pipeline.NewCoalescer(c.relistCatalogNow)
	if set.perCaller {
		c.callers = newCallers(c, set.maxCallers, set.callerIdle)
		go c.callers.run()
	}
	if _, err := c.ensure(ctx); err != nil {
		if set.required {
			cancel()
			set.built.Close()
			return nil, err
		}
		log.Warn("MCP server not reachable: its tools are served once a background retry connects (set required to fail the load instead)",
			zap.String("server", set.describe()), zap.Error(err))
		c.revive(set.backoff)
	}
	return c, nil
}

// Destruct implements caddy.Destructor: the last config holding the
// connection is gone.
func (c *conn) Destruct() error {
	c.cancel()
	c.mu.Lock()
	s := c.sess
	c.sess = nil
	c.mu.Unlock()
	if s != nil {
		s.close()
	}
	if c.callers != nil {
		c.callers.stop()
	}
	if c.tr != nil {
		c.tr.CloseIdleConnections()
	}
	c.set.built.Close()
	return nil
}

func (c *conn) subscribe(src *Source, changed func()) {
	c.mu.Lock()
	c.subs[src] = changed
	c.mu.Unlock()
}

func (c *conn) unsubscribe(src *Source) {
	c.mu.Lock()
	delete(c.subs, src)
	delete(c.onUpdated, src)
	c.mu.Unlock()
}

// changed tells every config using the connection to ask for its tools
// again (pipeline.ChangeNotifier).
func (c *conn) changed() {
	c.mu.Lock()
	fns := make([]func(), 0, len(c.subs))
	for _, f := range c.subs {
		fns = append(fns, f)
	}
	c.mu.Unlock()
	for _, f := range fns {
		f()
	}
}

func (c *conn) listed() ([]listedTool, int64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.tools, c.vers
}

func (c *conn) version() int64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.vers
}

// current is the session, or nil while the server is down.
func (c *conn) current() *session {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.sess
}

// ensure returns the session, connecting (and listing the tools) when
// there is none. A new tool list is announced to the subscribers.
func (c *conn) ensure(ctx context.Context) (*session, error) {
	if s := c.current(); s != nil && !s.exited() {
		return s, nil
	}
	c.connectMu.Lock()
	defer c.connectMu.Unlock()
	if s := c.current(); s != nil {
		if !s.exited() {
			return s, nil
		}
		c.drop(s)
	}
	if err := c.ctx.Err(); err != nil {
		return nil, errors.New("the MCP source is stopped")
	}
	s, err := c.connect(ctx, nil)
	if err != nil {
		return nil, err
	}
	tools, err := s.listTools(ctx)
	if err != nil {
		s.close()
		return nil, fmt.Errorf("tools/list: %v", err)
	}
	cat, err := s.listCatalog(ctx)
	if err != nil { // the tools, and what did list, serve without them
		c.log.Warn("MCP server's resources or prompts could not all be listed", zap.String("server", c.set.describe()), zap.Error(err))
	}
	c.mu.Lock()
	if c.ctx.Err() != nil { // destroyed meanwhile
		c.mu.Unlock()
		s.close()
		return nil, errors.New("the MCP source is stopped")
	}
	c.sess, c.tools, c.cat = s, tools, cat
	c.vers++
	c.mu.Unlock()
	c.log.Info("MCP server connected", zap.String("server", c.set.describe()), zap.Int("tools", len(tools)))
	if s.cmd != nil {
		go c.watch(s)
	}
	go c.resubscribe(s)
	c.changed()
	return s, nil
}

// drop forgets s if it is the current session, and closes it.
func (c *conn) drop(s *session) {
	c.mu.Lock()
	if c.sess == s {
		c.sess = nil
	}
	c.mu.Unlock()
	s.close()
}

// revive connects in the background, waiting c.backoff first and twice as
// long after each failure, up to maxRestartBackoff, until it succeeds or
// the connection is destroyed.
func (c *conn) revive(first time.Duration) {
	if !c.reviving.CompareAndSwap(false, true) {
		return
	}
	go func() {
		defer c.reviving.Store(false)
		wait := first
		for {
			t := time.NewTimer(wait)
			select {
			case <-c.ctx.Done():
				t.Stop()
				return
			case <-t.C:
			}
			ctx, cancel := context.WithTimeout(c.ctx, connectTimeout)
			_, err := c.ensure(ctx)
			cancel()
			if err == nil || c.ctx.Err() != nil {
				return
			}
			c.log.Debug("MCP server still not reachable", zap.String("server", c.set.describe()), zap.Error(err))
			wait = min(wait*2, maxRestartBackoff)
		}
	}()
}

// watch waits for the child of s to exit, then restarts it with backoff:
// the wait doubles while the child keeps exiting soon after its start, and
// starts again from restart_backoff after a child that ran a while.
func (c *conn) watch(s *session) {
	waitExit(s.cmd.Process.Pid)
	if c.ctx.Err() != nil {
		return
	}
	c.mu.Lock()
	current := c.sess == s
	if time.Since(s.start) > maxRestartBackoff {
		c.backoff = c.set.backoff // it ran a while: start over
	}
	wait := c.backoff
	if current {
		c.backoff = min(c.backoff*2, maxRestartBackoff)
	}
	c.mu.Unlock()
	if !current {
		return // closed on purpose
	}
	c.log.Warn("MCP server process exited: restarting it", zap.String("server", c.set.describe()),
		zap.Int("pid", s.cmd.Process.Pid), zap.Duration("backoff", wait))
	// The tools stay listed: a call in the meantime starts the child
	// again at once.
	c.drop(s)
	c.revive(wait)
}

// connect starts a session: the child for stdio, the HTTP transport else,
// then the initialize handshake. who is the caller of a per-caller
// session, nil for the shared one.
func (c *conn) connect(ctx context.Context, who *callerSession) (*session, error) {
	ctx, cancel := context.WithTimeout(ctx, connectTimeout)
	defer cancel()
	switch c.set.transport {
	case TransportStdio:
		return c.connectStdio(ctx)
	case TransportAuto:
		// A 4xx to the first POST marks an HTTP+SSE server (the MCP
		// specification's backwards compatibility rule).
		s, err := c.connectHTTP(ctx, TransportStreamable, who)
		if !errors.Is(err, transport.ErrLegacySSEServer) {
			return s, err
		}
		c.log.Debug("MCP server did not take a streamable HTTP session: trying SSE", zap.String("server", c.set.url), zap.Error(err))
		return c.connectHTTP(ctx, TransportSSE, who)
	default:
		return c.connectHTTP(ctx, c.set.transport, who)
	}
}

func (c *conn) connectHTTP(ctx context.Context, kind string, who *callerSession) (*session, error) {
	ct := &credentialTransport{base: c.httpTransport(), creds: c.set.built.Credentials}
	if who != nil {
		ct.caller = who.call.Load
	} else {
		// The shared session is the gateway's own: a credential taken
		// from the caller has no caller here, and is left out.
		ct.creds = nil
		for _, cr := range c.set.built.Credentials {
			if _, ok := cr.(upstream.CallerDependent); !ok {
				ct.creds = append(ct.creds, cr)
			}
		}
	}
	hc := upstream.NewClient(&boundedBodies{base: ct, max: c.set.maxResponse, log: c.log.With(zap.String("server", c.set.url))})
	var tr transport.Interface
	var err error
	if kind == TransportSSE {
		tr, err = transport.NewSSE(c.set.url, transport.WithHTTPClient(hc), transport.WithSSELogger(c.slog()))
	} else {
		// The GET stream brings the server's notifications (tools/list_changed).
		tr, err = transport.NewStreamableHTTP(c.set.url, transport.WithHTTPBasicClient(hc), transport.WithContinuousListening(),
			transport.WithHTTPLogger(c.slog()))
	}
	if err != nil {
		return nil, err
	}
	s := &session{tr: tr, start: time.Now(), caller: who != nil}
	// The SSE stream lives as long as the session, not the handshake.
	if err := tr.Start(c.ctx); err != nil {
		return nil, err
	}
	if err := s.initialize(ctx, c); err != nil {
		s.close()
		return nil, err
	}
	return s, nil
}

// maxIdlePerHost is how many idle connections to an HTTP server the
// source keeps: concurrent calls are concurrent POSTs, and
// http.DefaultTransport keeps 2, so that most calls would open a new
// connection.
const maxIdlePerHost = 64

// httpTransport is the connection's HTTP transport, made once and kept
// across reconnects.
func (c *conn) httpTransport() http.RoundTripper {
	c.trOnce.Do(func() {
		t := http.DefaultTransport.(*http.Transport).Clone()
		t.MaxIdleConnsPerHost = maxIdlePerHost
		c.tr = t
	})
	return c.tr
}

// forgetIdleConnections closes the idle connections to an HTTP server
// after a request to it failed in transport. Those were opened before the
// failure: when the server went away they are closed on its side, and the
// next request could take one before the transport has read its EOF, and
// fail although the server is back. Requests in flight are not touched.
func (c *conn) forgetIdleConnections() {
	if c.tr != nil { // set when the first session connected, as for Cleanup
		c.tr.CloseIdleConnections()
	}
}

// slog is the source's log for mcp-go's transports.
func (c *conn) slog() *slog.Logger {
	return slog.New(zapslog.NewHandler(c.log.With(zap.String("server", c.set.describe())).Core()))
}

// initialize runs the handshake, listens for tools/list_changed and
// forwards what concerns the callers (relay).
func (s *session) initialize(ctx context.Context, c *conn) error {
	s.relay = newRelay(c.log.With(zap.String("server", c.set.describe())), c.set.perCaller)
	s.client = client.NewClient(s.tr, client.WithLegacyProtocolOnly())
	if err := s.client.Start(ctx); err != nil {
		return err
	}
	// The server's requests reach the relay as they came, not through
	// the client's typed handlers, so that they are passed on verbatim.
	if bi, ok := s.tr.(transport.BidirectionalInterface); ok {
		bi.SetRequestHandler(s.relay.serve)
	}
	s.client.OnNotification(func(n mcp.JSONRPCNotification) {
		if n.Method == string(mcp.MethodNotificationToolsListChanged) {
			// Listed on the shared session, whichever session heard it.
			c.relistTools.Trigger()
			return
		}
		if n.Method == string(mcp.MethodNotificationResourceUpdated) {
			c.resourceUpdated(n)
			return
		}
		if !s.caller {
			c.catalogChanged(n)
		}
		s.relay.notify(n)
	})
	req := mcp.InitializeRequest{}
	req.Params.ClientInfo = mcp.Implementation{Name: "edgemcp", Version: "1"}
	req.Params.Capabilities = forwardedCapabilities(c.set.perCaller)
	res, err := s.client.Initialize(ctx, req)
	if err != nil {
		return err
	}
	s.instructions = res.Instructions
	s.tasks = taskCapability(res.Capabilities.Tasks)
	return nil
}

// exited reports whether the child of a stdio session is gone.
func (s *session) exited() bool {
	return s.cmd != nil && s.cmd.Process != nil && (s.broken.Load() || hasExited(s.cmd.Process.Pid))
}

// close ends the session; a stdio child is stopped (stopChild).
func (s *session) close() {
	s.closed.Do(func() {
		if s.cmd != nil && s.cmd.Process != nil {
			s.stopChild()
		} else if s.tr != nil {
			_ = s.tr.Close()
		}
	})
}

// request sends one request and returns its raw result. sent is false
// when the request surely never reached the server (the child is not
// running, the connection was refused, the server forgot the session).
func (s *session) request(ctx context.Context, method string, params any) (result json.RawMessage, sent bool, err error) {
	if s.exited() {
		return nil, false, errors.New("the MCP server process is not running")
	}
	id := mcp.NewRequestId("edgemcp-" + strconv.FormatInt(s.nextID.Add(1), 10))
	written := s.written.Load()
	res, err := s.tr.SendRequest(ctx, transport.JSONRPCRequest{
		JSONRPC: mcp.JSONRPC_VERSION,
		ID:      id,
		Method:  method,
		Params:  params,
	})
	if err != nil {
		var tooBig *http.MaxBytesError
		if errors.As(err, &tooBig) {
			return nil, true, tooLarge(tooBig.Limit)
		}
		if errors.Is(err, transport.ErrTransportClosed) {
			s.broken.Store(true)
		}
		sent := !notSent(err)
		if s.cmd != nil && errors.Is(err, transport.ErrTransportClosed) && s.written.Load() == written {
			sent = false // the child's output ended before anything was written
		}
		if sent && ctx.Err() != nil {
			s.cancelUpstream(id, ctx.Err())
		}
		return nil, sent, err
	}
	if res.Error != nil {
		e := &rpcError{code: res.Error.Code, message: res.Error.Message}
		if res.Error.Data != nil {
			e.data, _ = json.Marshal(res.Error.Data)
		}
		return nil, true, e
	}
	return res.Result, true, nil
}

// notSent reports errors that show the request never reached the server.
func notSent(err error) bool {
	return errors.Is(err, syscall.ECONNREFUSED) || errors.Is(err, syscall.EPIPE) ||
		errors.Is(err, transport.ErrSessionTerminated) ||
		strings.Contains(err.Error(), "failed to write request")
}

// rpcError is the server's JSON-RPC error: its answer to this request,
// which the caller gets as the server sent it (upstreamError).
type rpcError struct {
	code    int
	message string
	data    json.RawMessage
}

func (e *rpcError) Error() string       { return fmt.Sprintf("MCP server error %d: %s", e.code, e.message) }
func (e *rpcError) SafeMessage() string { return e.message }

// upstreamError is e as the caller gets it: the server's code, message and
// data, unchanged (docs/caddyfile.md, Errors: the one exception to the stage prefix).
func (e *rpcError) upstreamError() *pipeline.Error {
	return &pipeline.Error{Code: e.code, Stage: pipeline.StageExecution, Message: e.message, Data: e.data, Upstream: true, Cause: e}
}

// listTools asks for every page of tools/list.
func (s *session) listTools(ctx context.Context) ([]listedTool, error) {
	ctx, cancel := context.WithTimeout(ctx, listTimeout)
	defer cancel()
	var all []listedTool
	seen := map[string]bool{}
	cursor := ""
	for {
		var params any
		if cursor != "" {
			params = map[string]any{"cursor": cursor}
		}
		raw, _, err := s.request(ctx, string(mcp.MethodToolsList), params)
		if err != nil {
			return nil, err
		}
		var page struct {
			Tools      []listedTool `json:"tools"`
			NextCursor string       `json:"nextCursor"`
		}
		if err := json.Unmarshal(raw, &page); err != nil {
			return nil, fmt.Errorf("bad tools/list result: %v", err)
		}
		all = append(all, page.Tools...)
		if page.NextCursor == "" {
			return all, nil
		}
		if seen[page.NextCursor] {
			return nil, fmt.Errorf("tools/list returned cursor %q twice", page.NextCursor)
		}
		seen[page.NextCursor] = true
		cursor = page.NextCursor
	}
}

// sessionSource gives the session a call goes on: the connection's shared
// one, or its caller's (callers.session).
type sessionSource interface {
	ensure(ctx context.Context) (*session, error)
	drop(s *session)
}

// sessionFor is where a request of call goes: the connection's session,
// or with session per_caller the caller's own (release ends its use).
func (c *conn) sessionFor(ctx context.Context, call *pipeline.Call) (sessionSource, func(), error) {
	if c.callers == nil {
		return c, func() {}, nil
	}
	if call == nil || call.Identity == nil {
		return nil, nil, errNoCaller
	}
	if err := c.checkCredentials(ctx, call); err != nil {
		return nil, nil, err
	}
	e, err := c.callers.acquire(call)
	if err != nil {
		return nil, nil, err
	}
	return callerSource{c.callers, e}, func() { c.callers.release(e) }, nil
}

// call forwards a tools/call. A request that never reached the server
// (the child had exited, the connection was refused) is sent again once
// on a new session; one that was sent is never repeated.
func (c *conn) call(ctx context.Context, call *pipeline.Call, name string, args map[string]any) (json.RawMessage, error) {
	if d := c.set.built.Timeout; d > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, d)
		defer cancel()
	}
	src, release, err := c.sessionFor(ctx, call)
	if err != nil {
		return nil, err
	}
	defer release()
	ctx = context.WithValue(ctx, callerCall{}, call)
	if args == nil {
		args = map[string]any{}
	}
	params := map[string]any{"name": name, "arguments": args}
	if call != nil && call.Task != nil {
		params["task"] = taskParams(call.Task)
	}
	perCaller := c.callers != nil
	for attempt := 0; ; attempt++ {
		s, err := src.ensure(ctx)
		if err != nil {
			return nil, unreachable(err, perCaller)
		}
		raw, sent, err := s.forward(ctx, params)
		if err == nil {
			return raw, nil
		}
		if answer := serverAnswer(err, perCaller); answer != nil {
			return nil, answer
		}
		c.forgetIdleConnections()
		if !sent && attempt == 0 && ctx.Err() == nil {
			c.log.Debug("MCP request did not reach the server: reconnecting and sending it again",
				zap.String("server", c.set.describe()), zap.Error(err))
			src.drop(s)
			continue
		}
		return nil, transportFailure(ctx, err, "the connection to the MCP server failed during the call")
	}
}

// unreachable is the error of a request for which no session could be
// had: the caller's refused credential (session per_caller), else the
// server is not reachable.
func unreachable(err error, perCaller bool) error {
	if refused := callerRefused(err); refused != nil && perCaller {
		return refused
	}
	return upstream.Failed("the MCP server is not reachable", err)
}

// serverAnswer is the error of a failed request that the server itself
// gave, passed on as it is: the caller's refused credential (session
// per_caller) or the server's JSON-RPC error; nil for a transport failure.
func serverAnswer(err error, perCaller bool) error {
	if refused := callerRefused(err); refused != nil && perCaller {
		return refused
	}
	var rpc *rpcError
	if errors.As(err, &rpc) {
		return rpc.upstreamError()
	}
	return nil
}

// transportFailure is the error of a request the server did not answer:
// the deadline passed, or broken says what broke.
func transportFailure(ctx context.Context, err error, broken string) error {
	if ctx.Err() != nil {
		return upstream.Failed("the MCP server did not answer in time", err)
	}
	return upstream.Failed(broken, err)
}

// relist fetches the tools again, on the shared session, after the server
// said they changed.
func (c *conn) relist() {
	s := c.current()
	if s == nil {
		return // the next connect lists them
	}
	tools, err := s.listTools(c.ctx)
	if err != nil {
		c.log.Warn("MCP server's tools/list failed after tools/list_changed", zap.String("server", c.set.describe()), zap.Error(err))
		return
	}
	c.publish(s, func() { c.tools = tools })
}

// publish applies a listing fetched on s (under c.mu), unless s is no
// longer the connection's session, and tells the gateway it changed.
func (c *conn) publish(s *session, apply func()) {
	c.mu.Lock()
	if c.sess != s {
		c.mu.Unlock()
		return
	}
	apply()
	c.vers++
	c.mu.Unlock()
	c.changed()
}

// listedTool is one tool as the server listed it: its whole entry stays
// raw (raw), published as it is under the gateway's name, and so do its
// schemas.
type listedTool struct {
	Name         string          `json:"name"`
	Title        string          `json:"title"`
	Description  string          `json:"description"`
	InputSchema  json.RawMessage `json:"inputSchema"`
	OutputSchema json.RawMessage `json:"outputSchema"`
	Annotations  struct {
		Title       string `json:"title"`
		ReadOnly    *bool  `json:"readOnlyHint"`
		Destructive *bool  `json:"destructiveHint"`
		Idempotent  *bool  `json:"idempotentHint"`
		OpenWorld   *bool  `json:"openWorldHint"`
	} `json:"annotations"`
	raw json.RawMessage
}

// UnmarshalJSON keeps the entry's text, without white space: the gateway
// writes it into SSE events, where a line break would end the data.
func (lt *listedTool) UnmarshalJSON(b []byte) error {
	var compact bytes.Buffer
	if err := json.Compact(&compact, b); err != nil {
		return err
	}
	type fields listedTool
	if err := json.Unmarshal(compact.Bytes(), (*fields)(lt)); err != nil {
		return err
	}
	lt.raw = compact.Bytes()
	return nil
}

// tool is lt as a gateway tool in namespace, calling through c.
func (lt listedTool) tool(namespace string, c *conn) *pipeline.Tool {
	name := lt.Name
	t := &pipeline.Tool{
		Name:         pipeline.ToolName(namespace, name),
		Original:     name,
		Title:        lt.Title,
		Description:  lt.Description,
		InputSchema:  lt.InputSchema,
		OutputSchema: lt.OutputSchema,
		Annotations: pipeline.Annotations{ReadOnly: lt.Annotations.ReadOnly, Destructive: lt.Annotations.Destructive,
			Idempotent: lt.Annotations.Idempotent, OpenWorld: lt.Annotations.OpenWorld},
		Listing: lt.raw,
		// Any upstream tool may send progress, log messages or requests
		// to its client while it runs (relay.serve): it needs the caller's
		// MCP session.
		Interactive: true,
		Executor: pipeline.ExecutorFunc(func(ctx context.Context, call *pipeline.Call) (*pipeline.Result, error) {
			raw, err := c.call(ctx, call, name, call.Inputs)
			if err != nil {
				return nil, err
			}
			return verbatimResult(raw)
		}),
	}
	if c.set.perCaller {
		// The call goes on the caller's own session: the gateway refuses
		// to serve the tool without an auth provider to verify who that is.
		t.FromIdentity = []string{"session per_caller"}
	}
	if t.Title == "" {
		t.Title = lt.Annotations.Title
	}
	if len(t.InputSchema) == 0 || bytes.Equal(t.InputSchema, []byte("null")) {
		t.InputSchema = json.RawMessage(`{"type":"object"}`)
	}
	if bytes.Equal(t.OutputSchema, []byte("null")) {
		t.OutputSchema = nil
	}
	if t.Name != name {
		t.Aliases = []string{name}
	}
	c.passTasks(t, lt)
	return t
}

// verbatimResult is a tools/call result as the server sent it, marked
// pipeline.Result.Verbatim: on one line (JSON allows a line break only as
// white space between tokens, which compacting drops; most servers write
// none, and their bytes are kept). A result that is not an object is left
// for the gateway to refuse when it decodes it.
func verbatimResult(raw json.RawMessage) (*pipeline.Result, error) {
	if len(raw) == 0 || raw[0] != '{' {
		return &pipeline.Result{Native: raw}, nil
	}
	if bytes.IndexByte(raw, '\n') >= 0 || bytes.IndexByte(raw, '\r') >= 0 {
		var one bytes.Buffer
		if err := json.Compact(&one, raw); err != nil {
			return nil, upstream.Failed("the MCP server sent an invalid result", err)
		}
		raw = one.Bytes()
	}
	return &pipeline.Result{Native: raw, Verbatim: true}, nil
}

// credentialTransport adds the source's credentials and headers to every
// request of its HTTP session.
type credentialTransport struct {
	base  http.RoundTripper
	creds []upstream.Credential
	// caller is the latest call of a per-caller session's caller, whose
	// token and identity the caller-dependent credentials of the session's
	// own requests take; a call's requests take its own (callOf). Nil on
	// the shared session.
	caller func() *pipeline.Call
}

func (t *credentialTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	if len(t.creds) == 0 {
		return t.base.RoundTrip(req) // nothing to add: no copy to make
	}
	req = req.Clone(req.Context())
	var call *pipeline.Call
	if t.caller != nil {
		if call = callOf(req.Context()); call == nil {
			call = t.caller()
		}
	}
	for _, c := range t.creds {
		if err := c.Apply(req.Context(), req, call); err != nil {
			return nil, err
		}
	}
	return t.base.RoundTrip(req)
}

// lineLogger writes a child's stderr to the log, a line an entry.
type lineLogger struct {
	log  *zap.Logger
	mu   sync.Mutex
	part []byte
}

func (l *lineLogger) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.part = append(l.part, p...)
	for {
		i := bytes.IndexByte(l.part, '\n')
		if i < 0 {
			break
		}
		if line := strings.TrimRight(string(l.part[:i]), "\r"); line != "" {
			l.log.Info("MCP server stderr", zap.String("line", line))
		}
		l.part = l.part[i+1:]
	}
	if len(l.part) > 4096 { // a line without end: log what came
		l.log.Info("MCP server stderr", zap.String("line", string(l.part)))
		l.part = nil
	}
	return len(p), nil
}
