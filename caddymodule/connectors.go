package caddymodule

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/caddyserver/caddy/v2"

	"github.com/edgemcp/edgemcp/connectors/mysql"
	"github.com/edgemcp/edgemcp/connectors/postgres"
	"github.com/edgemcp/edgemcp/connectors/sqlite"
	"github.com/edgemcp/edgemcp/pipeline"
	"github.com/edgemcp/edgemcp/pipeline/connguard"
)

// connectorPools shares open database pools across config reloads: Caddy
// provisions the new config before cleaning up the old one, so a connector
// whose settings did not change keeps its pool (the usage count goes
// 1 → 2 → 1) and in-flight queries of the old config are not cut off.
var connectorPools = caddy.NewUsagePool()

// opener opens a backend for an expanded connector config.
type opener func(ctx context.Context, c ConnectorConfig) (pipeline.SQLConnector, func(), error)

var connectorTypes = map[string]opener{
	"postgres": func(ctx context.Context, c ConnectorConfig) (pipeline.SQLConnector, func(), error) {
		conn, err := postgres.Open(ctx, postgres.Config{
			DSN:              c.DSN,
			MaxConns:         int32(c.MaxConns),
			ReadOnly:         c.ReadOnly,
			StatementTimeout: time.Duration(c.StatementTimeout),
			MaxRows:          c.MaxRows,
		})
		if err != nil {
			return nil, nil, err
		}
		return conn, conn.Close, nil
	},
	"mysql": func(ctx context.Context, c ConnectorConfig) (pipeline.SQLConnector, func(), error) {
		conn, err := mysql.Open(ctx, mysql.Config{
			DSN:              c.DSN,
			MaxConns:         c.MaxConns,
			ReadOnly:         c.ReadOnly,
			StatementTimeout: time.Duration(c.StatementTimeout),
			MaxRows:          c.MaxRows,
		})
		if err != nil {
			return nil, nil, err
		}
		return conn, conn.Close, nil
	},
	"sqlite": func(ctx context.Context, c ConnectorConfig) (pipeline.SQLConnector, func(), error) {
		conn, err := sqlite.Open(ctx, sqlite.Config{
			Path:             c.DSN,
			ReadOnly:         c.ReadOnly,
			MaxConns:         c.MaxConns,
			StatementTimeout: time.Duration(c.StatementTimeout),
			Seed:             c.Seed,
			MaxRows:          c.MaxRows,
		})
		if err != nil {
			return nil, nil, err
		}
		return conn, conn.Close, nil
	},
}

func knownConnectorTypes() string {
	names := make([]string, 0, len(connectorTypes))
	for n := range connectorTypes {
		names = append(names, n)
	}
	for n := range commandConnectorTypes {
		names = append(names, n)
	}
	sort.Strings(names)
	return strings.Join(names, ", ")
}

// sharedConnector is a UsagePool value.
type sharedConnector struct {
	pipeline.SQLConnector
	close func()
	guard *connguard.Pool // health and connection slots (connector_guard.go)
}

func (s *sharedConnector) Destruct() error {
	s.guard.Close()
	s.close()
	return nil
}

// poolKey identifies a pool by everything that shapes it. It holds the DSN
// (with any password) and so must never be logged.
func poolKey(c ConnectorConfig) string {
	return fmt.Sprintf("%s\x00%s\x00%d\x00%t\x00%d\x00%s\x00%d", c.Type, c.DSN, c.MaxConns, c.ReadOnly, c.StatementTimeout, c.Seed, c.MaxRows)
}

// openShared returns the UsagePool entry of c, built by create when no
// config uses it yet. The caller must releaseConnector(key) exactly once.
func openShared(c ConnectorConfig, create func(ctx context.Context) (caddy.Destructor, error)) (any, string, error) {
	key := poolKey(c)
	val, _, err := connectorPools.LoadOrNew(key, func() (caddy.Destructor, error) {
		// The pool outlives this config's context, so it must not be tied to it.
		d, err := create(context.Background())
		if err == nil {
			poolsOpened.WithLabelValues(c.Type).Inc()
		}
		return d, err
	})
	if err != nil {
		return nil, "", fmt.Errorf("connector %q (%s): %s", c.Name, c.Type, pipeline.SafeText(err, "cannot open"))
	}
	return val, key, nil
}

// acquireConnector returns the shared pool for c, opening it if no config
// uses it yet. The caller must releaseConnector(key) exactly once.
func acquireConnector(c ConnectorConfig) (pipeline.SQLConnector, string, error) {
	open, ok := connectorTypes[c.Type]
	if !ok {
		return nil, "", fmt.Errorf("connector %q: unknown type %q (want %s)", c.Name, c.Type, knownConnectorTypes())
	}
	val, key, err := openShared(c, func(ctx context.Context) (caddy.Destructor, error) {
		conn, closeFn, err := open(ctx, c)
		if err != nil {
			return nil, err
		}
		return &sharedConnector{SQLConnector: conn, close: closeFn, guard: newGuardPool(conn, c)}, nil
	})
	if err != nil {
		return nil, "", err
	}
	guarded, err := guardConnector(val.(*sharedConnector).guard, c)
	if err != nil {
		releaseConnector(key)
		return nil, "", err
	}
	return guarded, key, nil
}

func releaseConnector(key string) {
	_, _ = connectorPools.Delete(key)
}
