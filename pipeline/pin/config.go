package pin

import (
	"errors"
	"fmt"
	"io/fs"
)

// Config is a source's `pin <file>` and `pin new allow`, as the gateway's
// source config carries it.
type Config struct {
	File     string `json:"file"`
	AllowNew bool   `json:"allow_new,omitempty"`
}

// Load reads the pins of source from c.File. A file that does not exist
// is an error saying how to write it: a source meant to be pinned that
// has no file is a deployment mistake, not a source with nothing approved.
func (c Config) Load(source string) (Pins, error) {
	f, err := Read(c.File)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("pin file %s does not exist: write it with caddy mcp pin, review and commit it", c.File)
	}
	if err != nil {
		return nil, err
	}
	return f.Source(source), nil
}
