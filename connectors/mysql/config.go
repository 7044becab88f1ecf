package mysql

import (
	"fmt"
	"net"
	"net/url"
	"strings"
	"time"

	driver "github.com/go-sql-driver/mysql"

	"github.com/edgemcp/edgemcp/pipeline"
)

// Config is a connector's configuration, as written in the Caddyfile.
type Config struct {
	// DSN is a mysql://user:pass@host:port/db?params URL or the driver's
	// own user:pass@tcp(host:port)/db?params form.
	DSN string
	// MaxConns caps the pool; 0 means defaultMaxConns.
	MaxConns int
	// ReadOnly runs every statement in START TRANSACTION READ ONLY.
	ReadOnly bool
	// StatementTimeout bounds every statement, on the server
	// (max_statement_time on MariaDB, max_execution_time on MySQL) and
	// on the client; 0 means the caller's context only.
	StatementTimeout time.Duration
	// MaxRows caps the rows of one result; 0 means pipeline.DefaultMaxRows.
	MaxRows int
	// MaxResultSize caps the bytes of one result, counted as its rows
	// arrive (collect); 0 means pipeline.DefaultMaxResultSize.
	MaxResultSize int64
}

const (
	// defaultMaxConns bounds database/sql's otherwise unlimited pool: a
	// DBA sizes max_connections for known clients.
	defaultMaxConns = 10
	// dialTimeout bounds connecting when the DSN sets no timeout.
	dialTimeout = 10 * time.Second
	// idleLifetime recycles idle connections before the server's
	// wait_timeout (8h by default, often lowered) drops them under us.
	idleLifetime = 5 * time.Minute
)

// parseDSN reads either DSN form into the driver's configuration and pins
// the options that our guarantees depend on.
func parseDSN(dsn string) (*driver.Config, error) {
	var cfg *driver.Config
	if strings.HasPrefix(dsn, "mysql://") || strings.HasPrefix(dsn, "mariadb://") {
		u, err := url.Parse(dsn)
		if err != nil {
			// url's message quotes the whole string, password included.
			return nil, &pipeline.PublicError{Public: "invalid mysql connection URL"}
		}
		if cfg, err = driver.ParseDSN("/?" + u.RawQuery); err != nil {
			return nil, &pipeline.PublicError{Public: "invalid mysql connection URL parameters", Cause: err}
		}
		if u.User != nil {
			cfg.User = u.User.Username()
			cfg.Passwd, _ = u.User.Password()
		}
		host, port := u.Hostname(), u.Port()
		if host == "" {
			host = "127.0.0.1"
		}
		if port == "" {
			port = "3306"
		}
		cfg.Net, cfg.Addr = "tcp", net.JoinHostPort(host, port)
		cfg.DBName = strings.TrimPrefix(u.Path, "/")
	} else {
		var err error
		if cfg, err = driver.ParseDSN(dsn); err != nil {
			// The driver's messages can quote parts of the DSN: Cause only.
			return nil, &pipeline.PublicError{Public: "invalid mysql connection string", Cause: err}
		}
	}
	if err := pin(cfg); err != nil {
		return nil, err
	}
	return cfg, nil
}

// pin refuses DSN options that would undo a guarantee and sets the ones
// the connector relies on.
func pin(cfg *driver.Config) error {
	switch {
	case cfg.InterpolateParams:
		// Interpolation splices escaped values into the SQL text on the
		// client; edgemcp binds values, always (docs/architecture.md, Templates).
		return &pipeline.PublicError{Public: "interpolateParams=true is not allowed: values are always bound by the server"}
	case cfg.MultiStatements:
		// One statement per call: a second statement could end the
		// READ ONLY transaction and write.
		return &pipeline.PublicError{Public: "multiStatements=true is not allowed: a statement is one statement"}
	case cfg.AllowAllFiles:
		return &pipeline.PublicError{Public: "allowAllFiles=true is not allowed"}
	}
	// Dates and times are formatted from the server's text (dateTimeValue),
	// so the driver must not turn them into time.Time in some location.
	cfg.ParseTime = false
	// The liveness check is how a pooled connection whose server side
	// went away (KILL, a restart, wait_timeout) is found before anything
	// is written to it; database/sql then takes another (unsent).
	// Without it the statement is written, the read fails, and the call
	// fails: the driver cannot tell whether the server ran it.
	cfg.CheckConnLiveness = true
	if cfg.Timeout == 0 {
		cfg.Timeout = dialTimeout
	}
	for k := range cfg.Params {
		if strings.EqualFold(k, "time_zone") {
			return &pipeline.PublicError{Public: fmt.Sprintf("the %s parameter is not allowed: TIMESTAMP values are returned in UTC", k)}
		}
	}
	return nil
}
