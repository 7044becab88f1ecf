package sqlite_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/edgemcp/edgemcp/connectors/sqlite"
)

const seedSQL = `
CREATE TABLE users (id INTEGER PRIMARY KEY, name TEXT NOT NULL, active BOOLEAN);
INSERT INTO users VALUES (1, 'ada', 1), (2, 'grace', 0);
`

// TestSeed: the script creates a missing database once; it never runs
// again on an existing file.
func TestSeed(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "demo.db")
	script := filepath.Join(dir, "seed.sql")
	writeFile(t, script, seedSQL)

	for _, readOnly := range []bool{true, false} {
		c := open(t, sqlite.Config{Path: path, Seed: script, ReadOnly: readOnly})
		rows := query(t, c, "SELECT id, name, active FROM users ORDER BY id")
		sameValue(t, "seeded rows", rows.Values, [][]any{{int64(1), "ada", true}, {int64(2), "grace", false}})
		c.Close()
	}

	// Running it twice would fail (the table exists) or duplicate rows; a
	// script that cannot even be read shows it is not looked at.
	c := open(t, sqlite.Config{Path: path, Seed: filepath.Join(dir, "gone.sql"), ReadOnly: true})
	sameValue(t, "still two users", scalar(t, c, "SELECT count(*) FROM users"), int64(2))

	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		if strings.Contains(e.Name(), ".seed-") {
			t.Errorf("temporary seed file left behind: %s", e.Name())
		}
	}
}

// TestSeedFailure: a failing script leaves no database (so the next start
// tries again) and no temporary file, and says what failed without paths.
func TestSeedFailure(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "demo.db")
	script := filepath.Join(dir, "seed.sql")
	writeFile(t, script, "CREATE TABLE ok (a INTEGER);\nINSERT INTO nope VALUES (1);\n")

	_, err := sqlite.Open(context.Background(), sqlite.Config{Path: path, Seed: script, ReadOnly: true})
	pe := publicErr(t, err)
	if !strings.Contains(pe.Public, "no such table: nope") {
		t.Errorf("public message %q does not say what failed", pe.Public)
	}
	if strings.Contains(pe.Public, dir) {
		t.Errorf("public message %q shows a path", pe.Public)
	}
	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		if e.Name() != "seed.sql" {
			t.Errorf("left behind: %s", e.Name())
		}
	}
}

// TestSeedInMemoryRefused: there is no file to create.
func TestSeedInMemoryRefused(t *testing.T) {
	script := filepath.Join(t.TempDir(), "seed.sql")
	writeFile(t, script, seedSQL)
	_, err := sqlite.Open(context.Background(), sqlite.Config{Path: ":memory:", Seed: script})
	publicErr(t, err)
}
