package caddymodule

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"html"
	"image"
	"image/color"
	_ "image/png"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/edgemcp/edgemcp/caddymodule/catalog"
)

// chromiumPath finds headless Chromium: EDGEMCP_CHROMIUM, else Debian's
// `chromium` (or `chromium-browser`) on PATH. Missing is a failure.
func chromiumPath(t testing.TB) string {
	t.Helper()
	if p := os.Getenv("EDGEMCP_CHROMIUM"); p != "" {
		return p
	}
	for _, name := range []string{"chromium", "chromium-browser"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	t.Fatal("headless Chromium is missing (the catalog page is tested in a real browser). Install it with:  apt-get install -y chromium")
	return ""
}

// chromium runs one headless Chromium with a fresh profile and returns
// its standard output.
func chromium(t testing.TB, args ...string) []byte {
	t.Helper()
	bin := chromiumPath(t)
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	flags := []string{"--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
		"--disable-background-networking", "--disable-component-update", "--disable-sync",
		"--disable-dev-shm-usage", "--hide-scrollbars", "--user-data-dir=" + t.TempDir()}
	cmd := exec.CommandContext(ctx, bin, append(flags, args...)...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("chromium %s: %v\n%s", strings.Join(args, " "), err, stderr.String())
	}
	return stdout.Bytes()
}

// TestCatalogInChromium opens the catalog of the example gateway in
// headless Chromium: the rendered DOM names every tool tools/list returns,
// with its description and inputs, and a screenshot is taken (kept in
// EDGEMCP_SCREENSHOT_DIR when set).
func TestCatalogInChromium(t *testing.T) {
	chromiumPath(t) // fail early, before starting Caddy
	g := startGateway(t, exampleGatewayCaddyfile(t))

	c := g.mcpClient(t)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	list, err := c.ListTools(ctx, mcp.ListToolsRequest{})
	if err != nil {
		t.Fatal(err)
	}
	if len(list.Tools) == 0 {
		t.Fatal("tools/list is empty")
	}

	dom := string(chromium(t, "--dump-dom", g.URL))
	if !strings.Contains(dom, "<h1>edgemcp-demo") {
		t.Fatalf("Chromium did not render the catalog:\n%s", dom)
	}
	text := html.UnescapeString(dom)
	for _, tool := range list.Tools {
		section, ok := sectionOf(text, tool.Name)
		if !ok {
			t.Errorf("tool %s: no section in the page", tool.Name)
			continue
		}
		if !strings.Contains(section, tool.Description) {
			t.Errorf("tool %s: description %q not in its section", tool.Name, tool.Description)
		}
		for name := range tool.InputSchema.Properties {
			if !strings.Contains(section, "<code>"+name+"</code>") {
				t.Errorf("tool %s: input %s not in its section", tool.Name, name)
			}
		}
	}

	dir := os.Getenv("EDGEMCP_SCREENSHOT_DIR")
	if dir == "" {
		dir = t.TempDir()
	}
	for _, size := range []struct {
		name          string
		width, height int
	}{{"catalog.png", 1280, 1700}, {"catalog-narrow.png", 420, 1800}} {
		shot := filepath.Join(dir, size.name)
		chromium(t, "--screenshot="+shot, fmt.Sprintf("--window-size=%d,%d", size.width, size.height), g.URL)
		checkScreenshot(t, shot, size.width)
		t.Logf("screenshot: %s", shot)
	}
}

// sectionOf returns the tool's <section> of the page.
func sectionOf(page, tool string) (string, bool) {
	_, rest, ok := strings.Cut(page, `<section class="tool" id="tool-`+tool+`">`)
	if !ok {
		return "", false
	}
	section, _, _ := strings.Cut(rest, "</section>")
	return section, true
}

// checkScreenshot: a PNG of the window's width with something drawn on it
// (more than a handful of colours, so not a blank or error page).
func checkScreenshot(t testing.TB, path string, width int) {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatalf("screenshot: %v", err)
	}
	defer f.Close()
	img, _, err := image.Decode(f)
	if err != nil {
		t.Fatalf("screenshot %s: %v", path, err)
	}
	b := img.Bounds()
	if b.Dx() != width {
		t.Errorf("screenshot is %dx%d, want width %d", b.Dx(), b.Dy(), width)
	}
	colours := map[color.RGBA]bool{}
	for y := b.Min.Y; y < b.Max.Y; y += 3 {
		for x := b.Min.X; x < b.Max.X; x += 3 {
			r, g, bl, _ := img.At(x, y).RGBA()
			colours[color.RGBA{uint8(r >> 8), uint8(g >> 8), uint8(bl >> 8), 0}] = true
		}
	}
	if len(colours) < 20 {
		t.Errorf("screenshot has %d colours: blank page?", len(colours))
	}
}

