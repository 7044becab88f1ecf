package redis

import (
	"context"
	"strings"
	"time"

	goredis "github.com/redis/go-redis/v9"

	"github.com/edgemcp/edgemcp/pipeline"
	"github.com/edgemcp/edgemcp/pipeline/cmdtemplate"
)

// Config is a connector's configuration, as written in the Caddyfile.
type Config struct {
	// URL is redis://[user:pass@]host:port/db (rediss:// for TLS), with
	// go-redis' query options (dial_timeout, pool_size ...).
	URL string
	// MaxConns caps the pool; 0 keeps go-redis' default (10 per CPU).
	MaxConns int
	// ReadOnly allows only the read-only commands of readOnlyCommands,
	// checked at load.
	ReadOnly bool
	// StatementTimeout bounds one command (socket reads and writes); 0
	// means defaultTimeout.
	StatementTimeout time.Duration
	// MaxRows caps the elements of a reply (array or map, at any depth);
	// 0 means pipeline.DefaultMaxRows.
	MaxRows int
	// MaxResultSize caps the bytes of a reply as it is converted (its
	// strings plus pipeline.ValueOverhead per value); 0 means
	// pipeline.DefaultMaxResultSize.
	MaxResultSize int64
}

// defaultTimeout bounds a command when no statement_timeout is set.
const defaultTimeout = 5 * time.Second

// Connector runs one command per call on a go-redis pool. It is safe for
// concurrent use.
type Connector struct {
	client   *goredis.Client
	readOnly bool
	maxRows  int
	maxSize  int64 // max_result_size
}

// Open builds the client. Like the SQL connectors it does not connect: a
// server that is down fails the first call ("database unavailable").
func Open(_ context.Context, cfg Config) (*Connector, error) {
	opt, err := goredis.ParseURL(cfg.URL)
	if err != nil {
		// go-redis quotes parts of the URL in some messages: Cause only.
		return nil, &pipeline.PublicError{Public: "invalid redis URL (want redis://[user:pass@]host:port/db)", Cause: err}
	}
	if cfg.MaxConns > 0 {
		opt.PoolSize = cfg.MaxConns
	}
	timeout := cfg.StatementTimeout
	if timeout <= 0 {
		timeout = defaultTimeout
	}
	opt.ReadTimeout, opt.WriteTimeout = timeout, timeout
	// A caller's deadline (and our per-call timeout) applies to the socket.
	opt.ContextTimeoutEnabled = true
	if !cfg.ReadOnly {
		// A write retried after a network error may run twice (INCR,
		// LPUSH): no retries where writes are possible.
		opt.MaxRetries = -1
	}
	// No CLIENT SETINFO on connect: older servers and proxies refuse it.
	opt.DisableIdentity = true
	c := &Connector{client: goredis.NewClient(opt), readOnly: cfg.ReadOnly, maxRows: cfg.MaxRows, maxSize: cfg.MaxResultSize}
	if c.maxRows <= 0 {
		c.maxRows = pipeline.DefaultMaxRows
	}
	if c.maxSize <= 0 {
		c.maxSize = pipeline.DefaultMaxResultSize
	}
	return c, nil
}

// Close closes the pool.
func (c *Connector) Close() { _ = c.client.Close() }

// Client exposes the pool for statistics (PoolStats).
func (c *Connector) Client() *goredis.Client { return c.client }

// ReadOnly reports whether only read-only commands are allowed.
func (c *Connector) ReadOnly() bool { return c.readOnly }

// CheckCommand refuses at load what this connector will not run (see
// the package function CheckCommand).
func (c *Connector) CheckCommand(cmd *cmdtemplate.Command) error {
	return CheckCommand(cmd, c.readOnly)
}

// CheckCommand refuses what a connector will not run: commands that change
// the pooled connection's state (on every connector) and, on a read-only
// connector, anything not known to be read-only. It needs no server, so
// the Caddyfile adapter can run it too.
func CheckCommand(cmd *cmdtemplate.Command, readOnly bool) error {
	name := cmd.Name()
	if why, ok := connectionCommands[name]; ok {
		return &pipeline.PublicError{Public: name + " cannot be a tool's command: " + why}
	}
	if !readOnly {
		return nil
	}
	if sub, ok := readOnlySubcommands[name]; ok {
		arg, literal := cmd.Literal(1)
		if !literal || !sub[strings.ToUpper(arg)] {
			return &pipeline.PublicError{Public: name + " on a read_only connector takes one of the read-only subcommands " + list(sub) + ", written literally"}
		}
		return nil
	}
	if !readOnlyCommands[name] {
		return &pipeline.PublicError{Public: name + " is not a read-only command and the connector is read_only (allowed: GET, HGETALL, ZRANGE and the other commands Redis flags readonly)"}
	}
	return nil
}

// Do runs one command and returns its reply as JSON-ready values: bulk
// and simple strings as strings, integers as numbers (strings beyond
// ±2^53), doubles as numbers, arrays and sets as arrays, maps as objects,
// nil as null. Errors are *pipeline.PublicError.
func (c *Connector) Do(ctx context.Context, args []string) (any, error) {
	a := make([]any, len(args))
	for i, s := range args {
		a[i] = s
	}
	v, err := c.client.Do(ctx, a...).Result()
	if err == goredis.Nil {
		return nil, nil
	}
	if err != nil {
		return nil, publicError(ctx, err)
	}
	out, err := jsonValue(v, &budget{elems: c.maxRows, bytes: c.maxSize, maxSize: c.maxSize})
	if err != nil {
		return nil, err
	}
	return out, nil
}
