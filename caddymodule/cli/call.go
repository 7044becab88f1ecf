package cli

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/client/transport"
	"github.com/mark3labs/mcp-go/mcp"
	"github.com/spf13/cobra"

	"github.com/edgemcp/edgemcp/internal/netguard"
)

// `caddy mcp call <url> <tool> [key=value ...]` is a small MCP client for
// operators: it initializes a session (mcp-go's streamable HTTP client),
// reads the tool's input schema from tools/list to type the values, calls
// the tool and prints the result. A JSON-RPC error is printed as its code
// and message (mcp-go's client keeps only the message of codes it does not
// know, such as -32000, so the transport records the error object).

const maxCallResponse = 64 << 20 // bytes read from one response

func callCommand() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "call <url> <tool> [key=value ...] [--header 'Name: value' ...]",
		Short: "Calls one tool on a running MCP endpoint and prints the result",
		Long: `Calls one tool on a running MCP endpoint (streamable HTTP) and prints the result.

Arguments are key=value pairs. Values are typed from the tool's input schema
(tools/list): integers, numbers and booleans are parsed, arrays and objects
are read as JSON, strings are taken verbatim. For inputs the schema does not
describe, a value that is valid JSON is sent as JSON, anything else as a
string. On a JSON-RPC error the code and message are printed and the exit
status is 1; so it is for a tool result marked isError.`,
		Args: cobra.MinimumNArgs(2),
	}
	cmd.Flags().StringArrayP("header", "H", nil, "HTTP header sent with every request, 'Name: value' (repeatable)")
	cmd.Flags().Duration("timeout", 30*time.Second, "Time limit for the whole exchange")
	cmd.Flags().Bool("json", false, "Print the complete MCP result as JSON")
	cmd.RunE = func(cmd *cobra.Command, args []string) error {
		headers, _ := cmd.Flags().GetStringArray("header")
		timeout, _ := cmd.Flags().GetDuration("timeout")
		asJSON, _ := cmd.Flags().GetBool("json")
		hdr, err := parseHeaders(headers)
		if err != nil {
			return err
		}
		pairs, err := parsePairs(args[2:])
		if err != nil {
			return err
		}
		ctx, cancel := context.WithTimeout(cmd.Context(), timeout)
		defer cancel()
		res, err := callTool(ctx, args[0], args[1], pairs, hdr)
		if err != nil {
			return failed(cmd, err)
		}
		if err := printResult(cmd.OutOrStdout(), res, asJSON); err != nil {
			return failed(cmd, err)
		}
		if res.IsError {
			return failed(cmd, errors.New("the tool reported an error (isError)"))
		}
		return nil
	}
	return cmd
}

// pair is one key=value argument, value not yet typed.
type pair struct{ key, value string }

func parsePairs(args []string) ([]pair, error) {
	seen := map[string]bool{}
	out := make([]pair, 0, len(args))
	for _, a := range args {
		k, v, ok := strings.Cut(a, "=")
		if !ok || k == "" {
			return nil, fmt.Errorf("argument %q: want key=value", a)
		}
		if seen[k] {
			return nil, fmt.Errorf("argument %q given twice", k)
		}
		seen[k] = true
		out = append(out, pair{k, v})
	}
	return out, nil
}

func parseHeaders(lines []string) (map[string]string, error) {
	out := map[string]string{}
	for _, l := range lines {
		k, v, ok := strings.Cut(l, ":")
		k = strings.TrimSpace(k)
		if !ok || k == "" || strings.ContainsAny(k, " \t") {
			return nil, fmt.Errorf("header %q: want 'Name: value'", l)
		}
		out[http.CanonicalHeaderKey(k)] = strings.TrimSpace(v)
	}
	return out, nil
}

// rpcError is a JSON-RPC error as the server sent it.
type rpcError struct {
	Code    int    `json:"code"`
	Message string `json:"message"`
}

func (e *rpcError) Error() string { return fmt.Sprintf("error %d: %s", e.Code, e.Message) }

