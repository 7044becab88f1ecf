package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net/url"
	"strings"
	"time"

	"github.com/edgemcp/edgemcp/pipeline"

	_ "modernc.org/sqlite" // registers the "sqlite" database/sql driver
)

// Config is a connector's configuration, as written in the Caddyfile.
type Config struct {
	// Path is a file path or a "file:" URI (whose own parameters, such as
	// cache=shared, are kept).
	Path string
	// ReadOnly opens the database read-only (mode=ro, query_only).
	ReadOnly bool
	// MaxConns caps the connection pool; 0 means defaultMaxConns.
	MaxConns int
	// StatementTimeout bounds every statement (through its context); 0
	// means no bound beyond the caller's context.
	StatementTimeout time.Duration
	// Seed is a .sql script run once to create the database when the file
	// does not exist yet.
	Seed string
	// MaxRows caps the rows of one result; 0 means pipeline.DefaultMaxRows.
	MaxRows int
	// MaxResultSize caps the bytes of one result, counted as its rows
	// arrive (collect); 0 means pipeline.DefaultMaxResultSize.
	MaxResultSize int64
}

const (
	// defaultMaxConns bounds database/sql's otherwise unlimited pool: each
	// modernc connection carries its own page cache.
	defaultMaxConns = 4
	// defaultBusyTimeout is how long a statement waits for another
	// connection's lock before failing with SQLITE_BUSY.
	defaultBusyTimeout = 5 * time.Second
)

// Open opens (and, with Seed, first creates) the database and checks that
// it can be read, so that a wrong path fails the configuration load.
func Open(ctx context.Context, cfg Config) (*Connector, error) {
	if cfg.Path == "" {
		return nil, &pipeline.PublicError{Public: "sqlite: no database path"}
	}
	busy := defaultBusyTimeout
	if cfg.StatementTimeout > 0 {
		busy = cfg.StatementTimeout
	}
	if cfg.Seed != "" {
		if err := seed(ctx, cfg.Path, cfg.Seed, busy); err != nil {
			return nil, err
		}
	}
	dsn, err := buildDSN(cfg.Path, cfg.ReadOnly, busy)
	if err != nil {
		return nil, &pipeline.PublicError{Public: "sqlite: invalid database path", Cause: err}
	}
	var db *sql.DB
	if cfg.ReadOnly {
		db = sql.OpenDB(roConnector{dsn: dsn})
	} else if db, err = sql.Open("sqlite", dsn); err != nil {
		return nil, &pipeline.PublicError{Public: "sqlite: cannot open database", Cause: err}
	}
	n := cfg.MaxConns
	if n <= 0 {
		n = defaultMaxConns
	}
	db.SetMaxOpenConns(n)
	db.SetMaxIdleConns(n) // database/sql keeps only 2 by default: reopening costs a page cache

	c := &Connector{db: db, readOnly: cfg.ReadOnly, timeout: cfg.StatementTimeout, path: cfg.Path, maxRows: cfg.MaxRows, maxSize: cfg.MaxResultSize}
	if file, err := filePath(cfg.Path); err == nil && file != "" && !cfg.ReadOnly {
		c.resetSessions = true
	}
	if c.maxRows <= 0 {
		c.maxRows = pipeline.DefaultMaxRows
	}
	if c.maxSize <= 0 {
		c.maxSize = pipeline.DefaultMaxResultSize
	}
	if err := db.PingContext(ctx); err != nil {
		db.Close()
		return nil, &pipeline.PublicError{Public: "sqlite: cannot open database: " + c.scrub(err.Error()), Cause: err}
	}
	return c, nil
}

// buildDSN turns Path into a "file:" URI, so that SQLite honours mode=ro
// (the driver drops URI parameters from a plain file name), and adds our
// parameters, replacing any the path already set for them.
func buildDSN(path string, readOnly bool, busy time.Duration) (string, error) {
	// A plain path is literal ('?' included); only a URI has parameters.
	base, rawQuery := "file:"+escapePath(path), ""
	if strings.HasPrefix(path, "file:") {
		base, rawQuery, _ = strings.Cut(path, "?")
	}
	q, err := url.ParseQuery(rawQuery)
	if err != nil {
		return "", err
	}
	q.Set("_busy_timeout", fmt.Sprint(busy.Milliseconds()))
	if readOnly {
		q.Set("mode", "ro")
		q.Set("_query_only", "1")
	} else if q.Get("mode") == "ro" {
		return "", errors.New("mode=ro in the path of a connector that is not read_only")
	}
	return base + "?" + q.Encode(), nil
}

// escapePath escapes the characters that would end or alter a URI path;
// SQLite percent-decodes the path of a "file:" URI.
var escapePath = strings.NewReplacer("%", "%25", "?", "%3f", "#", "%23").Replace

// filePath is the filesystem path of a Path, "" for an in-memory
// database.
func filePath(path string) (string, error) {
	if !strings.HasPrefix(path, "file:") {
		if path == ":memory:" {
			return "", nil
		}
		return path, nil
	}
	rest, rawQuery, _ := strings.Cut(strings.TrimPrefix(path, "file:"), "?")
	rest, _, _ = strings.Cut(rest, "#")
	if q, err := url.ParseQuery(rawQuery); err == nil && q.Get("mode") == "memory" {
		return "", nil
	}
	if strings.HasPrefix(rest, "//") { // file://[localhost]/abs/path
		rest = rest[2:]
		i := strings.IndexByte(rest, '/')
		if i < 0 {
			return "", errors.New("file: URI without a path")
		}
		rest = rest[i:]
	}
	if rest == ":memory:" {
		return "", nil
	}
	return url.PathUnescape(rest)
}
