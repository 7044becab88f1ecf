//go:build linux

package caddymodule

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/client/transport"
	"github.com/mark3labs/mcp-go/mcp"
)

// resources/subscribe through an MCP source (tests/node/conformance-upstream.mjs,
// whose notify_resource_updated tool sends updates and says how many
// upstream sessions it told), and beside it declared resources, on a
// protocol version that has subscriptions.

const (
	subAliceKey = "sub-alice-key-0123456789"
	subBobKey   = "sub-bob-key-0123456789ab"
	subVersion  = "2025-11-25"
	watchedURI  = "test://watched-resource"
	textURI     = "test://static-text"
	warmURI     = "test://static-binary"
)

func subscribeCaddyfile(t *testing.T, source string) string {
	t.Setenv("EDGEMCP_SUB_ALICE", subAliceKey)
	t.Setenv("EDGEMCP_SUB_BOB", subBobKey)
	return fmt.Sprintf(`SITE {
	mcp /mcp {
		connector lite sqlite %s
		auth keys api_key {
			key {env.EDGEMCP_SUB_ALICE} {
				subject alice
				scope notes:admin
			}
			key {env.EDGEMCP_SUB_BOB} {
				subject bob
			}
		}
		resource notes://today {
			mime_type text/plain
			use lite
			statement "SELECT 'today'"
		}
		resource notes://admin {
			mime_type text/plain
			use lite
			statement "SELECT 'secret'"
			auth keys {
				scope notes:admin
			}
		}
		%s
	}
}`, filepath.Join(t.TempDir(), "lite.db"), source)
}

// subscriber is a session on subVersion with its GET stream open (an
// update reaches a session only there), and the updates it received.
type subscriber struct {
	*rawSession
	key    string
	events func() string
}

func (g *gateway) subscriber(t *testing.T, key string) *subscriber {
	t.Helper()
	s := g.rawSession(t, subVersion)
	return &subscriber{rawSession: s, key: key, events: openStream(t, g.URL, s.session, subVersion)}
}

func (s *subscriber) do(t *testing.T, method, uri string) {
	t.Helper()
	s.nextID++
	body := fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":%q,"params":{"uri":%q}}`, s.nextID, method, uri)
	if r, _ := s.postWith(t, body, map[string]string{"X-API-Key": s.key}); r.Error != nil || string(r.Result) != "{}" {
		t.Fatalf("%s %s: %+v %s", method, uri, r.Error, r.Result)
	}
}

func (s *subscriber) subscribe(t *testing.T, uri string)   { s.do(t, "resources/subscribe", uri) }
func (s *subscriber) unsubscribe(t *testing.T, uri string) { s.do(t, "resources/unsubscribe", uri) }

// updates are the URIs of the notifications/resources/updated received,
// in order, but warmURI's.
func (s *subscriber) updates() []string {
	var uris []string
	for _, line := range strings.Split(s.events(), "\n") {
		data, ok := strings.CutPrefix(line, "data: ")
		if !ok {
			continue
		}
		var n struct {
			Method string `json:"method"`
			Params struct {
				URI string `json:"uri"`
			} `json:"params"`
		}
		if json.Unmarshal([]byte(data), &n) == nil && n.Method == string(mcp.MethodNotificationResourceUpdated) && n.Params.URI != warmURI {
			uris = append(uris, n.Params.URI)
		}
	}
	return uris
}

// waitUpdates waits until the session received want, and fails if it
// received anything else.
func (s *subscriber) waitUpdates(t *testing.T, name string, want ...string) {
	t.Helper()
	waitFor(t, name+"'s updates", func() bool { return len(s.updates()) >= len(want) })
	if got := s.updates(); strings.Join(got, " ") != strings.Join(want, " ") {
		t.Fatalf("%s's updates: %v, want %v", name, got, want)
	}
}

// warm waits until the gateway's own stream from the upstream is open (the
// upstream drops a notification sent before): it has updates of warmURI
// sent until one reaches s.
func (s *subscriber) warm(t *testing.T, ctl *rawSession) {
	t.Helper()
	s.subscribe(t, warmURI)
	waitFor(t, "an update through the gateway", func() bool {
		notify(t, ctl, warmURI)
		return strings.Contains(s.events(), warmURI)
	})
	s.unsubscribe(t, warmURI)
}