// callTool runs initialize, tools/list and tools/call against url.
func callTool(ctx context.Context, url, tool string, pairs []pair, hdr map[string]string) (*mcp.CallToolResult, error) {
	rec := &errorRecorder{base: http.DefaultTransport}
	c, err := client.NewStreamableHttpClient(url,
		transport.WithHTTPHeaders(hdr),
		transport.WithHTTPBasicClient(&http.Client{Transport: rec, CheckRedirect: headersStayOnOrigin}))
	if err != nil {
		return nil, err
	}
	defer c.Close()
	if err := c.Start(ctx); err != nil {
		return nil, fmt.Errorf("connecting to %s: %v", url, err)
	}
	init := mcp.InitializeRequest{}
	init.Params.ProtocolVersion = mcp.LATEST_PROTOCOL_VERSION
	init.Params.ClientInfo = mcp.Implementation{Name: "caddy-mcp-call", Version: clientVersion}
	if _, err := c.Initialize(ctx, init); err != nil {
		return nil, rec.explain("initialize", err)
	}
	schema, err := inputSchema(ctx, c, tool)
	if err != nil {
		return nil, rec.explain("tools/list", err)
	}
	args := make(map[string]any, len(pairs))
	for _, p := range pairs {
		args[p.key] = typedValue(p.value, schema[p.key])
	}
	req := mcp.CallToolRequest{}
	req.Params.Name = tool
	req.Params.Arguments = args
	rec.reset()
	res, err := c.CallTool(ctx, req)
	if err != nil {
		return nil, rec.explain("tools/call", err)
	}
	return res, nil
}

// headersStayOnOrigin follows a redirect only within the endpoint's
// origin: Go's client re-sends the --header values with a redirect, all of
// them to another port of the same host and all but Authorization and
// Cookie to another host, and they are often the gateway's key.
func headersStayOnOrigin(req *http.Request, via []*http.Request) error {
	if first := via[0].URL; !netguard.SameOrigin(req.URL, first) {
		return fmt.Errorf("redirect to %s://%s not followed: the headers are for %s only", req.URL.Scheme, req.URL.Host, first.Host)
	}
	return netguard.StayOnOrigin(req, via)
}

// propSchema is the part of an input's JSON Schema used to type a value.
type propSchema struct {
	Type any `json:"type"` // a name, or a list of names
}

// inputSchema returns the properties of the tool's input schema; empty when
// the tool is not listed (the call then reports the server's error).
func inputSchema(ctx context.Context, c *client.Client, tool string) (map[string]propSchema, error) {
	req := mcp.ListToolsRequest{}
	for range 100 { // pages; a bound against a server that never ends
		page, err := c.ListTools(ctx, req)
		if err != nil {
			return nil, err
		}
		for _, t := range page.Tools {
			if t.Name != tool {
				continue
			}
			raw := t.RawInputSchema
			if len(raw) == 0 {
				raw, _ = json.Marshal(t.InputSchema)
			}
			var s struct {
				Properties map[string]propSchema `json:"properties"`
			}
			_ = json.Unmarshal(raw, &s)
			return s.Properties, nil
		}
		if page.NextCursor == "" {
			break
		}
		req.Params.Cursor = page.NextCursor
	}
	return nil, nil
}

// typedValue types a command-line value by the input's schema type: strings
// verbatim; anything else as JSON when it parses (numbers stay exact),
// else as the string, so the server's validation explains the mistake.
func typedValue(raw string, p propSchema) any {
	types := map[string]bool{}
	switch t := p.Type.(type) {
	case string:
		types[t] = true
	case []any:
		for _, x := range t {
			if s, ok := x.(string); ok {
				types[s] = true
			}
		}
	}
	if types["string"] {
		return raw
	}
	dec := json.NewDecoder(strings.NewReader(raw))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil || dec.More() {
		return raw
	}
	return v
}

