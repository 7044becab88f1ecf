package cli

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"slices"
	"sort"

	caddycmd "github.com/caddyserver/caddy/v2/cmd"
	"github.com/spf13/cobra"

	"github.com/edgemcp/edgemcp/pipeline"
	"github.com/edgemcp/edgemcp/pipeline/pin"
)

// `caddy mcp pin` reads a config the way `caddy adapt` does, connects
// each pinned source of its mcp handlers (`pin <file>` in a source's
// block) and reads its tools as the gateway would (after include,
// exclude and disable; before the overrides), then compares them with
// the pin file: with --diff it prints what changed and exits 1 when
// anything did (a CI check); otherwise it writes the pins (--write says
// so explicitly), keeping the other sources' entries of a shared file.

// PinSource is one pinned source of a config, connected.
type PinSource struct {
	Name string
	// File is its pin file, as the config names it.
	File string
	// Tools are its tools as its upstream gives them now, selected,
	// before the overrides: what a pin covers.
	Tools []*pipeline.Tool
}

// Pinner connects the pinned sources of one mcp handler from its JSON
// (the handler's config type is the shell's); done ends them.
type Pinner func(handler json.RawMessage) (sources []PinSource, done func(), err error)

func pinCommand(connect Pinner) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "pin --config <file> [--adapter <name>] [--diff] [--write] [--source <name>...] [--tool <name>...]",
		Short: "Compares pinned sources' tools with their pin files, and writes the files",
		Args:  cobra.NoArgs,
	}
	cmd.Flags().StringP("config", "c", "", "Configuration file (required)")
	cmd.Flags().StringP("adapter", "a", "", "Name of config adapter to apply (e.g. caddyfile)")
	cmd.Flags().Bool("diff", false, "Print the changes and exit 1 when there are any; write nothing")
	cmd.Flags().Bool("write", false, "Write the pin files (the default without --diff)")
	cmd.Flags().StringSlice("source", nil, "Only these sources")
	cmd.Flags().StringSlice("tool", nil, "Re-pin only these tools (by the name they are pinned under), keeping the other entries")
	cmd.RunE = func(cmd *cobra.Command, _ []string) error {
		file, _ := cmd.Flags().GetString("config")
		adapter, _ := cmd.Flags().GetString("adapter")
		diffOnly, _ := cmd.Flags().GetBool("diff")
		write, _ := cmd.Flags().GetBool("write")
		only, _ := cmd.Flags().GetStringSlice("source")
		tools, _ := cmd.Flags().GetStringSlice("tool")
		if file == "" {
			return fmt.Errorf("--config is required")
		}
		if diffOnly && write {
			return failed(cmd, fmt.Errorf("--diff writes nothing: give --diff or --write"))
		}
		cfg, _, _, err := caddycmd.LoadConfig(file, adapter)
		if err != nil {
			return failed(cmd, err)
		}
		sources, done, err := pinnedSources(cfg, connect)
		defer done()
		if err != nil {
			return failed(cmd, fmt.Errorf("%s: %v", file, err))
		}
		if len(only) > 0 {
			sources = slices.DeleteFunc(sources, func(s PinSource) bool { return !slices.Contains(only, s.Name) })
		}
		if len(sources) == 0 {
			return failed(cmd, fmt.Errorf("%s: no pinned source (pin <file> in a source's block) in this config", file))
		}
		changed, err := pinSources(cmd.OutOrStdout(), sources, tools, !diffOnly)
		if err != nil {
			return failed(cmd, err)
		}
		if diffOnly && changed {
			return failed(cmd, fmt.Errorf("the pinned tools changed: review, then run caddy mcp pin to write the pins"))
		}
		return nil
	}
	return cmd
}

// pinnedSources connects the pinned sources of every mcp handler of an
// adapted config; done ends them all.
func pinnedSources(cfg []byte, connect Pinner) (out []PinSource, done func(), err error) {
	var dones []func()
	done = func() {
		for _, d := range dones {
			d()
		}
	}
	_, err = listEndpoints(cfg, func(handler json.RawMessage) (Endpoint, error) {
		sources, d, err := connect(handler)
		if d != nil {
			dones = append(dones, d)
		}
		out = append(out, sources...)
		return Endpoint{}, err
	})
	return out, done, err
}

// pinSources compares each source's tools with its pin file and prints,
// per source, each changed tool with its whole diff, each new tool and
// each pin whose tool is gone; with write, it writes the files. tools, when
// given, limits the comparison and the writing to those keys. changed
// reports whether anything differs from the files.
func pinSources(w io.Writer, sources []PinSource, tools []string, write bool) (changed bool, err error) {
	files := map[string]*pin.File{}
	var order []string
	for _, s := range sources {
		if _, read := files[s.File]; read {
			continue
		}
		f, err := pin.Read(s.File)
		if errors.Is(err, fs.ErrNotExist) {
			f, err = &pin.File{}, nil
		}
		if err != nil {
			return false, err
		}
		files[s.File] = f
		order = append(order, s.File)
	}
	for _, s := range sources {
		f := files[s.File]
		old := f.Source(s.Name)
		now, err := pin.Of(s.Tools)
		if err != nil {
			return false, fmt.Errorf("source %q: %v", s.Name, err)
		}
		if len(s.Tools) == 0 && len(old) > 0 {
			// A source that is not required loads without its upstream:
			// writing its pins now would drop every approved definition.
			return false, fmt.Errorf("source %q gave no tools (is its upstream reachable?) and %s pins %d: nothing written", s.Name, s.File, len(old))
		}
		wanted := func(key string) bool { return len(tools) == 0 || slices.Contains(tools, key) }
		fmt.Fprintf(w, "source %s (%s):\n", s.Name, s.File)
		same := 0
		next := pin.Pins{}
		for key, p := range old {
			if !wanted(key) {
				next[key] = p // kept as it was
			}
		}
		for _, key := range now.Keys() {
			if !wanted(key) {
				continue
			}
			next[key] = now[key]
			p, pinned := old[key]
			switch {
			case !pinned:
				changed = true
				fmt.Fprintf(w, "  new %s\n", key)
			case p.Hash != now[key].Hash:
				changed = true
				fmt.Fprintf(w, "  changed %s\n", key)
				for _, line := range pin.Diff(p.Definition, now[key].Definition, 0) {
					fmt.Fprintf(w, "    %s\n", line)
				}
			default:
				same++
			}
		}
		for _, key := range old.Keys() {
			if _, still := now[key]; !still && wanted(key) {
				changed = true
				fmt.Fprintf(w, "  gone %s\n", key)
			}
		}
		fmt.Fprintf(w, "  unchanged: %d\n", same)
		f.SetSource(s.Name, next)
	}
	if !write {
		return changed, nil
	}
	sort.Strings(order)
	for _, path := range order {
		if err := files[path].Write(path); err != nil {
			return changed, fmt.Errorf("writing %s: %v", path, err)
		}
		fmt.Fprintf(w, "wrote %s\n", path)
	}
	return changed, nil
}
