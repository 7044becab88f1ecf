package caddymodule

import (
	"encoding/json"
	"fmt"
	"regexp"
	"slices"
	"strings"

	"github.com/caddyserver/caddy/v2/caddyconfig/caddyfile"

	"github.com/edgemcp/edgemcp/pipeline"
	"github.com/edgemcp/edgemcp/pipeline/sqltemplate"
)

// The caller's identity handed to the database (README "Database safety"):
// the connector sub-directives claims_setting, role_claim and roles, for
// connector types whose driver is a pipeline.IdentityDriver (postgres).

// settingName is a custom setting's name: a prefix, a dot, a name
// (request.jwt.claims); PostgreSQL refuses custom settings without a dot.
var settingName = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)+$`)

func parseConnectorIdentity(d *caddyfile.Dispenser, c *ConnectorConfig, sub string) error {
	switch sub {
	case "claims_setting":
		if err := oneArg(d, &c.ClaimsSetting); err != nil {
			return err
		}
	case "role_claim":
		if err := oneArg(d, &c.RoleClaim); err != nil {
			return err
		}
	case "roles":
		roles := d.RemainingArgs()
		if len(roles) == 0 {
			return d.Errf("connector %q: roles needs at least one role name", c.Name)
		}
		c.Roles = append(c.Roles, roles...)
	}
	return nil
}

// checkConnectorIdentity is validateConnectorIdentity at the Caddyfile
// line of the connector.
func checkConnectorIdentity(d *caddyfile.Dispenser, c ConnectorConfig) error {
	if err := validateConnectorIdentity(c); err != nil {
		return d.Errf("%v", err)
	}
	return nil
}

// validateConnectorIdentity checks the identity settings of a connector
// (Caddyfile and JSON configs alike).
func validateConnectorIdentity(c ConnectorConfig) error {
	if !c.passesIdentity() && len(c.Roles) == 0 {
		return nil
	}
	if drv, err := connectorDriver(c.Type); err == nil {
		if _, ok := drv.(pipeline.IdentityDriver); !ok {
			return fmt.Errorf("connector %q: claims_setting, role_claim and roles are for connectors that hand the caller to the database (postgres), not %s", c.Name, c.Type)
		}
	}
	if c.ClaimsSetting != "" && !settingName.MatchString(c.ClaimsSetting) {
		return fmt.Errorf("connector %q: claims_setting %q: a custom setting's name is a prefix, a dot and a name, such as request.jwt.claims", c.Name, c.ClaimsSetting)
	}
	if c.RoleClaim != "" && len(c.Roles) == 0 {
		return fmt.Errorf("connector %q: role_claim needs roles <name...>: the roles a caller's claim may name", c.Name)
	}
	if len(c.Roles) > 0 && c.RoleClaim == "" {
		return fmt.Errorf("connector %q: roles needs role_claim <claim>: the claim that names the caller's role", c.Name)
	}
	if i := slices.Index(c.Roles, ""); i >= 0 {
		return fmt.Errorf("connector %q: roles: empty role name", c.Name)
	}
	return nil
}

// checkIdentityAtAdapt refuses in `caddy adapt` what the load would refuse
// (checkIdentityValues, cachePolicy) of a tool taking values from the
// caller's identity: no auth provider, or `cache shared`.
func (h *Handler) checkIdentityAtAdapt() error {
	for t, c := range h.toolConnectors() {
		vals := statementIdentity(t.Statement, c)
		if len(vals) == 0 {
			continue
		}
		if t.Auth == nil && h.DefaultAuth == nil {
			return fmt.Errorf("tool %q: the statement binds the caller's identity (%s) but the tool has no auth provider: give it an auth block or set default_auth, at %s", t.Name, strings.Join(vals, ", "), t.statementAt)
		}
		if t.Cache != nil && t.Cache.Shared {
			return fmt.Errorf("tool %q: cache shared: the statement binds the caller's identity (%s), so its results differ per caller and cannot be shared; drop \"shared\" (results are then cached per identity), at %s", t.Name, strings.Join(vals, ", "), t.statementAt)
		}
	}
	return nil
}

// statementIdentity lists the identity values a statement binds, sorted,
// with a "| default" shown, then what its connector hands the database
// (claims_setting, role_claim). A statement that does not scan lists none:
// the load reports it.
func statementIdentity(statement string, c ConnectorConfig) []string {
	var out []string
	if ts, err := sqltemplate.ScanTemplates(statement); err == nil {
		seen := map[string]bool{}
		for _, t := range ts {
			if !t.Auth || seen[t.Name] {
				continue
			}
			seen[t.Name] = true
			v := t.Name
			if t.HasDefault {
				d, _ := json.Marshal(t.Default)
				v += " (default " + string(d) + ")"
			}
			out = append(out, v)
		}
		slices.Sort(out)
	}
	return append(out, connectorIdentity(c)...)
}
