package caddymodule

import (
	"fmt"
	"strings"

	"github.com/edgemcp/edgemcp/pipeline"
	"github.com/edgemcp/edgemcp/pipeline/sqltemplate"
)

// The caller's identity handed to the database (README "Database
// safety"): a tool's statement binds identity values, and a connector
// whose driver is a pipeline.IdentityDriver (postgres, with
// claims_setting or role_claim) hands more.

// connectorIdentity is what a connector hands the database of the caller,
// as `caddy mcp tools` and errors show it.
func connectorIdentity(c ConnectorConfig) []string {
	mod, _ := c.module()
	if d, ok := mod.(pipeline.IdentityDriver); ok {
		return d.IdentityValues()
	}
	return nil
}

// statementIdentity lists the identity values a statement binds, sorted,
// with a "| default" shown, then what its connector hands the database.
// A statement that does not scan lists none: the load reports it.
func statementIdentity(statement string, c ConnectorConfig) []string {
	return append(sqltemplate.BoundIdentity(statement), connectorIdentity(c)...)
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
