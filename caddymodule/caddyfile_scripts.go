package caddymodule

import (
	"strings"

	"github.com/caddyserver/caddy/v2"
	"github.com/caddyserver/caddy/v2/caddyconfig/caddyfile"
	"github.com/dustin/go-humanize"

	"github.com/edgemcp/edgemcp/pipeline/script"
)

// ScriptSettings are the endpoint-wide script settings (embedded in
// Handler): defaults for every tool's scripts.
type ScriptSettings struct {
	// ScriptTimeout bounds one script call (default 1s).
	ScriptTimeout caddy.Duration `json:"script_timeout,omitempty"`
	// FetchAllow lists the hosts scripts may fetch() from; empty: scripts
	// have no fetch.
	FetchAllow []string `json:"fetch_allow,omitempty"`
	// ScriptMaxInput and ScriptMaxOutput bound the JSON size of what a
	// script receives and returns, in bytes (default 1 MiB each).
	ScriptMaxInput  int64 `json:"script_max_input,omitempty"`
	ScriptMaxOutput int64 `json:"script_max_output,omitempty"`
	// ScriptMaxMemory is the memory budget of one script call for the
	// builtins that allocate much from a short expression (README,
	// Scripts), in bytes (default 64 MiB).
	ScriptMaxMemory int64 `json:"script_max_memory,omitempty"`
}

// ToolScripts are a tool's scripts (embedded in ToolConfig).
type ToolScripts struct {
	// Handler is path/to/file.js[#export]: a script-backed tool.
	Handler string `json:"handler,omitempty"`
	// Mappers transform the inputs before and the results after execution.
	Mappers *MappersConfig `json:"mappers,omitempty"`
	// ScriptSettings override the endpoint's for this tool's scripts.
	ScriptSettings

	// noExecution is the Caddyfile error for a tool with neither use nor
	// handler; it stands unless scripts_dir (possibly declared after the
	// tool) may provide a handler.
	noExecution error
}

// MappersConfig names a tool's mapper scripts (path/to/file.js[#export]).
type MappersConfig struct {
	Input  string `json:"input,omitempty"`
	Output string `json:"output,omitempty"`
}

// parseScriptSetting reads `script_timeout <duration>`, `fetch_allow
// <host...>`, `script_max_input <size>`, `script_max_output <size>` and
// `script_max_memory <size>`, in the mcp block or in a tool.
func parseScriptSetting(d *caddyfile.Dispenser, set *ScriptSettings) error {
	switch dir := d.Val(); dir {
	case "script_timeout":
		dur, err := durationArg(d)
		if err != nil {
			return err
		}
		set.ScriptTimeout = caddy.Duration(dur)
	case "script_max_input", "script_max_output", "script_max_memory":
		var v string
		if err := oneArg(d, &v); err != nil {
			return err
		}
		n, err := humanize.ParseBytes(v)
		if err != nil || n == 0 || n > 1<<30 {
			return d.Errf("%s: invalid size %q (want e.g. 4MiB, at most 1GiB)", dir, v)
		}
		switch dir {
		case "script_max_input":
			set.ScriptMaxInput = int64(n)
		case "script_max_output":
			set.ScriptMaxOutput = int64(n)
		default:
			set.ScriptMaxMemory = int64(n)
		}
	case "fetch_allow":
		hosts := d.RemainingArgs()
		if len(hosts) == 0 {
			return d.Errf("fetch_allow needs at least one host (api.example.com, *.example.com or host:port)")
		}
		for _, h := range hosts {
			if err := script.ParseFetchAllow(h); err != nil {
				return d.Errf("%v", err)
			}
		}
		set.FetchAllow = append(set.FetchAllow, hosts...)
	}
	return nil
}

// parseToolScripts reads a tool's handler, mappers and script settings.
func parseToolScripts(d *caddyfile.Dispenser, t *ToolConfig) error {
	switch d.Val() {
	case "handler":
		if t.Handler != "" {
			return d.Errf("tool %q: handler declared twice", t.Name)
		}
		return oneArg(d, &t.Handler)
	case "mappers":
		if d.NextArg() {
			return d.Errf("tool %q: usage: mappers { input <file>  output <file> }", t.Name)
		}
		if t.Mappers == nil {
			t.Mappers = new(MappersConfig)
		}
		for nesting := d.Nesting(); d.NextBlock(nesting); {
			var dst *string
			switch d.Val() {
			case "input":
				dst = &t.Mappers.Input
			case "output":
				dst = &t.Mappers.Output
			default:
				return d.Errf("tool %q: mappers: unrecognized %q (want input or output)", t.Name, d.Val())
			}
			if *dst != "" {
				return d.Errf("tool %q: mappers: %s declared twice", t.Name, d.Val())
			}
			if err := oneArg(d, dst); err != nil {
				return err
			}
		}
		return nil
	}
	return parseScriptSetting(d, &t.ScriptSettings)
}

// checkToolExecution is the end-of-block check of a tool: exactly one way
// to execute, `use` + `statement` or `handler`. A tool with neither may
// still get a handler from scripts_dir, so that error waits for the end of
// the mcp block (checkScriptTools).
func checkToolExecution(d *caddyfile.Dispenser, t *ToolConfig) error {
	switch {
	case t.Handler != "" && (t.Use != "" || t.Statement != ""):
		return d.Errf("tool %q: a tool runs either a statement ('use' + 'statement') or a 'handler', not both", t.Name)
	case t.Handler != "":
		return nil
	case t.Use == "" && t.Statement == "":
		t.noExecution = d.Errf("tool %q: missing 'use <connector>' + 'statement', or 'handler <file>' (or scripts_dir with %s/handler.js)", t.Name, t.Name)
		return nil
	case t.Use == "":
		return d.Errf("tool %q: missing 'use <connector>'", t.Name)
	case strings.TrimSpace(t.Statement) == "":
		return d.Errf("tool %q: missing 'statement'", t.Name)
	}
	return nil
}

// checkScriptTools runs after the whole mcp block is read: without
// scripts_dir, a tool with nothing to execute is an error at its line.
func (h *Handler) checkScriptTools() error {
	if h.ScriptsDir != "" {
		return nil
	}
	for _, t := range h.Tools {
		if t.noExecution != nil {
			return t.noExecution
		}
	}
	return nil
}
