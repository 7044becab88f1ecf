package script

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"

	"github.com/dop251/goja"
	"github.com/dop251/goja/parser"
	"github.com/evanw/esbuild/pkg/api"
)

// program is one bundled and compiled script file. It is immutable and
// shared by every runtime (and every tool) that runs the file.
type program struct {
	file string // the path as configured, for messages
	prog *goja.Program
}

// SplitSpec splits "path/to/file.js#name" into the file and the export
// name; without "#" the export is "default".
func SplitSpec(spec string) (file, export string) {
	if i := strings.LastIndexByte(spec, '#'); i >= 0 {
		return spec[:i], spec[i+1:]
	}
	return spec, "default"
}

// Loader bundles and compiles script files, once per file: tools that
// share a file share its compiled program. A Loader lives for one
// configuration load (Provision) and is safe for concurrent use.
type Loader struct {
	mu    sync.Mutex
	progs map[string]*program
}

// NewLoader returns an empty Loader.
func NewLoader() *Loader { return &Loader{progs: map[string]*program{}} }

// Load bundles spec's file, compiles it, checks that the export exists and
// is a function, and returns a Script that runs it under opts. Every
// mistake (missing file, syntax error with file:line:column, unresolved
// import, missing export, a throw at module top level) is an error here,
// at configuration load, never at call time.
func (l *Loader) Load(spec string, opts Options) (*Script, error) {
	file, export := SplitSpec(spec)
	if file == "" || export == "" {
		return nil, fmt.Errorf("script %q: want path/to/file.js or path/to/file.js#export", spec)
	}
	p, err := l.program(file)
	if err != nil {
		return nil, err
	}
	s := newScript(p, export, opts)
	// Evaluating the module once checks the export and leaves a warm
	// runtime in the pool for the first call.
	r, err := s.newRunner()
	if err != nil {
		return nil, err
	}
	s.idle <- r
	return s, nil
}

// Load is Loader.Load with a loader of its own (no sharing of programs).
func Load(spec string, opts Options) (*Script, error) { return NewLoader().Load(spec, opts) }

func (l *Loader) program(file string) (*program, error) {
	abs, err := filepath.Abs(file)
	if err != nil {
		return nil, fmt.Errorf("script %s: %v", file, err)
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if p, ok := l.progs[abs]; ok {
		return p, nil
	}
	p, err := compile(file, abs)
	if err != nil {
		return nil, err
	}
	l.progs[abs] = p
	return p, nil
}

// compile bundles the file with esbuild (ESM or CommonJS, JavaScript or
// TypeScript, local imports and node_modules packages inlined) into one
// CommonJS module and compiles it for goja. The module is wrapped in a
// function, as Node does, so its top-level declarations stay local.
func compile(file, abs string) (*program, error) {
	if st, err := os.Stat(abs); err != nil {
		return nil, fmt.Errorf("script %s: %v", file, errors.Unwrap(err))
	} else if st.IsDir() {
		return nil, fmt.Errorf("script %s: is a directory", file)
	}
	res := api.Build(api.BuildOptions{
		EntryPoints:   []string{abs},
		Bundle:        true,
		Write:         false,
		Outfile:       abs + ".bundle.js", // names the output only
		Format:        api.FormatCommonJS,
		Platform:      api.PlatformNeutral,
		MainFields:    []string{"module", "main"},
		Target:        api.ESNext,
		Supported:     map[string]bool{"async-generator": false, "for-await": false, "dynamic-import": false},
		Sourcemap:     api.SourceMapInline,
		LogLevel:      api.LogLevelSilent,
		AbsWorkingDir: filepath.Dir(abs),
		Charset:       api.CharsetUTF8,
		LegalComments: api.LegalCommentsNone,
		Metafile:      true,
	})
	if len(res.Errors) > 0 {
		return nil, buildError(file, abs, res.Errors)
	}
	if len(res.OutputFiles) != 1 {
		return nil, fmt.Errorf("script %s: bundling produced %d files, want 1", file, len(res.OutputFiles))
	}
	prologue := ""
	if entryIsESM(res.Metafile, abs) {
		// ES modules are strict code; esbuild's CommonJS output drops
		// that, and with it the TypeError on writes to frozen globals.
		prologue = `"use strict";`
	}
	src := "(function (exports, require, module) {" + prologue + string(res.OutputFiles[0].Contents) + "\n})"
	ast, err := goja.Parse(abs, src, parser.WithSourceMapLoader(noFileSourceMaps))
	if err != nil {
		return nil, fmt.Errorf("script %s: %v", file, err)
	}
	prog, err := goja.CompileAST(ast, false)
	if err != nil {
		return nil, fmt.Errorf("script %s: %v", file, err)
	}
	return &program{file: file, prog: prog}, nil
}

// entryIsESM reports whether esbuild saw the entry file as an ES module.
func entryIsESM(metafile, abs string) bool {
	var meta struct {
		Inputs map[string]struct {
			Format string `json:"format"`
		} `json:"inputs"`
	}
	if json.Unmarshal([]byte(metafile), &meta) != nil {
		return false
	}
	for path, in := range meta.Inputs {
		if path == abs || filepath.Join(filepath.Dir(abs), path) == abs {
			return in.Format == "esm"
		}
	}
	return false
}

// noFileSourceMaps refuses source maps referenced by path: the bundle
// carries its own inline map, and scripts never read files.
func noFileSourceMaps(string) ([]byte, error) { return nil, errors.New("no external source maps") }

// buildError names every esbuild error by file, line and column (1-based),
// relative to the configured script's directory where possible.
func buildError(file, abs string, msgs []api.Message) error {
	var b strings.Builder
	for i, m := range msgs {
		if i == 3 {
			fmt.Fprintf(&b, "\n(and %d more)", len(msgs)-3)
			break
		}
		if i > 0 {
			b.WriteByte('\n')
		}
		if loc := m.Location; loc != nil {
			name := loc.File
			if filepath.Join(filepath.Dir(abs), name) == abs || name == abs {
				name = file
			} else if !filepath.IsAbs(name) {
				name = filepath.Join(filepath.Dir(file), name)
			}
			fmt.Fprintf(&b, "%s:%d:%d: %s", name, loc.Line, loc.Column+1, m.Text)
		} else {
			fmt.Fprintf(&b, "%s: %s", file, m.Text)
		}
	}
	return errors.New(b.String())
}
