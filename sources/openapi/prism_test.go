package openapi

import (
	"bufio"
	"context"
	"encoding/base64"
	"fmt"
	"net"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/edgemcp/edgemcp/internal/testservices"
	"github.com/edgemcp/edgemcp/pipeline"
)

// prismCalls are operations of corpus documents, one per request media
// type the gateway could not send or sent wrong before, each without a
// security requirement (Prism checks credentials too).
var prismCalls = []struct{ doc, operation string }{
	{"influxdata.com.json", "POST /tasks/{taskID}/runs/{runID}/retry"},                       // application/json; charset=utf-8
	{"amadeus.com.json", "POST /shopping/flight-offers"},                                     // application/vnd.amadeus+json
	{"github.com/ghes-2.18.json", "POST /repos/{owner}/{repo}/releases/{release_id}/assets"}, // */* of bytes
	{"azure.com/attestation.json", "POST /operations/policy/current"},                        // text/plain
	{"etsi.local/MEC010-2_AppPkgMgmt.json", "PUT /app_packages/{appPkgId}/package_content"},  // application/zip
	{"anchore.io.json", "POST /oauth/token"},                                                 // application/x-www-form-urlencoded
	{"biapi.pro.json", "POST /admin/jwt"},                                                    // multipart/form-data
}

// TestPrismCorpusCalls sends calls of corpus documents through the
// gateway's tools to Prism (@stoplight/prism-cli, pinned in
// tests/node/package.json), which mocks each document and validates every
// request against it: path, query, headers, Content-Type and body. A
// request it finds invalid is answered 422, which fails the call.
//
// Prism's multipart validation reads parts as a form decoder does (an
// array as "name[]" parts, an object as "name[key]" parts), not as OpenAPI
// says (an array as repeated parts, an object as a JSON part, which
// TestMultipartEncoding checks with kin-openapi's validator), so the
// multipart call here is one whose fields are scalars. Prism routes a path
// template with a fragment ("/webhdfs/v1/{path}#op=CREATE") by the whole
// template, so fragments are left to TestPathTemplateFragmentAndQuery.
func TestPrismCorpusCalls(t *testing.T) {
	root := corpusRoot(t)
	dir := testservices.NodeDir(t)
	node := testservices.Node22(t, dir)
	for _, pc := range prismCalls {
		t.Run(pc.doc, func(t *testing.T) {
			path := filepath.Join(root, pc.doc)
			doc, err := Load(context.Background(), path, LoadOptions{})
			if err != nil {
				t.Fatal(err)
			}
			url := startPrism(t, node, dir, path)
			tools, _, err := Tools(doc, Config{BaseURL: url, Options: Options{Include: []string{pc.operation}}})
			if err != nil || len(tools) != 1 {
				t.Fatalf("the tool of %s: %v (%d tools)", pc.operation, err, len(tools))
			}
			x := tools[0].Executor.(*Executor)
			args, err := prismArguments(x.Op)
			if err != nil {
				t.Fatal(err)
			}
			res, err := x.Execute(context.Background(), &pipeline.Call{Tool: tools[0], Inputs: args})
			if err != nil {
				t.Fatalf("%s as %s, arguments %v: %v", pc.operation, x.Op.Body.MediaType, args, err)
			}
			t.Logf("%s (%s): answered %v", pc.operation, x.Op.Body.MediaType, res.Meta["edgemcp/http"])
		})
	}
}

// prismArguments makes valid arguments for o: each required parameter,
// and the body in its kind (JSON and forms from the schema, text a string,
// bytes base64).
func prismArguments(o *Operation) (map[string]any, error) {
	args := map[string]any{}
	for _, p := range o.Params {
		if !p.Required {
			continue
		}
		if p.Schema == nil || p.Schema.Value == nil {
			args[p.Property] = "v-" + p.Name
			continue
		}
		v, ok := sampleValue(p.Schema.Value, p.Name, 0, 0)
		if !ok {
			return nil, fmt.Errorf("no sample for parameter %s", p.Name)
		}
		args[p.Property] = v
	}
	if o.Body == nil {
		return args, nil
	}
	switch o.Body.Kind {
	case bodyText:
		args[bodyProperty] = "a text body"
	case bodyBinary:
		args[bodyProperty] = base64.StdEncoding.EncodeToString([]byte("some bytes"))
	default:
		if o.Body.Schema == nil || o.Body.Schema.Value == nil {
			args[bodyProperty] = map[string]any{}
			break
		}
		v, ok := sampleValue(o.Body.Schema.Value, "body", 0, 0)
		if !ok {
			return nil, fmt.Errorf("no sample for the body")
		}
		if m, isMap := v.(map[string]any); isMap && o.Body.Kind == bodyMultipart {
			for name := range m {
				if o.Body.binaryPart(name) {
					m[name] = base64.StdEncoding.EncodeToString([]byte("file " + name))
				}
			}
		}
		args[bodyProperty] = v
	}
	return args, nil
}

// startPrism runs `prism mock` on the document at a free loopback port
// until the test ends, and returns its URL once it says it listens.
func startPrism(t *testing.T, node, dir, document string) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := l.Addr().(*net.TCPAddr).Port
	l.Close()
	cmd := exec.Command(node, filepath.Join(dir, "node_modules", "@stoplight", "prism-cli", "dist", "index.js"),
		"mock", "-h", "127.0.0.1", "-p", fmt.Sprint(port), document)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = cmd.Stdout
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	ready := make(chan string, 1)
	go func() {
		var seen []string
		sc := bufio.NewScanner(out)
		sc.Buffer(nil, 1<<20)
		for sc.Scan() {
			line := sc.Text()
			if strings.Contains(line, "Prism is listening") {
				ready <- ""
				for sc.Scan() { // keep draining: Prism logs every request
				}
				return
			}
			seen = append(seen, line)
		}
		ready <- strings.Join(seen, "\n")
	}()
	select {
	case failed := <-ready:
		if failed != "" {
			t.Fatalf("prism exited:\n%s", failed)
		}
	case <-time.After(2 * time.Minute):
		t.Fatal("prism did not start listening in 2 minutes")
	}
	return fmt.Sprintf("http://127.0.0.1:%d", port)
}
