package pin

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
)

// FormatVersion is the pin file format this package reads and writes.
const FormatVersion = 1

// maxFileSize bounds a pin file: it is read at every load.
const maxFileSize = 64 << 20

// File is a pin file: for each source (by its name in the Caddyfile), the
// pins of its tools. One file may hold several sources, so that an
// operator can commit one file for the whole endpoint.
//
// It is JSON, written indented with keys sorted, each tool's definition
// in full beside its hash: a re-pin committed to version control then
// shows, line by line, what the upstream changed, and `caddy mcp pin
// --diff` can say what changed from the file alone.
//
//	{
//	  "edgemcp_pins": 1,
//	  "sources": {
//	    "files": {
//	      "read_file": {
//	        "sha256": "sha256:9f2c…",
//	        "definition": { "description": "Read a file", "inputSchema": {…}, "name": "read_file" }
//	      }
//	    }
//	  }
//	}
type File struct {
	Sources map[string]Pins
}

// Pins are one source's pins, by the tool's key (Key).
type Pins map[string]Pin

// Pin is one tool's approved definition.
type Pin struct {
	// Hash is Hash of Definition.
	Hash string `json:"sha256"`
	// Definition is the canonical definition that was approved.
	Definition json.RawMessage `json:"definition"`
}

type fileJSON struct {
	Version int                        `json:"edgemcp_pins"`
	Sources map[string]map[string]*Pin `json:"sources"`
}

// Read reads the pin file at path. A file that does not exist is an error
// the caller can tell with errors.Is(err, fs.ErrNotExist).
func Read(path string) (*File, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, maxFileSize+1))
	if err != nil {
		return nil, fmt.Errorf("pin file %s: %v", path, err)
	}
	if len(b) > maxFileSize {
		return nil, fmt.Errorf("pin file %s: larger than %d bytes", path, maxFileSize)
	}
	file, err := Parse(b)
	if err != nil {
		return nil, fmt.Errorf("pin file %s: %v", path, err)
	}
	return file, nil
}

// Parse reads a pin file's text. Each pin's hash must be its recorded
// definition's: a file edited by hand, or cut short, is refused rather
// than half believed.
func Parse(b []byte) (*File, error) {
	var raw fileJSON
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&raw); err != nil {
		return nil, fmt.Errorf("not a pin file: %v", err)
	}
	if raw.Version != FormatVersion {
		return nil, fmt.Errorf("format %d: this gateway reads edgemcp_pins %d", raw.Version, FormatVersion)
	}
	file := &File{Sources: make(map[string]Pins, len(raw.Sources))}
	for source, tools := range raw.Sources {
		pins := make(Pins, len(tools))
		for key, p := range tools {
			if p == nil {
				return nil, fmt.Errorf("source %q, tool %q: no pin", source, key)
			}
			def, err := Canonical(p.Definition)
			if err != nil {
				return nil, fmt.Errorf("source %q, tool %q: definition: %v", source, key, err)
			}
			if Hash(def) != p.Hash {
				return nil, fmt.Errorf("source %q, tool %q: the hash is not the recorded definition's (edited by hand? write the file again with caddy mcp pin)", source, key)
			}
			pins[key] = Pin{Hash: p.Hash, Definition: def}
		}
		file.Sources[source] = pins
	}
	return file, nil
}

// Encode is the file's text: indented, keys sorted, one trailing newline.
func (f *File) Encode() ([]byte, error) {
	raw := fileJSON{Version: FormatVersion, Sources: map[string]map[string]*Pin{}}
	for source, pins := range f.Sources {
		tools := make(map[string]*Pin, len(pins))
		for key, p := range pins {
			tools[key] = &Pin{Hash: p.Hash, Definition: p.Definition}
		}
		raw.Sources[source] = tools
	}
	var v any
	b, err := json.Marshal(raw)
	if err == nil {
		v, err = decode(b) // definitions as values, so that they indent too
	}
	if err == nil {
		b, err = encode(v, "  ")
	}
	if err != nil {
		return nil, err
	}
	return append(b, '\n'), nil
}

// Write writes the file at path whole or not at all (a temporary file in
// the same directory, renamed over it), so that a gateway reading it never
// sees half a file.
func (f *File) Write(path string) error {
	b, err := f.Encode()
	if err != nil {
		return err
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name()) // gone after the rename; else what a failure left
	if _, err := tmp.Write(b); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	if info, err := os.Stat(path); err == nil {
		_ = os.Chmod(tmp.Name(), info.Mode().Perm()) // keep the committed file's mode
	} else {
		_ = os.Chmod(tmp.Name(), 0o644)
	}
	return os.Rename(tmp.Name(), path)
}

// Source is the pins of one source; nil when the file has none.
func (f *File) Source(name string) Pins {
	if f == nil {
		return nil
	}
	return f.Sources[name]
}

// SetSource replaces one source's pins.
func (f *File) SetSource(name string, pins Pins) {
	if f.Sources == nil {
		f.Sources = map[string]Pins{}
	}
	f.Sources[name] = pins
}

// Keys are the pins' keys, sorted.
func (p Pins) Keys() []string {
	keys := make([]string, 0, len(p))
	for k := range p {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
