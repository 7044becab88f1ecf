package upstream

import (
	"context"
	"net"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"testing"
)

// TestTransportErrorLeavesTheQueryOut: a request that cannot reach its
// upstream fails with a cause (logged at debug) that names the URL without
// its query, where an api_key query credential travels.
func TestTransportErrorLeavesTheQueryOut(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close() // nothing listens there now: the dial is refused
	req, _ := http.NewRequest("GET", "http://"+addr+"/v1/pets?limit=1", nil)
	if err := (APIKey{In: "query", Name: "api_key", Value: "query-secret-123"}).Apply(context.Background(), req, nil); err != nil {
		t.Fatal(err)
	}
	_, err = Retry{}.Send(context.Background(), NewClient(Transport), req, nil)
	if err == nil {
		t.Fatal("a closed port answered")
	}
	if msg := err.Error(); strings.Contains(msg, "query-secret-123") || !strings.Contains(msg, addr+"/v1/pets") {
		t.Errorf("the error's text: %s", msg)
	}
}

// TestSecretsOfARequest: each kind of credential's value is found on the
// request it was applied to, with the forms an echo could show.
func TestSecretsOfARequest(t *testing.T) {
	creds := []Credential{
		Basic{User: "u", Password: "p@ss word"},
		APIKey{In: "query", Name: "key", Value: "k&1"},
		APIKey{In: "cookie", Name: "sid", Value: "c00kie"},
		Header{Name: "X-Static", Value: "static-v"},
	}
	req, _ := http.NewRequest("GET", "http://upstream.invalid/x?limit=2", nil)
	for _, c := range creds {
		if err := c.Apply(context.Background(), req, nil); err != nil {
			t.Fatal(err)
		}
	}
	secrets := Secrets(req, creds)
	got := strings.Join(secrets, " | ")
	for _, want := range []string{"Basic dTpwQHNzIHdvcmQ=", "dTpwQHNzIHdvcmQ=", "u:p@ss word", "p@ss word", url.QueryEscape("p@ss word"), "k&1", "k%261", "c00kie", "static-v"} {
		if !strings.Contains(got, want) {
			t.Errorf("%q is not among %s", want, got)
		}
	}
	if slices.Contains(secrets, "2") {
		t.Errorf("the caller's query value is among the secrets: %s", got)
	}
}

func TestShownURL(t *testing.T) {
	for in, want := range map[string]string{
		"https://api.example.com/spec.json":                  "https://api.example.com/spec.json",
		"https://api.example.com/spec.json?token=t":          "https://api.example.com/spec.json?…",
		"https://u:p@api.example.com/graphql":                "https://api.example.com/graphql",
		"https://api.example.com/spec.json?#f":               "https://api.example.com/spec.json?…",
		"./specs/github.yaml":                                "./specs/github.yaml",
		"/srv/specs/a b.yaml":                                "/srv/specs/a b.yaml",
		"http://[::1]:8080/openapi.json?api_key=k&other=1#x": "http://[::1]:8080/openapi.json?…",
	} {
		if got := ShownURL(in); got != want {
			t.Errorf("ShownURL(%q) = %q, want %q", in, got, want)
		}
	}
}