// printResult prints the content blocks (JSON text indented), or the whole
// result as JSON.
func printResult(out io.Writer, res *mcp.CallToolResult, asJSON bool) error {
	if asJSON {
		b, err := json.MarshalIndent(res, "", "  ")
		if err != nil {
			return err
		}
		_, err = fmt.Fprintf(out, "%s\n", b)
		return err
	}
	for _, c := range res.Content {
		switch x := c.(type) {
		case mcp.TextContent:
			var buf bytes.Buffer
			if json.Indent(&buf, []byte(x.Text), "", "  ") == nil {
				fmt.Fprintln(out, buf.String())
			} else {
				fmt.Fprintln(out, x.Text)
			}
		case mcp.ImageContent:
			fmt.Fprintf(out, "[image %s, %d bytes of base64]\n", x.MIMEType, len(x.Data))
		case mcp.AudioContent:
			fmt.Fprintf(out, "[audio %s, %d bytes of base64]\n", x.MIMEType, len(x.Data))
		default:
			b, _ := json.MarshalIndent(c, "", "  ")
			fmt.Fprintf(out, "%s\n", b)
		}
	}
	if len(res.Content) == 0 && res.StructuredContent != nil {
		b, _ := json.MarshalIndent(res.StructuredContent, "", "  ")
		fmt.Fprintf(out, "%s\n", b)
	}
	return nil
}

// errorRecorder is the HTTP transport of the client: it reads each POST
// response (bounded) and keeps the last JSON-RPC error object in it, in a
// JSON body or an SSE event, so the exact code can be printed.
type errorRecorder struct {
	base    http.RoundTripper
	mu      sync.Mutex
	last    *rpcError
	httpErr string // status and body excerpt of the last non-2xx response
}

func (r *errorRecorder) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := r.base.RoundTrip(req)
	if err != nil || req.Method != http.MethodPost {
		return resp, err
	}
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxCallResponse+1))
	resp.Body.Close()
	if err != nil {
		return nil, err
	}
	if len(body) > maxCallResponse {
		return nil, fmt.Errorf("response larger than %d bytes", maxCallResponse)
	}
	r.mu.Lock()
	if e := findRPCError(body); e != nil {
		r.last = e
	}
	if resp.StatusCode/100 != 2 && resp.StatusCode/100 != 3 { // a redirect not followed says why itself
		r.httpErr = httpFailure(resp, body)
	}
	r.mu.Unlock()
	resp.Body = io.NopCloser(bytes.NewReader(body))
	return resp, nil
}

func (r *errorRecorder) reset() {
	r.mu.Lock()
	r.last, r.httpErr = nil, ""
	r.mu.Unlock()
}

// explain turns a client error into the server's JSON-RPC error when one
// was recorded, else names the step that failed.
func (r *errorRecorder) explain(step string, err error) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.last != nil {
		return r.last
	}
	if r.httpErr != "" {
		return fmt.Errorf("%s: %s", step, r.httpErr)
	}
	return fmt.Errorf("%s: %v", step, err)
}

// httpFailure describes a non-2xx answer: status, the challenge of a 401,
// and the start of the body on one line.
func httpFailure(resp *http.Response, body []byte) string {
	msg := "HTTP " + resp.Status
	if c := resp.Header.Get("WWW-Authenticate"); c != "" {
		msg += " (WWW-Authenticate: " + c + ")"
	}
	excerpt := strings.Join(strings.Fields(string(body)), " ")
	if len(excerpt) > 200 {
		excerpt = excerpt[:200] + "..."
	}
	if excerpt != "" {
		msg += ": " + excerpt
	}
	return msg
}

// findRPCError finds the error object of a JSON-RPC response in a JSON body
// or in the data lines of an event stream.
func findRPCError(body []byte) *rpcError {
	var found *rpcError
	try := func(p []byte) {
		var msg struct {
			Error *rpcError `json:"error"`
		}
		if json.Unmarshal(bytes.TrimSpace(p), &msg) == nil && msg.Error != nil {
			found = msg.Error
		}
	}
	trimmed := bytes.TrimSpace(body)
	if len(trimmed) > 0 && trimmed[0] == '{' {
		try(trimmed)
		return found
	}
	sc := bufio.NewScanner(bytes.NewReader(body))
	sc.Buffer(make([]byte, 64<<10), maxCallResponse)
	for sc.Scan() {
		if data, ok := bytes.CutPrefix(sc.Bytes(), []byte("data:")); ok {
			try(data)
		}
	}
	return found
}
