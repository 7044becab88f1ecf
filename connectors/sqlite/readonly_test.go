package sqlite_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/edgemcp/edgemcp/connectors/sqlite"
)

// TestReadOnlyRefusesWrites: SQLite refuses every kind of write, including
// turning query_only off first, and the data is unchanged.
func TestReadOnlyRefusesWrites(t *testing.T) {
	path := newDB(t,
		"CREATE TABLE items (id INTEGER PRIMARY KEY, name TEXT)",
		"INSERT INTO items VALUES (1, 'a'), (2, 'b')")
	other := filepath.Join(filepath.Dir(path), "other.db")
	c := open(t, sqlite.Config{Path: path, ReadOnly: true})
	if !c.ReadOnly() {
		t.Error("ReadOnly() = false")
	}

	writes := []struct{ name, sql string }{
		{"insert", "INSERT INTO items VALUES (3, 'x')"},
		{"insert returning", "INSERT INTO items VALUES (4, 'x') RETURNING id"},
		{"update", "UPDATE items SET name = 'z'"},
		{"delete", "DELETE FROM items"},
		{"ddl", "CREATE TABLE other (id INTEGER)"},
		{"query_only off, then insert", "PRAGMA query_only = 0; INSERT INTO items VALUES (5, 'x')"},
		{"attach a new file", "ATTACH '" + other + "' AS o; CREATE TABLE o.t (a)"},
		{"vacuum into", "VACUUM INTO '" + other + "'"},
	}
	for _, w := range writes {
		t.Run(w.name, func(t *testing.T) {
			_, err := c.Query(context.Background(), w.sql, nil)
			pe := publicErr(t, err)
			if strings.Contains(pe.Public, path) {
				t.Errorf("public message %q shows the database path", pe.Public)
			}
		})
	}

	rows := query(t, c, "SELECT id, name FROM items ORDER BY id")
	sameValue(t, "data after refused writes", rows.Values, [][]any{{int64(1), "a"}, {int64(2), "b"}})
	if _, err := os.Stat(other); err == nil {
		t.Errorf("a read-only connector created %s", other)
	}
	// query_only is per connection: the one whose PRAGMA ran must still be
	// read-only at file level, which mode=ro guarantees.
	for range 8 {
		_, err := c.Query(context.Background(), "INSERT INTO items VALUES (6, 'x')", nil)
		publicErr(t, err)
	}
}

// TestReadOnlyMissingFile: mode=ro never creates a database, and the error
// does not show the path.
func TestReadOnlyMissingFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "missing.db")
	_, err := sqlite.Open(context.Background(), sqlite.Config{Path: path, ReadOnly: true})
	pe := publicErr(t, err)
	if strings.Contains(pe.Public, path) || strings.Contains(pe.Public, "missing.db") {
		t.Errorf("public message %q shows the path", pe.Public)
	}
	if _, err := os.Stat(path); err == nil {
		t.Errorf("read-only Open created %s", path)
	}
}

// TestReadWriteWrites is the control.
func TestReadWriteWrites(t *testing.T) {
	c := open(t, sqlite.Config{Path: newDB(t, "CREATE TABLE items (id INTEGER PRIMARY KEY, name TEXT)")})
	rows := query(t, c, "INSERT INTO items VALUES (?, ?) RETURNING id, name", int64(1), "a")
	sameValue(t, "returning", rows.Values, [][]any{{int64(1), "a"}})
	sameValue(t, "count", scalar(t, c, "SELECT count(*) FROM items"), int64(1))
}

// TestFileURI: a "file:" URI path keeps its own parameters; read_only
// overrides a mode the URI sets.
func TestFileURI(t *testing.T) {
	path := newDB(t, "CREATE TABLE t (a INTEGER)", "INSERT INTO t VALUES (1)")
	c := open(t, sqlite.Config{Path: "file:" + path + "?cache=private&mode=rw", ReadOnly: true})
	sameValue(t, "read", scalar(t, c, "SELECT a FROM t"), int64(1))
	_, err := c.Query(context.Background(), "INSERT INTO t VALUES (2)", nil)
	publicErr(t, err)

	// A path with characters that mean something in a URI.
	odd := filepath.Join(t.TempDir(), "a?b#c%d.db")
	w := open(t, sqlite.Config{Path: odd})
	query(t, w, "CREATE TABLE t (a INTEGER)")
	if _, err := os.Stat(odd); err != nil {
		t.Errorf("database not created at the literal path: %v", err)
	}
}
