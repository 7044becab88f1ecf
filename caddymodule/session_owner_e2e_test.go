package caddymodule

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/client/transport"
	"github.com/mark3labs/mcp-go/mcp"

	"github.com/edgemcp/edgemcp/caddymodule/session"
	"github.com/edgemcp/edgemcp/caddymodule/session/sessiontest"
)

// Sessions belong to the caller they were issued to (docs/security.md,
// "Session ids"): with default_auth, the endpoint's verified identity.

// ownedApprovalCaddyfile is approvalCaddyfile behind a JWT default_auth.
func ownedApprovalCaddyfile(t *testing.T, idp *testIdP) string {
	return approvalCaddyfile(t, fmt.Sprintf(`auth sso jwt {
			jwks_url %s
			issuer %s
			audience %s
		}
		default_auth sso`, idp.jwks.URL, authIssuer, authAudience))
}

func bearer(token string) map[string]string {
	return map[string]string{"Authorization": "Bearer " + token}
}

// sessionHeaders are a session request's headers for a caller.
func sessionHeaders(token, session string) map[string]string {
	return map[string]string{"Authorization": "Bearer " + token, "Mcp-Session-Id": session, "Mcp-Protocol-Version": "2025-11-25"}
}

// initOwned opens a session for the caller of token, declaring
// elicitation.
func initOwned(t *testing.T, url, token string) string {
	t.Helper()
	body := strings.Replace(initializeBody, `"capabilities":{}`, `"capabilities":{"elicitation":{}}`, 1)
	body = strings.Replace(body, "2025-06-18", "2025-11-25", 1)
	res, out := httpDo(t, http.MethodPost, url, bearer(token), body)
	id := res.Header.Get("Mcp-Session-Id")
	if res.StatusCode != http.StatusOK || id == "" {
		t.Fatalf("initialize: %d %s", res.StatusCode, out)
	}
	httpDo(t, http.MethodPost, url, sessionHeaders(token, id), `{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	return id
}

// statusOnly is httpDo's status and body.
func statusOnly(t *testing.T, method, url string, header map[string]string, body string) (int, string) {
	t.Helper()
	res, out := httpDo(t, method, url, header, body)
	return res.StatusCode, out
}

// A session id alice was given is, for bob, an id that does not exist:
// every method (a call the direct path would answer, one for mcp-go, the
// GET stream, DELETE, an answer to a server request) gets the answer a
// made-up id gets, and alice's session carries on.
func TestSessionBoundToCaller(t *testing.T) {
	idp := newTestIdP(t)
	g := startGateway(t, ownedApprovalCaddyfile(t, idp))
	alice := idp.token(t, "alice", "", nil, time.Hour)
	bob := idp.token(t, "bob", "", nil, time.Hour)
	aliceSession := initOwned(t, g.URL, alice)
	count := `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"count-notes","arguments":{}}}`
	if status, body := statusOnly(t, http.MethodPost, g.URL, sessionHeaders(alice, aliceSession), count); status != http.StatusOK || !strings.Contains(body, `\"n\":0`) {
		t.Fatalf("alice in her session: %d %s", status, body)
	}
	unknown := session.NewIDs([][]byte{testKey('u')}, nil).Generate(session.Owner{})
	for _, tt := range []struct {
		name, method, body string
	}{
		{"direct tools/call", http.MethodPost, count},
		{"tools/call with _meta (mcp-go)", http.MethodPost, `{"jsonrpc":"2.0","id":8,"method":"tools/call","params":{"name":"count-notes","arguments":{},"_meta":{"progressToken":1}}}`},
		{"tools/list", http.MethodPost, `{"jsonrpc":"2.0","id":9,"method":"tools/list"}`},
		{"an answer to a server request", http.MethodPost, `{"jsonrpc":"2.0","id":1,"result":{"action":"accept","content":{}}}`},
		{"GET stream", http.MethodGet, ""},
		{"DELETE", http.MethodDelete, ""},
	} {
		wantStatus, want := statusOnly(t, tt.method, g.URL, sessionHeaders(bob, unknown), tt.body)
		if wantStatus != http.StatusNotFound || want != "Invalid session ID\n" {
			t.Fatalf("%s with an id never issued: %d %q, want 404 Invalid session ID", tt.name, wantStatus, want)
		}
		if status, body := statusOnly(t, tt.method, g.URL, sessionHeaders(bob, aliceSession), tt.body); status != wantStatus || body != want {
			t.Errorf("bob's %s in alice's session: %d %q, want %d %q (as for an unknown id)", tt.name, status, body, wantStatus, want)
		}
	}
	if status, body := statusOnly(t, http.MethodPost, g.URL, sessionHeaders(alice, aliceSession), count); status != http.StatusOK {
		t.Errorf("alice's session after bob's tries: %d %s", status, body)
	}
	// Her id with no credentials at all is refused by default_auth first.
	if status, _ := statusOnly(t, http.MethodPost, g.URL, map[string]string{"Mcp-Session-Id": aliceSession}, count); status != http.StatusUnauthorized {
		t.Errorf("alice's id without a token: %d, want 401", status)
	}
}

