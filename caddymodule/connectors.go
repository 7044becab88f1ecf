package caddymodule

import (
	"context"
	"encoding/json"
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

// knownConnectorTypes lists the connector modules of this build.
func knownConnectorTypes() string {
	var names []string
	for _, m := range caddy.GetModules("mcp.connectors") {
		names = append(names, m.ID.Name())
	}
	sort.Strings(names)
	return strings.Join(names, ", ")
}

// checkConnectorType reports an unknown type with the types this build has.
func checkConnectorType(typ string) error {
	if _, err := caddy.GetModule("mcp.connectors." + typ); err != nil {
		return fmt.Errorf("unknown type %q (want %s)", typ, knownConnectorTypes())
	}
	return nil
}

// loadDriver loads the connector's driver module with Caddy (which
// provisions and validates it) and keeps it in c.driver.
func loadDriver(ctx caddy.Context, c *ConnectorConfig) error {
	if err := checkConnectorType(c.Type); err != nil {
		return fmt.Errorf("connector %q: %v", c.Name, err)
	}
	if len(c.DriverRaw) == 0 {
		c.DriverRaw = json.RawMessage(fmt.Sprintf(`{"type":%q}`, c.Type))
	}
	if err := checkDriverKeys(*c); err != nil {
		return err
	}
	mod, err := ctx.LoadModule(c, "DriverRaw")
	if err != nil {
		return fmt.Errorf("connector %q: %v", c.Name, err)
	}
	return c.setDriver(mod)
}

// setDriver keeps a driver that is one of the two kinds.
func (c *ConnectorConfig) setDriver(mod any) error {
	switch mod.(type) {
	case pipeline.SQLDriver, pipeline.CommandDriver:
		c.driver = mod
		return nil
	}
	return fmt.Errorf("connector %q: module mcp.connectors.%s (%T) is neither an SQL nor a command driver", c.Name, c.Type, mod)
}

// module is the connector's driver: the one Provision loaded or the
// Caddyfile read, else decoded from DriverRaw, unprovisioned (for the
// checks of a config that is not loaded, and tests).
func (c *ConnectorConfig) module() (any, error) {
	if c.driver != nil {
		return c.driver, nil
	}
	info, err := caddy.GetModule("mcp.connectors." + c.Type)
	if err != nil {
		return nil, fmt.Errorf("connector %q: %v", c.Name, checkConnectorType(c.Type))
	}
	mod := info.New()
	if len(c.DriverRaw) > 0 {
		var opts map[string]json.RawMessage
		if err := json.Unmarshal(c.DriverRaw, &opts); err != nil {
			return nil, fmt.Errorf("connector %q: %v", c.Name, err)
		}
		delete(opts, "type")
		b, _ := json.Marshal(opts)
		if err := caddy.StrictUnmarshalJSON(b, mod); err != nil {
			return nil, fmt.Errorf("connector %q: %v", c.Name, err)
		}
	}
	return mod, c.setDriver(mod)
}

// sqlDriver is the connector's SQL driver; ok is false for other kinds.
func (c ConnectorConfig) sqlDriver() (pipeline.SQLDriver, bool) {
	mod, err := c.module()
	d, ok := mod.(pipeline.SQLDriver)
	return d, err == nil && ok
}

// commandDriver is the connector's command driver; ok is false for others.
func (c ConnectorConfig) commandDriver() (pipeline.CommandDriver, bool) {
	mod, err := c.module()
	d, ok := mod.(pipeline.CommandDriver)
	return d, err == nil && ok
}

// connectorSpec is what a driver gets of an (expanded) connector config.
func connectorSpec(c ConnectorConfig) pipeline.ConnectorSpec {
	return pipeline.ConnectorSpec{DSN: c.DSN, MaxConns: c.MaxConns, ReadOnly: c.ReadOnly,
		StatementTimeout: time.Duration(c.StatementTimeout), MaxRows: c.MaxRows, MaxResultSize: c.MaxResultSize}
}

// sharedConnector is a UsagePool value.
type sharedConnector struct {
	pipeline.SQLConnector
	close func()
	guard *connguard.Pool // health and connection slots (newGuardPool)
}

func (s *sharedConnector) Destruct() error {
	s.guard.Close()
	s.close()
	return nil
}

// poolKey identifies a pool by everything that shapes it: the shared
// settings and the driver's own options, as provisioned. It holds the DSN
// (with any password) and so must never be logged.
func poolKey(c ConnectorConfig) string {
	opts, _ := json.Marshal(c.driver)
	return fmt.Sprintf("%s\x00%s\x00%d\x00%t\x00%d\x00%d\x00%d\x00%s", c.Type, c.DSN, c.MaxConns, c.ReadOnly, c.StatementTimeout, c.MaxRows, c.MaxResultSize, opts)
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
	if _, err := c.module(); err != nil {
		return nil, "", err
	}
	sqlDrv, ok := c.sqlDriver()
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