// The catalog's client snippets and try-it forms, driven in headless
// Chromium on the example gateway: each snippet is valid JSON naming the
// endpoint's URL, a copy button copies it, the try-it form of a database
// tool shows the rows, bad input shows the JSON-RPC error, and the page runs
// under its CSP without a single violation or console error.
func TestCatalogTryItInChromium(t *testing.T) {
	chromiumPath(t)
	g := startGateway(t, exampleGatewayCaddyfile(t))
	p := openBrowserPage(t)
	p.navigate(g.URL)

	// The CSP is the strict one: the inline style by hash, this script by
	// URL, fetches to the endpoint only, Trusted Types.
	res, err := http.Get(g.URL + "?" + catalog.ScriptQuery)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != http.StatusOK || res.Header.Get("Content-Type") != "text/javascript; charset=utf-8" {
		t.Fatalf("script: %d %s", res.StatusCode, res.Header.Get("Content-Type"))
	}
	req, _ := http.NewRequest(http.MethodGet, g.URL, nil)
	req.Header.Set("Accept", "text/html")
	res, err = http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	// The style's hash source, from the file the page embeds.
	css, err := os.ReadFile(filepath.Join("catalog", "static", "catalog.css"))
	if err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(css)
	styleSrc := "'sha256-" + base64.StdEncoding.EncodeToString(sum[:]) + "'"
	if got, want := res.Header.Get("Content-Security-Policy"), "default-src 'none'; style-src "+styleSrc+
		"; script-src "+g.URL+"; connect-src "+g.URL+"; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"+
		"; require-trusted-types-for 'script'; trusted-types 'none'"; got != want {
		t.Errorf("CSP\n got %s\nwant %s", got, want)
	}

	// The snippets.
	for _, id := range []string{"config-vscode", "config-claude", "config-cursor"} {
		text := p.text(`document.getElementById("` + id + `").textContent`)
		var v any
		if err := json.Unmarshal([]byte(text), &v); err != nil {
			t.Errorf("%s is not JSON: %v\n%s", id, err, text)
		}
		if !strings.Contains(text, `"`+g.URL+`"`) {
			t.Errorf("%s does not name %s:\n%s", id, g.URL, text)
		}
	}
	if got := p.text(`document.getElementById("config-inspector").textContent`); got !=
		"npx @modelcontextprotocol/inspector --cli "+g.URL+" --transport http --method tools/list" {
		t.Errorf("inspector line: %s", got)
	}
	// Copy: to the clipboard when the page may write it.
	p.call("Browser.grantPermissions", map[string]any{"permissions": []string{"clipboardReadWrite", "clipboardSanitizedWrite"}})
	p.eval(`document.querySelector('button.copy[data-copy="config-cursor"]').click()`, nil)
	waitFor(t, "the copy button", func() bool {
		return p.text(`document.querySelector('button.copy[data-copy="config-cursor"]').textContent`) == "Copied"
	})
	if got, want := p.text(`navigator.clipboard.readText()`), p.text(`document.getElementById("config-cursor").textContent`); got != want {
		t.Errorf("clipboard holds %q, want the Cursor snippet", got)
	}

	// A database tool: its form has the int input; the result has the row.
	form := `document.querySelector('form.try-form[data-tool="get-customer"]')`
	p.eval(form+`.closest("details").open = true`, nil)
	if got := p.text(form + `.querySelector('[name="customer_id"]').type`); got != "number" {
		t.Errorf("customer_id field is %s, want number", got)
	}
	submit := func(form string) string {
		t.Helper()
		p.eval(form+`.querySelector(".try-result").textContent = ""`, nil)
		p.eval(form+`.requestSubmit()`, nil)
		var out string
		waitFor(t, "the try-it result", func() bool {
			out = p.text(form + `.querySelector(".try-result").className + " | " + ` + form + `.querySelector(".try-result").textContent`)
			return strings.Contains(out, " ok |") || strings.Contains(out, " error |")
		})
		return out
	}
	p.eval(form+`.querySelector('[name="customer_id"]').value = "2"`, nil)
	if out := submit(form); !strings.Contains(out, "try-result ok | Result") || !strings.Contains(out, "Grace Hopper") || !strings.Contains(out, "grace@example.com") {
		t.Errorf("get-customer 2: %s", out)
	}
	// A required input left empty: the gateway's JSON-RPC error is shown.
	p.eval(form+`.querySelector('[name="customer_id"]').value = ""`, nil)
	if out := submit(form); !strings.Contains(out, `try-result error | JSON-RPC error -32000: input validation: input "customer_id": required`) {
		t.Errorf("get-customer without its id: %s", out)
	}
	// An enum is a select of its values; a default is a placeholder.
	form = `document.querySelector('form.try-form[data-tool="search-products"]')`
	var options []string
	p.eval(`Array.from(`+form+`.querySelector('select[name="category"]').options, o => o.textContent)`, &options)
	if strings.Join(options, ",") != "— not sent —,hardware,books,furniture" {
		t.Errorf("category options: %v", options)
	}
	if got := p.text(form + `.querySelector('[name="limit"]').placeholder`); got != "default 10" {
		t.Errorf("limit placeholder: %q", got)
	}
	p.eval(form+`.querySelector('select[name="category"]').value = '"books"'`, nil)
	if out := submit(form); !strings.Contains(out, "try-result ok") || !strings.Contains(out, `"category": "books"`) || strings.Contains(out, `"hardware"`) {
		t.Errorf("search-products in books: %s", out)
	}

	if problems := p.problems(); len(problems) > 0 {
		t.Errorf("the page reported:\n%s", strings.Join(problems, "\n"))
	}
	// The check above can see a violation: HTML parsed from a string is
	// refused by the page's Trusted Types policy, and reported.
	p.eval(`try { document.body.insertAdjacentHTML("beforeend", "<b>x</b>") } catch (e) {}`, nil)
	waitFor(t, "the reported violation", func() bool {
		for _, v := range p.problems() {
			if strings.Contains(v, "CSP violation: require-trusted-types-for") {
				return true
			}
		}
		return false
	})
}

