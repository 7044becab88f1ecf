package caddymodule

import (
	"bytes"
	"context"
	"fmt"
	"html"
	"image"
	"image/color"
	_ "image/png"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
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