// An ended session stays ended under every spelling of its id: the
// other spellings (the same bytes to a lenient base64 decoder) are ids
// the gateway never issued.
func TestEndedSessionOtherSpelling(t *testing.T) {
	g := startGateway(t, sessionCaddyfile(t, "SITE"))
	id := initSession(t, g.URL)
	if res, body := httpDo(t, http.MethodDelete, g.URL, map[string]string{"Mcp-Session-Id": id}, ""); res.StatusCode != http.StatusOK {
		t.Fatalf("DELETE: %d %s", res.StatusCode, body)
	}
	if status, body := callWith(t, g.URL, id); status != http.StatusNotFound {
		t.Fatalf("the ended id: %d %s", status, body)
	}
	served := 0
	for _, other := range sessiontest.OtherSpellings(id) {
		if status, body := callWith(t, g.URL, other); status != http.StatusNotFound || body != "Invalid session ID\n" {
			served++
			if served == 1 {
				t.Errorf("%q, another spelling of the ended %q: %d %q, want 404 Invalid session ID", other, id, status, body)
			}
		}
	}
	if served > 0 {
		t.Errorf("%d of %d other spellings of an ended id were served", served, len(sessiontest.OtherSpellings(id)))
	}
}

// blockingElicitor answers the gateway's question only when the test
// says so, telling the test when it has been asked.
type blockingElicitor struct {
	asked  chan struct{}
	answer chan mcp.ElicitationResponseAction
}

func (e *blockingElicitor) Elicit(ctx context.Context, req mcp.ElicitationRequest) (*mcp.ElicitationResult, error) {
	e.asked <- struct{}{}
	select {
	case a := <-e.answer:
		return &mcp.ElicitationResult{ElicitationResponse: mcp.ElicitationResponse{Action: a}}, nil
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// Bob, who has learnt alice's session id, cannot answer the approval
// question she is being asked: while she has not answered, his accepts,
// sent for every request id the gateway could have used, are refused, and
// her decline stands. The write never runs.
func TestApprovalAnswerFromAnotherCaller(t *testing.T) {
	idp := newTestIdP(t)
	g := startGateway(t, ownedApprovalCaddyfile(t, idp))
	alice := idp.token(t, "alice", "", nil, time.Hour)
	bob := idp.token(t, "bob", "", nil, time.Hour)

	trans, err := transport.NewStreamableHTTP(g.URL, transport.WithHTTPHeaders(bearer(alice)))
	if err != nil {
		t.Fatal(err)
	}
	e := &blockingElicitor{asked: make(chan struct{}, 1), answer: make(chan mcp.ElicitationResponseAction, 1)}
	c := client.NewClient(trans, client.WithElicitationHandler(e), client.WithLegacyProtocolOnly())
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := c.Start(ctx); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Close() })
	init := mcp.InitializeRequest{}
	init.Params.ProtocolVersion = "2025-11-25"
	init.Params.ClientInfo = mcp.Implementation{Name: "alice", Version: "1"}
	if _, err := c.Initialize(ctx, init); err != nil {
		t.Fatal(err)
	}
	aliceSession := trans.GetSessionId()

	done := make(chan error, 1)
	go func() {
		req := mcp.CallToolRequest{}
		req.Params.Name, req.Params.Arguments = "add-note", map[string]any{"body": "alice's note"}
		_, err := c.CallTool(ctx, req)
		done <- err
	}()
	select {
	case <-e.asked:
	case err := <-done:
		t.Fatalf("the call ended before alice was asked: %v", err)
	}
	delivered := 0
	for id := 1; id <= 200; id++ {
		answer := fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"result":{"action":"accept","content":{}}}`, id)
		if status, _ := statusOnly(t, http.MethodPost, g.URL, sessionHeaders(bob, aliceSession), answer); status == http.StatusAccepted {
			delivered++
		}
	}
	if delivered != 0 {
		t.Errorf("bob's answer was delivered into alice's session (%d times)", delivered)
	}
	e.answer <- mcp.ElicitationResponseActionDecline
	if err := <-done; err == nil || !strings.Contains(err.Error(), "approval: declined") {
		t.Errorf("alice's call: %v, want her decline", err)
	}
	raw := &rawSession{url: g.URL, version: "2025-11-25"}
	raw.session = initOwned(t, g.URL, alice)
	count := `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"count-notes","arguments":{}}}`
	if status, body := statusOnly(t, http.MethodPost, g.URL, sessionHeaders(alice, raw.session), count); status != http.StatusOK || !strings.Contains(body, `\"n\":0`) {
		t.Errorf("notes after alice declined: %d %s, want none", status, body)
	}
}