// notify has the upstream send an update for uri, from a session of its
// own; it returns how many upstream sessions were subscribed.
func notify(t *testing.T, ctl *rawSession, uri string) string {
	t.Helper()
	res := ctl.call(t, "notify_resource_updated", map[string]any{"uri": uri}).tool(t)
	return res.Content[0].Text
}

func TestResourceSubscribeThroughMCPSource(t *testing.T) {
	up := startConformanceUpstream(t)
	g := startGateway(t, subscribeCaddyfile(t, fmt.Sprintf("source conf mcp %s {\n\t\t\tprefix off\n\t\t}", up)))
	a := g.subscriber(t, subAliceKey)
	b := g.subscriber(t, subBobKey)
	ctl := g.rawSession(t, subVersion)
	a.warm(t, ctl)

	// Two sessions on one URI: one upstream subscription, both told.
	a.subscribe(t, watchedURI)
	b.subscribe(t, watchedURI)
	b.subscribe(t, textURI)
	if got := notify(t, ctl, watchedURI); got != "notified 1 sessions" {
		t.Fatalf("upstream after two subscriptions: %s", got)
	}
	a.waitUpdates(t, "a", watchedURI)
	b.waitUpdates(t, "b", watchedURI)

	// b leaves: the upstream stays subscribed for a; b is no longer told
	// (its next update is the text resource's, sent after).
	b.unsubscribe(t, watchedURI)
	if got := notify(t, ctl, watchedURI); got != "notified 1 sessions" {
		t.Fatalf("upstream after one of two left: %s", got)
	}
	if got := notify(t, ctl, textURI); got != "notified 1 sessions" {
		t.Fatalf("upstream on the text resource: %s", got)
	}
	a.waitUpdates(t, "a", watchedURI, watchedURI)
	b.waitUpdates(t, "b", watchedURI, textURI)

	// a's session ends (DELETE): the last subscriber of the watched URI is
	// gone, so the gateway unsubscribed upstream; b's subscription stays.
	del, _ := http.NewRequest(http.MethodDelete, g.URL, nil)
	del.Header.Set("Mcp-Session-Id", a.session)
	del.Header.Set("Mcp-Protocol-Version", subVersion)
	if res, err := http.DefaultClient.Do(del); err != nil || res.StatusCode != http.StatusOK {
		t.Fatalf("DELETE: %v %v", res, err)
	}
	if got := notify(t, ctl, watchedURI); got != "notified 0 sessions" {
		t.Fatalf("upstream after the last subscriber's session ended: %s", got)
	}
	if got := notify(t, ctl, textURI); got != "notified 1 sessions" {
		t.Fatalf("upstream on b's text resource: %s", got)
	}
	b.waitUpdates(t, "b", watchedURI, textURI, textURI)
	b.unsubscribe(t, textURI)
	if got := notify(t, ctl, textURI); got != "notified 0 sessions" {
		t.Fatalf("upstream after the last unsubscribe: %s", got)
	}

	// A template's URI goes to the template's source.
	const tmplURI = "test://template/7/data"
	b.subscribe(t, tmplURI)
	if got := notify(t, ctl, tmplURI); got != "notified 1 sessions" {
		t.Fatalf("upstream on the template's URI: %s", got)
	}
	b.waitUpdates(t, "b", watchedURI, textURI, textURI, tmplURI)
}

// TestResourceSubscribeMCPGoClient: mcp-go's Go client, listening on its
// GET stream, subscribes through its own API and gets the update.
func TestResourceSubscribeMCPGoClient(t *testing.T) {
	up := startConformanceUpstream(t)
	g := startGateway(t, subscribeCaddyfile(t, fmt.Sprintf("source conf mcp %s", up)))
	ctl := g.rawSession(t, subVersion)
	c, err := client.NewStreamableHttpClient(g.URL, transport.WithContinuousListening())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Close() })
	var updated atomic.Value
	c.OnNotification(func(n mcp.JSONRPCNotification) {
		if n.Method == string(mcp.MethodNotificationResourceUpdated) {
			updated.Store(n.Params.AdditionalFields["uri"])
		}
	})
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := c.Start(ctx); err != nil {
		t.Fatal(err)
	}
	req := mcp.InitializeRequest{}
	req.Params.ProtocolVersion = subVersion
	req.Params.ClientInfo = mcp.Implementation{Name: "edgemcp-test", Version: "1"}
	res, err := c.Initialize(ctx, req)
	if err != nil {
		t.Fatal(err)
	}
	if r := res.Capabilities.Resources; r == nil || !r.Subscribe {
		t.Fatalf("resources capability without subscribe: %+v", r)
	}
	if err := c.Subscribe(ctx, mcp.SubscribeRequest{Params: mcp.SubscribeParams{URI: watchedURI}}); err != nil {
		t.Fatal(err)
	}
	// Until the client's GET stream and the gateway's own from the
	// upstream are open, an update reaches nobody: send until one arrives.
	waitFor(t, "the update through mcp-go's client", func() bool {
		notify(t, ctl, watchedURI)
		return updated.Load() == watchedURI
	})
	if err := c.Unsubscribe(ctx, mcp.UnsubscribeRequest{Params: mcp.UnsubscribeParams{URI: watchedURI}}); err != nil {
		t.Fatal(err)
	}
	if got := notify(t, ctl, watchedURI); got != "notified 0 sessions" {
		t.Fatalf("upstream after the unsubscribe: %s", got)
	}
}