// The try-it form with credentials: a tool that needs a key is not on the
// anonymous page; the viewer's key (sent as Authorization: Bearer) lists and
// calls it; the same call without the key shows the gateway's error. The key
// stays out of sessionStorage unless the viewer asks.
func TestCatalogCredentialInChromium(t *testing.T) {
	chromiumPath(t)
	db := filepath.Join(t.TempDir(), "cat.db")
	g := startGateway(t, fmt.Sprintf(`SITE {
	mcp /mcp {
		connector demo sqlite %q
		auth keys api_key {
			header Authorization
			key catalog-browser-key-0123456789 {
				subject ops
				scope reports:read
			}
		}
		tool public-time {
			description "The database's clock"
			use demo
			statement "SELECT 'tick' AS now"
		}
		tool private-report {
			description "Needs the reports scope"
			use demo
			statement "SELECT 41 + 1 AS answer"
			auth keys {
				scope reports:read
			}
		}
	}
}`, db))
	p := openBrowserPage(t)
	p.navigate(g.URL)
	if got := p.text(`document.getElementById("tool-private-report") === null`); got != "true" {
		t.Fatal("the anonymous page shows private-report")
	}
	if got := p.text(`document.getElementById("config-vscode").textContent`); !strings.Contains(got, `"Authorization": "Bearer ${input:edgemcp-token}"`) {
		t.Errorf("VS Code snippet without the header placeholder:\n%s", got)
	}

	p.eval(`document.querySelector("#credential input[name=credential]").value = "catalog-browser-key-0123456789"`, nil)
	p.eval(`document.getElementById("credential").requestSubmit()`, nil)
	waitFor(t, "the private tool's card", func() bool { return p.text(`document.getElementById("tool-private-report") !== null`) == "true" })
	if got := p.text(`document.querySelector("#credential .cred-status").textContent`); got != "2 tools callable with this credential, 1 added below." {
		t.Errorf("status: %q", got)
	}
	form := `document.querySelector('form.try-form[data-tool="private-report"]')`
	call := func() string {
		t.Helper()
		p.eval(form+`.querySelector(".try-result").textContent = ""`, nil)
		p.eval(form+`.requestSubmit()`, nil)
		var out string
		waitFor(t, "the try-it result", func() bool {
			out = p.text(form + `.querySelector(".try-result").className + " | " + ` + form + `.querySelector(".try-result").textContent`)
			return strings.Contains(out, " ok |") || strings.Contains(out, " error |")
		})
		return out
	}
	if out := call(); !strings.Contains(out, "try-result ok") || !strings.Contains(out, `"answer": 42`) {
		t.Errorf("private-report with the key: %s", out)
	}
	if got := p.text(`sessionStorage.length`); got != "0" {
		t.Errorf("the key went to sessionStorage without being asked (%s items)", got)
	}

	// Without the key (and with a wrong one): the auth stage's error.
	p.eval(`(() => { const i = document.querySelector("#credential input[name=credential]"); i.value = ""; i.dispatchEvent(new Event("input")); })()`, nil)
	if out := call(); !strings.Contains(out, "try-result error | JSON-RPC error -32000") || !strings.Contains(out, "auth") {
		t.Errorf("private-report without a key: %s", out)
	}
	p.eval(`(() => { const i = document.querySelector("#credential input[name=credential]"); i.value = "wrong-key-0123456789abcdef"; i.dispatchEvent(new Event("input")); })()`, nil)
	if out := call(); !strings.Contains(out, "try-result error | JSON-RPC error -32000") {
		t.Errorf("private-report with a wrong key: %s", out)
	}

	// Kept on request: in this tab's sessionStorage, back after a reload.
	p.eval(`(() => { const f = document.getElementById("credential"); f.credential.value = "catalog-browser-key-0123456789"; f.keep.click(); })()`, nil)
	p.navigate(g.URL)
	if got := p.text(`document.querySelector("#credential input[name=credential]").value`); got != "catalog-browser-key-0123456789" {
		t.Errorf("after a reload with keep on, the field holds %q", got)
	}
	if problems := p.problems(); len(problems) > 0 {
		t.Errorf("the page reported:\n%s", strings.Join(problems, "\n"))
	}
}

