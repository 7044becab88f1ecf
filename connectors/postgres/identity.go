package postgres

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/edgemcp/edgemcp/pipeline"
)

// callerSession hands the verified caller to the database for one
// statement (README, Database safety: claims_setting, role_claim): in the
// statement's own transaction, before it, one pipelined
//
//	SELECT set_config($1, <claims as JSON>, true), set_config($3, <subject>, true)[, set_config('role', <role>, true)]
//
// so that row-level security policies read current_setting('<setting>')
// and the role is one the operator listed. is_local = true: the settings
// and the role end with the transaction, and the session reset after it
// (resetSession) clears anything left. It is the gateway's own statement: the
// block list of operators' statements still refuses set_config.
type callerSession struct {
	claimsSetting string // "" when only the role is switched
	subSetting    string // claimsSetting with its last part replaced by "sub"
	roleClaim     string
	roles         map[string]bool
	sql           string
}

func newCallerSession(cfg Config) (*callerSession, error) {
	if cfg.ClaimsSetting == "" && cfg.RoleClaim == "" {
		if len(cfg.Roles) > 0 {
			return nil, &pipeline.PublicError{Public: "roles needs role_claim"}
		}
		return nil, nil
	}
	cs := &callerSession{claimsSetting: cfg.ClaimsSetting, roleClaim: cfg.RoleClaim}
	var sets []string
	if cfg.ClaimsSetting != "" {
		dot := strings.LastIndexByte(cfg.ClaimsSetting, '.')
		if dot <= 0 || dot == len(cfg.ClaimsSetting)-1 {
			return nil, &pipeline.PublicError{Public: fmt.Sprintf("claims_setting %q: a custom setting's name has a prefix and a dot (request.jwt.claims)", cfg.ClaimsSetting)}
		}
		cs.subSetting = cfg.ClaimsSetting[:dot] + ".sub"
		sets = append(sets, "set_config($1, $2, true)", "set_config($3, $4, true)")
	}
	if cfg.RoleClaim != "" {
		if len(cfg.Roles) == 0 {
			return nil, &pipeline.PublicError{Public: "role_claim needs roles: the roles a caller's claim may name"}
		}
		cs.roles = make(map[string]bool, len(cfg.Roles))
		for _, r := range cfg.Roles {
			cs.roles[r] = true
		}
		sets = append(sets, fmt.Sprintf("set_config('role', $%d, true)", 2*len(sets)+1))
	}
	cs.sql = "SELECT " + strings.Join(sets, ", ")
	return cs, nil
}

// args are the prelude's arguments for the caller in ctx, or an
// authentication failure when the identity lacks what the connector needs.
func (cs *callerSession) args(ctx context.Context) ([]any, error) {
	id := pipeline.Caller(ctx)
	if id == nil {
		return nil, pipeline.Fail(pipeline.StageAuth, nil, "the connector passes the caller's identity to the database and the call has none: give the tool an auth provider")
	}
	var args []any
	if cs.claimsSetting != "" {
		claims := make(map[string]any, len(id.Claims)+1)
		for k, v := range id.Claims {
			claims[k] = v
		}
		if _, ok := claims["sub"]; !ok && id.Subject != "" {
			claims["sub"] = id.Subject
		}
		b, err := json.Marshal(claims)
		if err != nil {
			return nil, pipeline.Fail(pipeline.StageAuth, err, "the caller's claims cannot be written as JSON")
		}
		args = append(args, cs.claimsSetting, string(b), cs.subSetting, id.Subject)
	}
	if cs.roleClaim != "" {
		role, _ := id.Claims[cs.roleClaim].(string)
		if role == "" {
			return nil, pipeline.Fail(pipeline.StageAuth, nil, "the connector takes the role from claim %q and the verified identity does not carry it", cs.roleClaim)
		}
		if !cs.roles[role] {
			// The value is not repeated: it came from the token.
			return nil, pipeline.Fail(pipeline.StageAuth, nil, "claim %q names a role the connector does not allow", cs.roleClaim)
		}
		args = append(args, role)
	}
	return args, nil
}
