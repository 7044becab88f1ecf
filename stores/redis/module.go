package redis

import (
	"fmt"
	"time"

	"github.com/caddyserver/caddy/v2"

	"github.com/edgemcp/edgemcp/pipeline"
)

func init() { caddy.RegisterModule(Module{}) }

// Module is the guest module mcp.stores.redis: a pipeline.SharedStore on
// the Redis at URL. The gateway builds it from the Caddyfile's redis
// settings (the cache's redis, rate_limit_redis, an approval's record).
type Module struct {
	// URL is redis:// or rediss://, placeholders expanded.
	URL string `json:"url"`
	// Timeout bounds each operation (default 100ms).
	Timeout caddy.Duration `json:"timeout,omitempty"`

	*Store
	key string
}

// clients shares a Redis client across reloads per URL and timeout: the
// old config's in-flight calls keep a working client while the new one
// takes over.
var clients = caddy.NewUsagePool()

type sharedClient struct{ *Store }

func (s sharedClient) Destruct() error { return s.Close() }

// CaddyModule returns the Caddy module information.
func (Module) CaddyModule() caddy.ModuleInfo {
	return caddy.ModuleInfo{ID: "mcp.stores.redis", New: func() caddy.Module { return new(Module) }}
}

// Provision takes the shared client; it does not connect (Open).
func (m *Module) Provision(caddy.Context) error {
	timeout := time.Duration(m.Timeout)
	if timeout <= 0 {
		timeout = 100 * time.Millisecond
	}
	// The key holds the URL (and any password) and is never logged.
	m.key = fmt.Sprintf("%s\x00%d", m.URL, timeout)
	val, _, err := clients.LoadOrNew(m.key, func() (caddy.Destructor, error) {
		s, err := Open(m.URL, timeout)
		if err != nil {
			return nil, err
		}
		return sharedClient{s}, nil
	})
	if err != nil {
		return err
	}
	m.Store = val.(sharedClient).Store
	return nil
}

// Cleanup releases this config's share of the client.
func (m *Module) Cleanup() error {
	if m.Store != nil {
		_, _ = clients.Delete(m.key)
		m.Store = nil
	}
	return nil
}

// Interface guards.
var (
	_ pipeline.SharedStore = (*Module)(nil)
	_ caddy.Provisioner    = (*Module)(nil)
	_ caddy.CleanerUpper   = (*Module)(nil)
)
