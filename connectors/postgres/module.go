package postgres

import (
	"context"
	"fmt"
	"regexp"
	"slices"

	"github.com/caddyserver/caddy/v2"
	"github.com/caddyserver/caddy/v2/caddyconfig/caddyfile"

	"github.com/edgemcp/edgemcp/connectors/internal/block"
	"github.com/edgemcp/edgemcp/internal/caddyargs"
	"github.com/edgemcp/edgemcp/pipeline"
	"github.com/edgemcp/edgemcp/pipeline/sqltemplate"
)

func init() { caddy.RegisterModule(Driver{}) }

// Driver is the guest module mcp.connectors.postgres: `connector <name>
// postgres <dsn> { ... }`. Its own options hand the verified caller to
// the database with each statement, and choose when a session is reset
// (README, Database safety).
type Driver struct {
	// ClaimsSetting names the setting that receives the caller's claims as
	// JSON (request.jwt.claims).
	ClaimsSetting string `json:"claims_setting,omitempty"`
	// RoleClaim is the claim whose value, one of Roles, becomes the
	// statement's role.
	RoleClaim string   `json:"role_claim,omitempty"`
	Roles     []string `json:"roles,omitempty"`
	// SessionReset is "always" (the default) or "proven": no reset after
	// a statement proven unable to change its session (resetoption.go).
	SessionReset string `json:"session_reset,omitempty"`
	// ProofLife is how long a proof holds with SessionReset proven; 0:
	// a minute.
	ProofLife caddy.Duration `json:"session_reset_life,omitempty"`
}

var (
	_ pipeline.SQLDriver      = (*Driver)(nil)
	_ pipeline.IdentityDriver = (*Driver)(nil)
	_ pipeline.ResetProver    = (*Driver)(nil)
	_ caddy.Validator         = (*Driver)(nil)
	_ caddyfile.Unmarshaler   = (*Driver)(nil)
)

// CaddyModule returns the Caddy module information.
func (Driver) CaddyModule() caddy.ModuleInfo {
	return caddy.ModuleInfo{ID: "mcp.connectors.postgres", New: func() caddy.Module { return new(Driver) }}
}

// UnmarshalCaddyfile reads the driver's lines of the connector block:
//
//	claims_setting <setting>
//	role_claim <claim>
//	roles <role...>
//	session_reset always|proven [<life>]
func (drv *Driver) UnmarshalCaddyfile(d *caddyfile.Dispenser) error {
	name := block.Head(d)
	for d.NextBlock(0) {
		switch d.Val() {
		case "claims_setting":
			if err := caddyargs.OneArg(d, &drv.ClaimsSetting); err != nil {
				return err
			}
		case "role_claim":
			if err := caddyargs.OneArg(d, &drv.RoleClaim); err != nil {
				return err
			}
		case "roles":
			roles := d.RemainingArgs()
			if len(roles) == 0 {
				return d.Errf("connector %q: roles needs at least one role name", name)
			}
			drv.Roles = append(drv.Roles, roles...)
		case "session_reset":
			if err := drv.parseSessionReset(d, name); err != nil {
				return err
			}
		default:
			return block.Unrecognized(d, name)
		}
	}
	if err := drv.Validate(); err != nil {
		return d.Errf("connector %q: %v", name, err)
	}
	return nil
}

// settingName is a custom setting's name: a prefix, a dot, a name
// (request.jwt.claims); PostgreSQL refuses custom settings without a dot.
var settingName = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)+$`)

// Validate checks the identity options together, and session_reset.
func (drv *Driver) Validate() error {
	if err := drv.validateSessionReset(); err != nil {
		return err
	}
	if drv.ClaimsSetting != "" && !settingName.MatchString(drv.ClaimsSetting) {
		return fmt.Errorf("claims_setting %q: a custom setting's name is a prefix, a dot and a name, such as request.jwt.claims", drv.ClaimsSetting)
	}
	if drv.RoleClaim != "" && len(drv.Roles) == 0 {
		return fmt.Errorf("role_claim needs roles <name...>: the roles a caller's claim may name")
	}
	if len(drv.Roles) > 0 && drv.RoleClaim == "" {
		return fmt.Errorf("roles needs role_claim <claim>: the claim that names the caller's role")
	}
	if slices.Contains(drv.Roles, "") {
		return fmt.Errorf("roles: empty role name")
	}
	return nil
}

// IdentityValues implements pipeline.IdentityDriver.
func (drv *Driver) IdentityValues() []string {
	var out []string
	if drv.ClaimsSetting != "" {
		out = append(out, "auth.claims (claims_setting "+drv.ClaimsSetting+")")
	}
	if drv.RoleClaim != "" {
		out = append(out, "auth.claims."+drv.RoleClaim+" (role_claim)")
	}
	return out
}

// Dialect implements pipeline.SQLDriver.
func (*Driver) Dialect() sqltemplate.Dialect { return sqltemplate.Postgres }

// OpenSQL implements pipeline.SQLDriver.
func (drv *Driver) OpenSQL(ctx context.Context, s pipeline.ConnectorSpec) (pipeline.SQLConnector, func(), error) {
	conn, err := Open(ctx, Config{DSN: s.DSN, MaxConns: int32(s.MaxConns), ReadOnly: s.ReadOnly, StatementTimeout: s.StatementTimeout, MaxRows: s.MaxRows, MaxResultSize: s.MaxResultSize,
		ClaimsSetting: drv.ClaimsSetting, RoleClaim: drv.RoleClaim, Roles: drv.Roles})
	if err != nil {
		return nil, nil, err
	}
	if life := drv.proofLife(); life > 0 {
		conn.EnableResetProofs(life)
	}
	return conn, conn.Close, nil
}
