//go:build !unix

package postgres

import "net"

// socketDead cannot peek portably here; pgxpool's own checks apply.
func socketDead(net.Conn) bool { return false }
