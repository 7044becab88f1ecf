package postgres

import (
	"fmt"
	"time"

	"github.com/caddyserver/caddy/v2"
	"github.com/caddyserver/caddy/v2/caddyconfig/caddyfile"
)

// The option session_reset always|proven [<life>] chooses when a call's
// connection is reset (README, Database safety: Session reset): after
// every call, or not after a statement proven unable to change its
// session (resetProofs), each proof holding for life.
const (
	resetAlways = "always"
	resetProven = "proven"
)

// The life of a proof is the time a schema change (a view replaced by one
// that calls set_config) can go unseen, so it is bounded above; a proof
// costs Postgres about 2.5 ms, the reset it saves about 10 µs a call, so
// a proof renewed every second pays for itself only from 250 calls a
// second of its statement. The
// default keeps the unseen window to a minute and costs one proof per
// statement a minute.
const (
	defaultProofLife = time.Minute
	minProofLife     = time.Second
	maxProofLife     = time.Hour
)

// ProvesResets marks the driver as one with the option session_reset
// (pipeline.ResetProver).
func (*Driver) ProvesResets() {}

// parseSessionReset reads `session_reset always|proven [<life>]`; d is on
// session_reset.
func (drv *Driver) parseSessionReset(d *caddyfile.Dispenser, name string) error {
	if drv.SessionReset != "" {
		return d.Errf("connector %q: session_reset given twice", name)
	}
	args := d.RemainingArgs()
	if len(args) == 0 || len(args) > 2 {
		return d.Errf("connector %q: usage: session_reset always|proven [<life>]", name)
	}
	drv.SessionReset = args[0]
	if len(args) == 2 {
		life, err := caddy.ParseDuration(args[1])
		if err != nil {
			return d.Errf("connector %q: session_reset %s: life %q: %v", name, args[0], args[1], err)
		}
		drv.ProofLife = caddy.Duration(life)
	}
	if err := drv.checkResetMode(); err != nil {
		return d.Errf("connector %q: %v", name, err)
	}
	return nil
}

// validateSessionReset checks session_reset and its life, from the
// Caddyfile or JSON, with the identity options.
func (drv *Driver) validateSessionReset() error {
	if err := drv.checkResetMode(); err != nil {
		return err
	}
	if drv.SessionReset == resetProven && drv.RoleClaim != "" {
		return fmt.Errorf("session_reset proven cannot be combined with role_claim: the caller's role changes what a statement's names resolve to, so a proof made under one role says nothing of another's call")
	}
	return nil
}

// checkResetMode checks session_reset's mode and life.
func (drv *Driver) checkResetMode() error {
	switch drv.SessionReset {
	case "", resetAlways:
		if drv.ProofLife != 0 {
			return fmt.Errorf("session_reset: a life is for proven (the life of a proof), not %s", drv.resetMode())
		}
	case resetProven:
		if drv.ProofLife != 0 && (time.Duration(drv.ProofLife) < minProofLife || time.Duration(drv.ProofLife) > maxProofLife) {
			return fmt.Errorf("session_reset proven: life %s is out of bounds: from %s to %s (a proof costs Postgres a few ms; a schema change within its life is not seen)",
				time.Duration(drv.ProofLife), minProofLife, maxProofLife)
		}
	default:
		return fmt.Errorf("session_reset %q: want always or proven", drv.SessionReset)
	}
	return nil
}

func (drv *Driver) resetMode() string {
	if drv.SessionReset == "" {
		return resetAlways
	}
	return drv.SessionReset
}

// proofLife is the life of a proof, 0 unless session_reset proven.
func (drv *Driver) proofLife() time.Duration {
	if drv.SessionReset != resetProven {
		return 0
	}
	if drv.ProofLife == 0 {
		return defaultProofLife
	}
	return time.Duration(drv.ProofLife)
}
