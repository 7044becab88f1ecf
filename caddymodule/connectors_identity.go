package caddymodule

import (
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
