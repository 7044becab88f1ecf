package caddymodule

import (
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/caddyserver/caddy/v2"

	"github.com/edgemcp/edgemcp/caddymodule/telemetry"
	"github.com/edgemcp/edgemcp/pipeline"
	"github.com/edgemcp/edgemcp/pipeline/script"
)

// attachScripts gives a built tool its mappers and, for a script-backed
// tool, its handler: configured explicitly, else discovered in scripts_dir
// (D/<tool>/handler.js|ts, input.js|ts, output.js|ts). Every script is
// bundled, compiled and checked here, so a broken script fails the config
// load.
func (h *Handler) attachScripts(ctx caddy.Context, t *pipeline.Tool, tc ToolConfig, loader *script.Loader, repl *caddy.Replacer) error {
	for _, allow := range [][]string{h.FetchAllow, tc.FetchAllow} {
		if err := validateFetchAllow(allow); err != nil {
			return fmt.Errorf("tool %q: %v", tc.Name, err)
		}
	}
	find := func(role, configured string) (string, error) {
		if configured != "" {
			return repl.ReplaceKnown(configured, ""), nil
		}
		return h.discoverScript(tc.Name, role)
	}
	handler, err := find("handler", tc.Handler)
	if err != nil {
		return err
	}
	var input, output string
	if tc.Mappers != nil {
		input, output = tc.Mappers.Input, tc.Mappers.Output
	}
	if input, err = find("input", input); err != nil {
		return err
	}
	if output, err = find("output", output); err != nil {
		return err
	}

	switch {
	case handler != "" && (tc.Use != "" || tc.Statement != ""):
		if tc.Handler == "" {
			return fmt.Errorf("tool %q: runs a statement ('use %s') but scripts_dir also has %s: remove one", tc.Name, tc.Use, handler)
		}
		return fmt.Errorf("tool %q: a tool runs either a statement ('use' + 'statement') or a 'handler', not both", tc.Name)
	case handler == "" && t.Executor == nil:
		if h.ScriptsDir != "" {
			return fmt.Errorf("tool %q: missing 'use <connector>' + 'statement', or 'handler <file>' (and no %s in scripts_dir)", tc.Name, filepath.Join(h.ScriptsDir, tc.Name, "handler.js"))
		}
		return fmt.Errorf("tool %q: missing 'use <connector>' + 'statement', or 'handler <file>'", tc.Name)
	}

	opts := h.scriptOptions(ctx, tc)
	load := func(role, spec string) (*script.Script, error) {
		s, err := loader.Load(spec, opts)
		if err != nil {
			return nil, fmt.Errorf("tool %q: %s: %v", tc.Name, role, err)
		}
		telemetry.ExposeScriptPool(h, tc.Name+" "+role, s) // edgemcp_script_pool_*{pool="<tool> handler"}
		return s, nil
	}
	if handler != "" {
		s, err := load("handler", handler)
		if err != nil {
			return err
		}
		t.Executor = script.Handler{Script: s}
		t.Source = "script"
	}
	if input != "" {
		s, err := load("input mapper", input)
		if err != nil {
			return err
		}
		t.InputMapper = script.InputMapper{Script: s}
	}
	if output != "" {
		s, err := load("output mapper", output)
		if err != nil {
			return err
		}
		t.OutputMapper = script.OutputMapper{Script: s}
	}
	return nil
}

// scriptOptions are the limits of a tool's scripts: the tool's settings,
// else the endpoint's, else the runtime's defaults.
func (h *Handler) scriptOptions(ctx caddy.Context, tc ToolConfig) script.Options {
	pick := func(tool, endpoint int64) int {
		if tool > 0 {
			return int(tool)
		}
		return int(endpoint) // 0: the runtime's default
	}
	opts := script.Options{
		Name:       tc.Name,
		Timeout:    time.Duration(pick(int64(tc.ScriptTimeout), int64(h.ScriptTimeout))),
		MaxInput:   pick(tc.ScriptMaxInput, h.ScriptMaxInput),
		MaxOutput:  pick(tc.ScriptMaxOutput, h.ScriptMaxOutput),
		MaxMemory:  int64(pick(tc.ScriptMaxMemory, h.ScriptMaxMemory)),
		FetchAllow: h.FetchAllow,
		Logger:     ctx.Slogger(),
	}
	if len(tc.FetchAllow) > 0 {
		opts.FetchAllow = tc.FetchAllow
	}
	return opts
}

// discoverScript finds D/<tool>/<role>.js or .ts; two candidates are an
// error (which one would run?).
func (h *Handler) discoverScript(tool, role string) (string, error) {
	if h.ScriptsDir == "" {
		return "", nil
	}
	var found []string
	for _, ext := range []string{".js", ".ts"} {
		p := filepath.Join(h.ScriptsDir, tool, role+ext)
		if st, err := os.Stat(p); err == nil && !st.IsDir() {
			found = append(found, p)
		}
	}
	switch len(found) {
	case 0:
		return "", nil
	case 1:
		return found[0], nil
	}
	return "", fmt.Errorf("tool %q: scripts_dir has both %s and %s: keep one", tool, found[0], found[1])
}

// validateFetchAllow checks entries a JSON config may carry unchecked.
func validateFetchAllow(allow []string) error {
	for _, a := range allow {
		if err := script.ParseFetchAllow(a); err != nil {
			return err
		}
	}
	return nil
}
