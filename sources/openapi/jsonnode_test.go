package openapi

import (
	"bytes"
	"context"
	"encoding/json"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"

	"go.yaml.in/yaml/v4"
)

// A JSON document read through jsonNode is the document kin-openapi's own
// loader makes of the same bytes: both encoded back to JSON are equal.
func TestLoadJSONMatchesKinOpenAPI(t *testing.T) {
	notes, err := os.ReadFile(filepath.Join("testdata", "notes31.json"))
	if err != nil {
		t.Fatal(err)
	}
	github, err := os.ReadFile(githubSpec(t))
	if err != nil {
		t.Fatal(err)
	}
	docs := map[string][]byte{
		"notes31.json": notes,
		"github":       github,
		"escapes and numbers": []byte(`{"openapi":"3.0.3","info":{"title":"t \"q\" \u00e9\ud83d\ude00 \/","version":"1"},
			"paths":{"/a/{id}":{"get":{"operationId":"a","parameters":[{"name":"id","in":"path","required":true,
			"schema":{"type":"integer","minimum":-0,"maximum":1e3,"multipleOf":0.5,"default":18446744073709551615,"enum":[1,2.5,-3,true,null,"x"]}}],
			"responses":{"200":{"description":"ok","content":{"application/json":{"schema":{"$ref":"#/components/schemas/R"}}}}}}}},
			"components":{"schemas":{"R":{"type":"object","additionalProperties":false,"x-n":12345678901234567890,
			"properties":{"r":{"$ref":"#/components/schemas/R"},"when":{"type":"string","example":"2020-06-11T16:32:50Z"}}}}}}`),
	}
	for name, data := range docs {
		t.Run(name, func(t *testing.T) {
			base := &url.URL{Path: "/doc.json"}
			fast, err := loadJSON(context.Background(), data, base, LoadOptions{})
			if err != nil {
				t.Fatalf("loadJSON: %v", err)
			}
			stock, err := newLoader(context.Background(), LoadOptions{}).LoadFromDataWithPath(data, base)
			if err != nil {
				t.Fatalf("kin-openapi: %v", err)
			}
			a, err := json.Marshal(fast)
			if err != nil {
				t.Fatal(err)
			}
			b, err := json.Marshal(stock)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(a, b) {
				i := 0
				for i < len(a) && i < len(b) && a[i] == b[i] {
					i++
				}
				t.Fatalf("documents differ at byte %d:\nfast:  %.200s\nstock: %.200s", i, a[max(0, i-60):], b[max(0, i-60):])
			}
		})
	}
}

// What jsonNode refuses makes the load fall back to kin-openapi, whose
// message the operator sees.
func TestLoadJSONFallsBack(t *testing.T) {
	for name, data := range map[string]string{
		"yaml":          "openapi: 3.0.3\ninfo: {title: t, version: '1'}\npaths: {}\n",
		"trailing data": `{"openapi":"3.0.3","info":{"title":"t","version":"1"},"paths":{}} x`,
		"bad ref":       `{"openapi":"3.0.3","info":{"title":"t","version":"1"},"paths":{},"components":{"schemas":{"a":{"$ref":"#/components/schemas/missing"}}}}`,
	} {
		t.Run(name, func(t *testing.T) {
			if _, err := loadJSON(context.Background(), []byte(data), &url.URL{}, LoadOptions{}); err == nil {
				t.Fatal("loadJSON accepted it")
			}
		})
	}
	_, err := Load(context.Background(), writeTemp(t, `{"openapi":"3.0.3","info":{"title":"t","version":"1"},"paths":{},"components":{"schemas":{"a":{"$ref":"#/components/schemas/missing"}}}}`), LoadOptions{})
	if err == nil || !strings.Contains(err.Error(), "missing") {
		t.Fatalf("a dangling $ref: %v", err)
	}
}

func writeTemp(t *testing.T, s string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "doc.json")
	if err := os.WriteFile(p, []byte(s), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

// jsonNode accepts exactly what encoding/json calls valid and is UTF-8
// (what is not, YAML's parser refuses too; kin-openapi's load then reads it
// as JSON), never panics, and a string it reads is the one encoding/json
// reads.
func FuzzJSONNode(f *testing.F) {
	for _, s := range []string{`{}`, `[]`, `{"a":[1,-0,2.5e-3,"x\u00e9\n",true,false,null]}`, `{"a":`, `"\ud800"`, `[1,]`, "\"\xff\"", `01`, `-`, `{"a":1}{}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		n, err := jsonNode(data)
		if valid := json.Valid(data) && utf8.Valid(data); valid != (err == nil) {
			t.Fatalf("json.Valid %v, jsonNode error %v", valid, err)
		}
		if err != nil {
			return
		}
		var want any
		if json.Unmarshal(data, &want) != nil {
			return
		}
		if s, ok := want.(string); ok {
			if n.Kind != yaml.ScalarNode || n.Value != s {
				t.Fatalf("string %q read as %q", s, n.Value)
			}
		}
	})
}
