package override

import (
	"strings"

	"github.com/caddyserver/caddy/v2/caddyconfig/caddyfile"

	"github.com/edgemcp/edgemcp/pipeline"
)

// Directives are the sub-directives of a source's block that Unmarshal
// reads, whatever the source's type.
var Directives = []string{"rename", "describe", "hide", "annotate"}

// Unmarshal reads one override line at d (on its directive, one of
// Directives) into o; errors name the Caddyfile's file and line:
//
//	rename <tool> <new-name>
//	describe <tool> "<text>"
//	hide <tool> <arg...> [{
//		set <arg> <value | {{ auth.subject }} | {{ auth.claims.NAME }}>
//	}]
//	annotate <tool> <hint...>    read_only destructive idempotent open_world, not_<hint>
func (o *Overrides) Unmarshal(d *caddyfile.Dispenser) error {
	dir := d.Val()
	if !d.NextArg() {
		return d.Errf("%s needs a tool name", dir)
	}
	tool := d.Val()
	if *o == nil {
		*o = Overrides{}
	}
	ov := (*o)[tool]
	if ov == nil {
		ov = &Override{}
		(*o)[tool] = ov
	}
	args := d.RemainingArgs()
	switch dir {
	case "rename":
		if len(args) != 1 {
			return d.Errf("usage: rename <tool> <new-name>")
		}
		if ov.Rename != "" {
			return d.Errf("rename %s: given twice", tool)
		}
		if !pipeline.ToolNamePattern.MatchString(args[0]) {
			return d.Errf("rename %s %s: a tool name must match %s", tool, args[0], pipeline.ToolNamePattern)
		}
		ov.Rename = args[0]
	case "describe":
		if len(args) != 1 {
			return d.Errf("usage: describe <tool> \"<text>\" (quote the text)")
		}
		if ov.Description != nil {
			return d.Errf("describe %s: given twice", tool)
		}
		ov.Description = &args[0]
	case "annotate":
		if len(args) == 0 {
			return d.Errf("usage: annotate <tool> <hint...> (%s)", HintWords)
		}
		ov.Annotate = append(ov.Annotate, args...)
		if _, err := hints(ov.Annotate); err != nil {
			return d.Errf("%s %s: %v", dir, tool, err)
		}
	case "hide":
		if len(args) == 0 {
			return d.Errf("usage: hide <tool> <arg...> [{ set <arg> <value> }]")
		}
		for _, a := range args {
			if strings.ContainsAny(a, "{}") {
				return d.Errf("hide %s: %q is not an argument name (a value goes in a set line of the block)", tool, a)
			}
		}
		ov.Hide = append(ov.Hide, args...)
		for nesting := d.Nesting(); d.NextBlock(nesting); {
			if d.Val() != "set" {
				return d.Errf("hide %s: unrecognized sub-directive %q (want set)", tool, d.Val())
			}
			kv := d.RemainingArgs()
			if len(kv) < 2 {
				return d.Errf("usage: set <arg> <value | {{ auth.subject }} | {{ auth.claims.NAME }}>")
			}
			if _, dup := ov.Set[kv[0]]; dup {
				return d.Errf("hide %s: set %s given twice", tool, kv[0])
			}
			if ov.Set == nil {
				ov.Set = map[string]string{}
			}
			// The Caddyfile splits "{{ auth.claims.x }}" into three tokens.
			ov.Set[kv[0]] = strings.Join(kv[1:], " ")
			if err := ov.Check(); err != nil { // at the set line
				return d.Errf("%s %s: %v", dir, tool, err)
			}
		}
	default:
		return d.Errf("%s: not an override (want %s)", dir, strings.Join(Directives, ", "))
	}
	if err := ov.Check(); err != nil {
		return d.Errf("%s %s: %v", dir, tool, err)
	}
	return nil
}
