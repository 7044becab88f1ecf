package caddymodule

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/caddyserver/caddy/v2"

	"github.com/edgemcp/edgemcp/caddymodule/telemetry"
	"github.com/edgemcp/edgemcp/pipeline"
	"github.com/edgemcp/edgemcp/pipeline/connguard"
)

// connectorPools shares open database pools across config reloads: Caddy
// provisions the new config before cleaning up the old one, so a connector
// whose settings did not change keeps its pool (the usage count goes
// 1 → 2 → 1) and in-flight queries of the old config are not cut off.
var connectorPools = caddy.NewUsagePool()

// Connector types are guest modules mcp.connectors.<type> (postgres,
// mysql, sqlite and redis are built in; a third party adds one with xcaddy
// --with), each a pipeline.SQLDriver or pipeline.CommandDriver.

// connectorDriver returns the driver of a connector type, or an error that
// lists the types this build has.
func connectorDriver(typ string) (any, error) {
	info, err := caddy.GetModule("mcp.connectors." + typ)
	if err != nil {
		return nil, fmt.Errorf("unknown type %q (want %s)", typ, knownConnectorTypes())
	}
	drv := info.New()
	switch drv.(type) {
	case pipeline.SQLDriver, pipeline.CommandDriver:
		return drv, nil
	}
	return nil, fmt.Errorf("module mcp.connectors.%s (%T) is neither an SQL nor a command driver", typ, drv)
}

// sqlDriver is the SQL driver of a type; ok is false for other types.
func sqlDriver(typ string) (pipeline.SQLDriver, bool) {
	drv, err := connectorDriver(typ)
	d, ok := drv.(pipeline.SQLDriver)
	return d, err == nil && ok
}

// commandDriver is the command driver of a type; ok is false for others.
func commandDriver(typ string) (pipeline.CommandDriver, bool) {
	drv, err := connectorDriver(typ)
	d, ok := drv.(pipeline.CommandDriver)
	return d, err == nil && ok
}

// knownConnectorTypes lists the connector modules of this build.
func knownConnectorTypes() string {
	var names []string
	for _, m := range caddy.GetModules("mcp.connectors") {
		names = append(names, m.ID.Name())
	}
	sort.Strings(names)
	return strings.Join(names, ", ")
}

// connectorSpec is what a driver gets of an (expanded) connector config.
func connectorSpec(c ConnectorConfig) pipeline.ConnectorSpec {
	return pipeline.ConnectorSpec{DSN: c.DSN, MaxConns: c.MaxConns, ReadOnly: c.ReadOnly,
		StatementTimeout: time.Duration(c.StatementTimeout), MaxRows: c.MaxRows, MaxResultSize: c.MaxResultSize, Seed: c.Seed,
		ClaimsSetting: c.ClaimsSetting, RoleClaim: c.RoleClaim, Roles: c.Roles}
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
	return fmt.Sprintf("%s\x00%s\x00%d\x00%t\x00%d\x00%s\x00%d\x00%d\x00%s\x00%s\x00%q", c.Type, c.DSN, c.MaxConns, c.ReadOnly, c.StatementTimeout, c.Seed, c.MaxRows, c.MaxResultSize,
		c.ClaimsSetting, c.RoleClaim, c.Roles)
}

// openShared returns the UsagePool entry of c, built by create when no
// config uses it yet. The caller must releaseConnector(key) exactly once.
func openShared(c ConnectorConfig, create func(ctx context.Context) (caddy.Destructor, error)) (any, string, error) {
	key := poolKey(c)
	val, _, err := connectorPools.LoadOrNew(key, func() (caddy.Destructor, error) {
		// The pool outlives this config's context, so it must not be tied to it.
		d, err := create(context.Background())
		if err == nil {
			telemetry.PoolsOpened.WithLabelValues(c.Type).Inc()
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
	drv, err := connectorDriver(c.Type)
	if err != nil {
		return nil, "", fmt.Errorf("connector %q: %v", c.Name, err)
	}
	sqlDrv, ok := drv.(pipeline.SQLDriver)
	if !ok {
		return nil, "", fmt.Errorf("connector %q: type %s does not run SQL statements", c.Name, c.Type)
	}
	val, key, err := openShared(c, func(ctx context.Context) (caddy.Destructor, error) {
		conn, closeFn, err := sqlDrv.OpenSQL(ctx, connectorSpec(c))
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
