//go:build unix

package postgres

import (
	"errors"
	"net"
	"syscall"
)

// socketDead reports whether an idle connection's socket has anything to
// read (an idle PostgreSQL connection is sent nothing but a FATAL message
// before the server closes it) or is closed.
func socketDead(nc net.Conn) bool {
	if tc, ok := nc.(interface{ NetConn() net.Conn }); ok { // TLS
		nc = tc.NetConn()
	}
	sc, ok := nc.(syscall.Conn)
	if !ok {
		return false
	}
	rc, err := sc.SyscallConn()
	if err != nil {
		return true
	}
	dead := false
	var buf [1]byte
	// Control, not Read: pgx may have a background reader parked on the
	// socket (holding Go's read lock); a non-blocking peek needs no lock
	// and consumes nothing.
	err = rc.Control(func(fd uintptr) {
		_, _, rerr := syscall.Recvfrom(int(fd), buf[:], syscall.MSG_PEEK|syscall.MSG_DONTWAIT)
		// Nothing to read (EAGAIN) is the healthy case; data, EOF (n == 0,
		// no error) or any other error means the connection is done.
		dead = !errors.Is(rerr, syscall.EAGAIN) && !errors.Is(rerr, syscall.EWOULDBLOCK)
	})
	return dead || err != nil
}