// sseMessages reads the JSON-RPC messages of an event stream as they come.
func sseMessages(res *http.Response) <-chan json.RawMessage {
	out := make(chan json.RawMessage, 16)
	go func() {
		defer close(out)
		sc := bufio.NewScanner(res.Body)
		sc.Buffer(make([]byte, 1<<20), 1<<20)
		for sc.Scan() {
			if data, ok := strings.CutPrefix(sc.Text(), "data: "); ok {
				out <- json.RawMessage(data)
			}
		}
	}()
	return out
}

// The ids of the requests the gateway sends a client (here the approval
// question) cannot be guessed, even by the session's owner: a guessed one
// (any number, the real one with its check altered) is not delivered;
// the id as sent is.
func TestServerRequestIDsUnguessable(t *testing.T) {
	idp := newTestIdP(t)
	g := startGateway(t, ownedApprovalCaddyfile(t, idp))
	alice := idp.token(t, "alice", "", nil, time.Hour)
	session := initOwned(t, g.URL, alice)

	req, _ := http.NewRequest(http.MethodPost, g.URL, strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"add-note","arguments":{"body":"x"}}}`))
	for k, v := range sessionHeaders(alice, session) {
		req.Header.Set(k, v)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	msgs := sseMessages(res)
	var question struct {
		ID     json.RawMessage `json:"id"`
		Method string          `json:"method"`
	}
	if err := json.Unmarshal(<-msgs, &question); err != nil || question.Method != "elicitation/create" {
		t.Fatalf("first message: %v %+v", err, question)
	}
	var id any
	_ = json.Unmarshal(question.ID, &id)
	s, isString := id.(string)
	if !isString || len(s) < 20 {
		t.Errorf("request id %s: want a string that carries a check", question.ID)
	}
	answer := func(id string) int {
		status, _ := statusOnly(t, http.MethodPost, g.URL, sessionHeaders(alice, session),
			fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"result":{"action":"decline"}}`, id))
		return status
	}
	var guesses []string
	for n := range 200 {
		guesses = append(guesses, fmt.Sprint(n))
	}
	if isString {
		b := []byte(s)
		b[len(b)-2] ^= 1
		guesses = append(guesses, fmt.Sprintf("%q", b))
	}
	for _, guess := range guesses {
		if status := answer(guess); status == http.StatusAccepted {
			t.Fatalf("a guessed id %s was delivered (the real one is %s)", guess, question.ID)
		}
	}
	if status := answer(string(question.ID)); status != http.StatusAccepted {
		t.Fatalf("the real id: %d", status)
	}
	var result struct {
		Error *struct{ Message string } `json:"error"`
	}
	if err := json.Unmarshal(<-msgs, &result); err != nil || result.Error == nil || result.Error.Message != "approval: declined" {
		t.Errorf("the call after the answer: %v %+v", err, result.Error)
	}
}
