package sqlite

import (
	"context"
	"database/sql/driver"
	"errors"
	"strings"

	"modernc.org/sqlite"
)

// Read-only connectors stack three guards:
//
//   - mode=ro: the database file is opened read-only, so SQLite cannot
//     write it (SQLITE_READONLY) nor create it.
//   - PRAGMA query_only=1: no statement may change any database, including
//     temporary and attached ones.
//   - an authorizer on every connection that denies ATTACH (which opens,
//     and creates, arbitrary files with the connection's read-write open
//     flags: mode=ro only applies to the main file) and denies turning
//     query_only off (a pragma any statement could otherwise run, for the
//     rest of the connection's life).

// roDriver is a private modernc driver whose connections all get the
// authorizer; it is not registered with database/sql, so it cannot leak
// into other users of the "sqlite" driver name.
var roDriver = authorizedDriver(readOnlyAuthorizer)

// authorizedDriver is a private modernc driver that installs fn on each
// of its connections.
func authorizedDriver(fn sqlite.AuthorizerFn) *sqlite.Driver {
	d := &sqlite.Driver{}
	d.RegisterConnectionHook(func(conn sqlite.ExecQuerierContext, _ string) error {
		r, ok := conn.(sqlite.AuthorizerRegisterer)
		if !ok {
			return errors.New("sqlite driver connection has no authorizer")
		}
		return r.RegisterAuthorizer(fn)
	})
	return d
}

func readOnlyAuthorizer(action sqlite.AuthorizerActionCode, arg1, arg2, _, _ string) sqlite.AuthorizerReturnCode {
	switch action {
	case sqlite.AuthAttach:
		return sqlite.AuthorizerDeny
	case sqlite.AuthPragma:
		// arg1 is the pragma, arg2 its argument ("" when only read). The
		// driver's own PRAGMA query_only(1) has run before this authorizer
		// is installed.
		if strings.EqualFold(arg1, "query_only") && arg2 != "" {
			return sqlite.AuthorizerDeny
		}
	}
	return sqlite.AuthorizerOK
}

// roConnector opens read-only connections through drv (roDriver when
// nil), for sql.OpenDB.
type roConnector struct {
	dsn string
	drv *sqlite.Driver
}

func (c roConnector) Connect(ctx context.Context) (driver.Conn, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	return c.Driver().(*sqlite.Driver).Open(c.dsn)
}

func (c roConnector) Driver() driver.Driver {
	if c.drv != nil {
		return c.drv
	}
	return roDriver
}