// With default_auth a browser opening the URL has no credentials: it gets
// the page without tools (an MCP client still gets 401), the script loads,
// and the viewer's key lists and calls the tools.
func TestCatalogLockedInChromium(t *testing.T) {
	chromiumPath(t)
	db := filepath.Join(t.TempDir(), "locked.db")
	g := startGateway(t, fmt.Sprintf(`SITE {
	mcp /mcp {
		connector demo sqlite %q
		auth keys api_key {
			header Authorization
			key catalog-locked-key-0123456789 {
				subject ops
			}
		}
		default_auth keys
		tool whoami {
			description "Who the database says we are"
			use demo
			statement "SELECT 'edge' || 'mcp' AS who"
		}
	}
}`, db))
	get := func(accept string) (int, string) {
		t.Helper()
		req, _ := http.NewRequest(http.MethodGet, g.URL, nil)
		req.Header.Set("Accept", accept)
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		b, _ := io.ReadAll(res.Body)
		return res.StatusCode, string(b)
	}
	if status, body := get("text/html"); status != http.StatusOK || strings.Contains(body, "whoami") || !strings.Contains(body, "This endpoint needs a credential") {
		t.Errorf("browser GET without credentials: %d\n%s", status, body)
	}
	if status, _ := get("application/json, text/event-stream"); status != http.StatusUnauthorized {
		t.Errorf("MCP client's GET without credentials: %d, want 401", status)
	}

	p := openBrowserPage(t)
	p.navigate(g.URL)
	p.eval(`document.querySelector("#credential input[name=credential]").value = "catalog-locked-key-0123456789"`, nil)
	p.eval(`document.getElementById("credential").requestSubmit()`, nil)
	waitFor(t, "the tool's card", func() bool { return p.text(`document.getElementById("tool-whoami") !== null`) == "true" })
	form := `document.querySelector('form.try-form[data-tool="whoami"]')`
	p.eval(form+`.requestSubmit()`, nil)
	var out string
	waitFor(t, "the try-it result", func() bool {
		out = p.text(form + `.querySelector(".try-result").className + " | " + ` + form + `.querySelector(".try-result").textContent`)
		return strings.Contains(out, " ok |") || strings.Contains(out, " error |")
	})
	if !strings.Contains(out, "try-result ok") || !strings.Contains(out, `"who": "edgemcp"`) {
		t.Errorf("whoami with the key: %s", out)
	}
	// Without it, the endpoint's 401 is shown.
	p.eval(`(() => { const i = document.querySelector("#credential input[name=credential]"); i.value = ""; i.dispatchEvent(new Event("input")); })()`, nil)
	p.eval(form+`.querySelector(".try-result").textContent = ""`, nil)
	p.eval(form+`.requestSubmit()`, nil)
	waitFor(t, "the try-it error", func() bool {
		out = p.text(form + `.querySelector(".try-result").className + " | " + ` + form + `.querySelector(".try-result").textContent`)
		return strings.Contains(out, " ok |") || strings.Contains(out, " error |")
	})
	if !strings.Contains(out, "try-result error | JSON-RPC error") || !strings.Contains(out, "auth") {
		t.Errorf("whoami without the key: %s", out)
	}
	if problems := p.problems(); len(problems) > 0 {
		t.Errorf("the page reported:\n%s", strings.Join(problems, "\n"))
	}
}
