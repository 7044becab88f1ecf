package caddymodule

import (
	"encoding/json"
	"fmt"
	"maps"
	"reflect"
	"strings"

	"github.com/caddyserver/caddy/v2"

	"github.com/edgemcp/edgemcp/pipeline"
)

// A connector's JSON is one flat object (`{"name":..,"type":"sqlite",
// "dsn":..,"seed":..}`), as it was before the drivers became guest
// modules: the gateway's keys are the fields of ConnectorConfig, the rest
// (and "type", the module's inline key) are DriverRaw.

// connectorKeys are the JSON keys of ConnectorConfig's own fields.
var connectorKeys = func() map[string]bool {
	keys := map[string]bool{}
	t := reflect.TypeFor[ConnectorConfig]()
	for i := range t.NumField() {
		name, _, _ := strings.Cut(t.Field(i).Tag.Get("json"), ",")
		if name != "" && name != "-" {
			keys[name] = true
		}
	}
	return keys
}()

// connectorFields is ConnectorConfig without its JSON methods.
type connectorFields ConnectorConfig

// MarshalJSON writes the gateway's fields and the driver's options as
// one object.
func (c ConnectorConfig) MarshalJSON() ([]byte, error) {
	own, err := json.Marshal(connectorFields(c))
	if err != nil || len(c.DriverRaw) == 0 {
		return own, err
	}
	var drv map[string]json.RawMessage
	if err := json.Unmarshal(c.DriverRaw, &drv); err != nil {
		return nil, fmt.Errorf("connector %q: driver options: %v", c.Name, err)
	}
	delete(drv, "type")
	if len(drv) == 0 {
		return own, nil
	}
	var all map[string]json.RawMessage
	if err := json.Unmarshal(own, &all); err != nil {
		return nil, err
	}
	maps.Copy(all, drv)
	return json.Marshal(all)
}

// UnmarshalJSON reads the gateway's fields and keeps every other key,
// with "type", in DriverRaw for the driver module.
func (c *ConnectorConfig) UnmarshalJSON(b []byte) error {
	var own connectorFields
	if err := json.Unmarshal(b, &own); err != nil {
		return err
	}
	var drv map[string]json.RawMessage
	if err := json.Unmarshal(b, &drv); err != nil {
		return err
	}
	for k := range drv {
		if connectorKeys[k] && k != "type" {
			delete(drv, k)
		}
	}
	raw, err := json.Marshal(drv)
	if err != nil {
		return err
	}
	own.DriverRaw = raw
	*c = ConnectorConfig(own)
	return nil
}

// checkDriverKeys refuses an option of some drivers given to a driver
// that does not have it (a JSON config; the Caddyfile checks its lines
// in splitConnectorBlock).
func checkDriverKeys(c ConnectorConfig) error {
	var drv map[string]json.RawMessage
	if err := json.Unmarshal(c.DriverRaw, &drv); err != nil {
		return fmt.Errorf("connector %q: %v", c.Name, err)
	}
	for k := range drv {
		if err := misplacedOption(c.Name, c.Type, k); err != nil {
			return err
		}
	}
	return nil
}

// misplacedOption is the error for an option that only some drivers have
// (the pipeline interface that marks them says which) on a connector whose
// driver does not: it names the kind of connector the option is for,
// which the driver's own "unknown option" could not.
func misplacedOption(name, typ, option string) error {
	info, err := caddy.GetModule("mcp.connectors." + typ)
	if err != nil {
		return nil // reported as an unknown type
	}
	drv := info.New()
	switch option {
	case "seed":
		if _, ok := drv.(pipeline.Seeder); !ok {
			return fmt.Errorf("connector %q: seed is only for connectors that create their database (sqlite), not %s", name, typ)
		}
	case "session_reset", "session_reset_life":
		if _, ok := drv.(pipeline.ResetProver); !ok {
			return fmt.Errorf("connector %q: session_reset is for connectors that reset their session after every call and can prove a statement needs none (postgres), not %s (see Database safety, Session reset)", name, typ)
		}
	case "claims_setting", "role_claim", "roles":
		if _, ok := drv.(pipeline.IdentityDriver); !ok {
			return fmt.Errorf("connector %q: claims_setting, role_claim and roles are for connectors that hand the caller to the database (postgres), not %s", name, typ)
		}
	}
	return nil
}