// TestResourceSubscribeCodes reads the exact answers: a declared resource
// accepts a subscription (it never brings an update), one the caller may
// not read and a URI that matches nothing answer "resource not found", as
// a read does, and unsubscribing from anything is accepted.
func TestResourceSubscribeCodes(t *testing.T) {
	up := startConformanceUpstream(t)
	g := startGateway(t, subscribeCaddyfile(t, fmt.Sprintf("source conf mcp %s", up)))
	s := g.rawSession(t, subVersion)
	post := func(method, uri, key string) rpcResponse {
		t.Helper()
		body := fmt.Sprintf(`{"jsonrpc":"2.0","id":9,"method":%q,"params":{"uri":%q}}`, method, uri)
		resp, _ := s.postWith(t, body, map[string]string{"X-API-Key": key})
		return resp
	}
	for _, tc := range []struct {
		name, method, uri, key string
		code                   int
	}{
		{"declared", "resources/subscribe", "notes://today", subBobKey, 0},
		{"declared, refused", "resources/subscribe", "notes://admin", subBobKey, -32002},
		{"declared, allowed", "resources/subscribe", "notes://admin", subAliceKey, 0},
		{"upstream", "resources/subscribe", watchedURI, subBobKey, 0},
		{"nothing", "resources/subscribe", "other://x", subBobKey, -32002},
		{"unsubscribe nothing", "resources/unsubscribe", "other://x", subBobKey, 0},
		{"unsubscribe upstream", "resources/unsubscribe", watchedURI, subBobKey, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := post(tc.method, tc.uri, tc.key)
			switch {
			case tc.code == 0 && (r.Error != nil || string(r.Result) != "{}"):
				t.Fatalf("%s %s: %+v %s", tc.method, tc.uri, r.Error, r.Result)
			case tc.code != 0 && (r.Error == nil || r.Error.Code != tc.code || !strings.Contains(r.Error.Message, tc.uri)):
				t.Fatalf("%s %s: want %d, got %+v %s", tc.method, tc.uri, tc.code, r.Error, r.Result)
			}
		})
	}
}

// TestResourceSubscribeNotDeclared: without a source whose server takes
// subscriptions the capability says no subscribe, and mcp-go refuses the
// method.
func TestResourceSubscribeNotDeclared(t *testing.T) {
	g := startGateway(t, subscribeCaddyfile(t, ""))
	resp, _ := (&rawSession{url: g.URL}).post(t, fmt.Sprintf(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":%q,"capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}`, subVersion))
	var init struct {
		Capabilities struct {
			Resources map[string]json.RawMessage `json:"resources"`
		} `json:"capabilities"`
	}
	if err := json.Unmarshal(resp.Result, &init); err != nil || init.Capabilities.Resources == nil {
		t.Fatalf("initialize: %s %v", resp.Result, err)
	}
	if _, ok := init.Capabilities.Resources["subscribe"]; ok {
		t.Fatalf("subscribe declared: %s", resp.Result)
	}
	r, _ := g.rawSession(t, subVersion).post(t, `{"jsonrpc":"2.0","id":2,"method":"resources/subscribe","params":{"uri":"notes://today"}}`)
	if r.Error == nil || r.Error.Code != -32601 {
		t.Fatalf("resources/subscribe: %+v %s", r.Error, r.Result)
	}
}
