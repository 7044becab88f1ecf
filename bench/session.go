package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"sync/atomic"

	"github.com/mark3labs/mcp-go/mcp"
)

// session is a minimal streamable-HTTP MCP client: initialize, then
// tools/call POSTs carrying the session id and protocol version.
type session struct {
	url, id, version string
	client           *http.Client
	seq              atomic.Int64
}

var transport = &http.Transport{MaxIdleConnsPerHost: overloadCap}

func openSession(ctx context.Context, url, version string) (*session, error) {
	s := &session{url: url, version: version, client: &http.Client{Transport: transport}}
	if mcp.IsModernProtocol(version) {
		return s, nil // no handshake: each request says who the client is (sessionlessRequest)
	}
	body := `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"` + version +
		`","capabilities":{},"clientInfo":{"name":"edgemcp-bench","version":"1"}}}`
	res, hdr, err := s.post(ctx, body)
	if err != nil {
		return nil, err
	}
	if !bytes.Contains(res, []byte(`"result"`)) {
		return nil, fmt.Errorf("initialize: %s", res)
	}
	s.id = hdr.Get("Mcp-Session-Id")
	_, _, err = s.post(ctx, `{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	return s, err
}

func (s *session) callGetUser(ctx context.Context, id int64) error {
	n := s.seq.Add(1)
	body := `{"jsonrpc":"2.0","id":` + strconv.FormatInt(n, 10) +
		`,"method":"tools/call","params":{"name":"get-user","arguments":{"id":` + strconv.FormatInt(id, 10) + `}}}`
	res, _, err := s.post(ctx, body)
	if err != nil {
		return err
	}
	if !bytes.Contains(res, []byte(`"content"`)) || bytes.Contains(res, []byte(`"isError":true`)) {
		return fmt.Errorf("tools/call: %.200s", res)
	}
	return nil
}

func (s *session) post(ctx context.Context, body string) ([]byte, http.Header, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, s.url, bytes.NewBufferString(body))
	if err != nil {
		return nil, nil, err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	if mcp.IsModernProtocol(s.version) {
		if req, err = s.sessionlessRequest(req, body); err != nil {
			return nil, nil, err
		}
	}
	if s.id != "" {
		req.Header.Set("Mcp-Session-Id", s.id)
		req.Header.Set("Mcp-Protocol-Version", s.version)
	}
	res, err := s.client.Do(req)
	if err != nil {
		return nil, nil, err
	}
	defer res.Body.Close()
	out, err := io.ReadAll(res.Body)
	if err == nil && res.StatusCode/100 != 2 {
		err = fmt.Errorf("HTTP %d: %.200s", res.StatusCode, out)
	}
	return out, res.Header, err
}

// sessionlessMeta is what a request on protocol 2026-07-28 or later carries in
// its params' _meta instead of an initialize handshake.
const sessionlessMeta = `"_meta":{"io.modelcontextprotocol/clientCapabilities":{},"io.modelcontextprotocol/clientInfo":{"name":"edgemcp-bench","version":"1"},"io.modelcontextprotocol/protocolVersion":`

// sessionlessRequest turns req (body) into a request of a protocol without
// sessions (2026-07-28): the version and the client in _meta, and the
// standard headers (Mcp-Protocol-Version, Mcp-Method, Mcp-Name) that must
// agree with the body.
func (s *session) sessionlessRequest(req *http.Request, body string) (*http.Request, error) {
	var msg struct {
		Method mcp.MCPMethod   `json:"method"`
		Params json.RawMessage `json:"params"`
	}
	if err := json.Unmarshal([]byte(body), &msg); err != nil {
		return nil, err
	}
	meta := sessionlessMeta + strconv.Quote(s.version) + "}"
	if len(msg.Params) == 0 {
		body = body[:len(body)-1] + `,"params":{` + meta + "}}"
	} else {
		i := bytes.Index([]byte(body), []byte(`"params":{`)) + len(`"params":{`)
		sep := ","
		if body[i] == '}' {
			sep = ""
		}
		body = body[:i] + meta + sep + body[i:]
	}
	out, err := http.NewRequestWithContext(req.Context(), req.Method, req.URL.String(), bytes.NewBufferString(body))
	if err != nil {
		return nil, err
	}
	out.Header = req.Header
	out.Header.Set("Mcp-Protocol-Version", s.version)
	for k, v := range mcp.StandardHeaders(s.version, msg.Method, msg.Params) {
		out.Header.Set(k, v)
	}
	return out, nil
}
