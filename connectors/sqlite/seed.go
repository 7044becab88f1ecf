package sqlite

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"time"

	"github.com/edgemcp/edgemcp/pipeline"
)

// seed creates the database file from the script when the file does not
// exist yet. The script runs on a temporary file next to the target, on a
// read-write connection; only a complete database is then linked into
// place. os.Link fails if the target appeared meanwhile (another process
// seeded first), in which case that database is kept and ours dropped.
func seed(ctx context.Context, path, script string, busy time.Duration) error {
	target, err := filePath(path)
	if err != nil {
		return &pipeline.PublicError{Public: "sqlite: invalid database path", Cause: err}
	}
	if target == "" {
		return &pipeline.PublicError{Public: "sqlite: seed needs a database file, not an in-memory database"}
	}
	if _, err := os.Stat(target); err == nil {
		return nil // exists: never seed twice
	} else if !errors.Is(err, fs.ErrNotExist) {
		return &pipeline.PublicError{Public: "sqlite: cannot access the database file", Cause: err}
	}

	sqlText, err := os.ReadFile(script)
	if err != nil {
		return &pipeline.PublicError{Public: "sqlite: cannot read the seed script", Cause: err}
	}

	var suffix [6]byte
	_, _ = rand.Read(suffix[:])
	tmp := target + ".seed-" + hex.EncodeToString(suffix[:])
	defer removeDB(tmp)
	if err := runScript(ctx, tmp, string(sqlText), busy); err != nil {
		return err
	}
	if err := os.Link(tmp, target); err != nil {
		if errors.Is(err, fs.ErrExist) {
			return nil // seeded concurrently by someone else
		}
		// No hard links on this filesystem: rename (which would replace a
		// concurrently created file, an acceptable race for a demo seed).
		if err := os.Rename(tmp, target); err != nil {
			return &pipeline.PublicError{Public: "sqlite: cannot move the seeded database into place", Cause: err}
		}
	}
	return nil
}

// runScript executes the whole script (modernc runs every statement of a
// multi-statement Exec) in one read-write connection, then closes it so
// that the journal is gone before the file moves.
func runScript(ctx context.Context, file, script string, busy time.Duration) error {
	dsn, err := buildDSN(file, false, busy)
	if err != nil {
		return &pipeline.PublicError{Public: "sqlite: invalid database path", Cause: err}
	}
	db, err := sql.Open("sqlite", dsn)
	if err != nil {
		return &pipeline.PublicError{Public: "sqlite: cannot create the database", Cause: err}
	}
	defer db.Close()
	db.SetMaxOpenConns(1)
	if _, err := db.ExecContext(ctx, script); err != nil {
		return &pipeline.PublicError{Public: fmt.Sprintf("sqlite: seed script failed: %v", scrubPath(err.Error(), file)), Cause: err}
	}
	if err := db.Close(); err != nil {
		return &pipeline.PublicError{Public: "sqlite: cannot create the database", Cause: err}
	}
	return nil
}

// removeDB removes a database file and its possible journals.
func removeDB(file string) {
	for _, suffix := range []string{"", "-journal", "-wal", "-shm"} {
		_ = os.Remove(file + suffix)
	}
}
