package openapi

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"mime"
	"mime/multipart"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/edgemcp/edgemcp/pipeline"
	"github.com/edgemcp/edgemcp/sources/upstream"
)

// FuzzArgumentNames: whatever key or text a caller puts in an argument,
// in whichever location and style (an exploded query or cookie object, a
// deepObject, a matrix path object, a raw Cookie header, a path object
// filling the template's own query, a JSON body, a form body and its
// field styled as an exploded object, multipart text, array and JSON
// object parts), the request the serializer builds carries the gateway's names
// (`set` parameters, credentials) exactly as a call without arguments
// does, with the gateway's values: read the way upstreams read requests
// (Go's query and form parsers, cookie names trimmed, bracket keys by
// their base, names compared without case and with '-', '.', ' ' as '_';
// multipart part names as Go's multipart reader reads them).
// A call may instead be refused; it may never add or change one.
func FuzzArgumentNames(f *testing.F) {
	for _, key := range []string{"tenant", "TENANT", "Tenant", " tenant", "tenant\t", "tenant[x]", "tenant.", "x-tenant-id",
		"X_TENANT_ID", "x.tenant.id", "api_key", "API-KEY", "Api.Key", "session", "SESSION ", "authorization", "x-api-key",
		"tenant%5Bx%5D", "t\u0130nant", "color", "a=b", "a;tenant", "tenant=x; session", "\u212Aey"} {
		for where := range uint8(13) {
			f.Add(key, "other", where)
		}
	}
	dir := f.TempDir()
	spec := filepath.Join(dir, "spec.json")
	if err := os.WriteFile(spec, []byte(namesSpec), 0o644); err != nil {
		f.Fatal(err)
	}
	doc, err := Load(context.Background(), spec, LoadOptions{})
	if err != nil {
		f.Fatal(err)
	}
	creds := []upstream.Credential{
		upstream.APIKey{In: "query", Name: "api_key", Value: "gateway-key"},
		upstream.APIKey{In: "cookie", Name: "session", Value: "gateway-sid"},
		upstream.APIKey{In: "header", Name: "X-Api-Key", Value: "gateway-hk"},
		upstream.Bearer{Token: "gateway-token"},
	}
	list, _, err := Tools(doc, Config{BaseURL: "http://127.0.0.1:1", Credentials: creds,
		Set: map[string]string{"tenant": "acme", "X-Tenant-Id": "acme"}})
	if err != nil {
		f.Fatal(err)
	}
	tools := map[string]*Executor{}
	for _, tl := range list {
		tools[tl.Name] = tl.Executor.(*Executor)
	}
	protected := []string{"tenant", "x-tenant-id", "api_key", "session", "x-api-key", "authorization"}

	f.Fuzz(func(t *testing.T, key, value string, where uint8) {
		tool, args := "listOrders", map[string]any{}
		obj := map[string]any{key: value}
		switch where % 13 {
		case 0:
			args["filter"] = obj
		case 1:
			args["prefs"] = obj
		case 2:
			args["deep"] = obj
		case 3:
			tool, args["Cookie"] = "legacy", key+"="+value
		case 4:
			tool, args["sel"] = "getItem", obj
		case 5:
			tool, args["body"] = "createOrder", obj
		case 6:
			tool, args["body"] = "submitForm", obj
		case 7:
			tool, args["body"] = "createOrder", map[string]any{"nested": obj}
		case 8:
			tool, args["body"] = "submitForm", map[string]any{"filter": obj}
		case 9:
			tool, args["body"] = "upload", obj
		case 10:
			tool, args["body"] = "upload", map[string]any{key: []any{value, value}}
		case 11:
			tool, args["body"] = "upload", map[string]any{"meta": obj, "tags": []any{key}}
		default:
			tool, args["sel"] = "find", obj
		}
		x := tools[tool]
		got, err := wireNames(x, args, protected)
		if err != nil {
			return // refused, or a value no style can carry
		}
		want, err := wireNames(x, map[string]any{}, protected)
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(got, want) {
			t.Fatalf("%s %v: the gateway's names on the wire are\n%q, want\n%q", tool, args, got, want)
		}
	})
}

// wireNames builds the request of a call to x with args, applies the
// credentials, and lists each protected name the request carries, as
// "location name=value", sorted.
func wireNames(x *Executor, args map[string]any, protected []string) ([]string, error) {
	req, err := x.Op.newRequest(context.Background(), x.Base, &pipeline.Call{Inputs: args})
	if err != nil {
		return nil, err
	}
	for _, c := range x.Credentials {
		if err := c.Apply(context.Background(), req, nil); err != nil {
			return nil, err
		}
	}
	var out []string
	note := func(in, name, value string) {
		if oracleProtected(name, protected) {
			out = append(out, fmt.Sprintf("%s %s=%s", in, strings.TrimSpace(name), value))
		}
	}
	q, err := url.ParseQuery(req.URL.RawQuery)
	if err != nil {
		return nil, fmt.Errorf("the query does not parse: %v", err)
	}
	for name, vs := range q {
		for _, v := range vs {
			note("query", name, v)
		}
	}
	for name, vs := range req.Header {
		if name == "Cookie" {
			continue
		}
		for _, v := range vs {
			note("header", name, v)
		}
	}
	for _, line := range req.Header.Values("Cookie") {
		for _, pair := range strings.Split(line, ";") {
			name, v, _ := strings.Cut(pair, "=")
			if plain, err := url.QueryUnescape(name); err == nil {
				name = plain // PHP decodes cookie names
			}
			note("cookie", name, v)
		}
	}
	for _, piece := range strings.Split(req.URL.EscapedPath(), ";")[1:] {
		name, v, _ := strings.Cut(piece, "=")
		if plain, err := url.PathUnescape(name); err == nil {
			name = plain
		}
		note("path", name, v)
	}
	if req.Body != nil {
		b, _ := io.ReadAll(req.Body)
		mt, params, _ := mime.ParseMediaType(req.Header.Get("Content-Type"))
		switch mt {
		case "application/x-www-form-urlencoded":
			form, err := url.ParseQuery(string(b))
			if err != nil {
				return nil, fmt.Errorf("the form body does not parse: %v", err)
			}
			for name, vs := range form {
				for _, v := range vs {
					note("body", name, v)
				}
			}
		case "multipart/form-data":
			mr := multipart.NewReader(bytes.NewReader(b), params["boundary"])
			for {
				part, err := mr.NextPart()
				if err == io.EOF {
					break
				}
				if err != nil {
					return nil, fmt.Errorf("the multipart body does not parse: %v", err)
				}
				v, _ := io.ReadAll(part)
				note("body", part.FormName(), string(v))
			}
		case "application/json":
			var obj map[string]json.RawMessage
			if json.Unmarshal(b, &obj) == nil {
				for name, v := range obj {
					note("body", name, string(v))
				}
			}
		}
	}
	slices.Sort(out)
	return out, nil
}

// oracleProtected compares name with the protected names as upstream
// parsers could read it, written apart from canonicalName: trimmed, up to
// a '[', case folded, with '-', '.' and ' ' as '_'.
func oracleProtected(name string, protected []string) bool {
	norm := strings.NewReplacer("-", "_", ".", "_", " ", "_")
	name = strings.TrimSpace(name)
	if i := strings.IndexByte(name, '['); i > 0 {
		name = name[:i]
	}
	name = norm.Replace(strings.ToLower(name))
	for _, p := range protected {
		if name == norm.Replace(p) {
			return true
		}
	}
	return false
}
