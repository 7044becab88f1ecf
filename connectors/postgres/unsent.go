package postgres

import (
	"errors"
	"io"
	"runtime"
	"sync"
	"sync/atomic"
	"weak"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgproto3"
)

// A statement that never reached the server is retried on another
// connection (Query): the failure says nothing about the statement, only
// about the connection it happened to get. The typical case is a pooled
// connection whose backend was just terminated (pg_terminate_backend, a
// restart, a failover): the server's FATAL is on its way when the pool
// hands the connection out, so dropDeadConn's peek cannot see
// it yet.
//
// Two signs prove the statement did not run:
//   - pgconn.SafeToRetry: pgx sent nothing (a closed connection, a context
//     done before the send);
//   - the first message the server sent after our batch is an
//     ErrorResponse. The backend answers a Parse or Bind with ParseComplete
//     or BindComplete before it executes anything, and a backend that dies
//     flushes what it had queued before its FATAL message; so an error
//     first means the backend ended before it read our first message.
//
// A statement whose backend died while running it is answered
// BindComplete first: it fails ("database unavailable") and is never
// retried, since it may have executed.

// Retries of one call are bounded by the pool size: each failed attempt
// used up one stale connection (pgx closes it, pgxpool destroys it), and
// a pool whose backends were all terminated at once can hand out every one
// of them before their FATAL messages arrive. After that many, the next
// connection is one opened since: the last attempt runs on a fresh one.

// errUnsent marks an attempt that failed before the server read it.
type errUnsent struct{ err error }

func (e *errUnsent) Error() string { return e.err.Error() }
func (e *errUnsent) Unwrap() error { return e.err }

func isUnsent(err error) bool {
	var u *errUnsent
	return errors.As(err, &u)
}

// markUnsent wraps err in errUnsent when the attempt watched by w
// provably never reached the server.
func markUnsent(err error, w *firstByteReader) error {
	if pgconn.SafeToRetry(err) {
		return &errUnsent{err}
	}
	if w != nil && w.firstByte() == 'E' && serverEnded(err) {
		return &errUnsent{err}
	}
	return err
}

// serverEnded recognizes the end of the session: the server's FATAL
// (admin shutdown, crash, cannot connect now) or a lost connection.
func serverEnded(err error) bool {
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) {
		return pgErr.Severity == "FATAL" || pgErr.Code == "57P01" || pgErr.Code == "57P02" || pgErr.Code == "57P03"
	}
	return isConnectionLost(err)
}

// firstByteReader records the first byte pgx reads after arm: the type of
// the server's first message in answer to our batch. It sits where pgx's
// protocol reader reads (BuildFrontend), above TLS, so the byte is a
// message type, never TLS framing; the net.Conn itself stays pgx's own
// (SCRAM channel binding looks for a *tls.Conn there).
type firstByteReader struct {
	r     io.Reader
	first atomic.Int32 // -1: armed, nothing read yet; otherwise the byte, or 0 before the first arm
}

// arm forgets what was read so far: called before each attempt, when the
// connection is idle (nothing pending: dropDeadConn checked).
func (w *firstByteReader) arm() { w.first.Store(-1) }

func (w *firstByteReader) firstByte() int32 { return w.first.Load() }

func (w *firstByteReader) Read(b []byte) (int, error) {
	n, err := w.r.Read(b)
	if n > 0 {
		w.first.CompareAndSwap(-1, int32(b[0]))
	}
	return n, err
}

// watching holds each new connection's reader from BuildFrontend, during
// the connect, to AfterConnect, which moves it into the connection's
// CustomData (watchOf). A connect that fails in between leaves an entry
// that the Frontend's cleanup removes once it is unreachable.
var watching sync.Map // weak.Pointer[pgproto3.Frontend] → *firstByteReader

const watchKey = "edgemcp.firstByte"

// buildFrontend is pgconn's BuildFrontend with a firstByteReader below it.
func buildFrontend(r io.Reader, w io.Writer) *pgproto3.Frontend {
	fr := &firstByteReader{r: r}
	f := pgproto3.NewFrontend(fr, w)
	key := weak.Make(f)
	watching.Store(key, fr)
	runtime.AddCleanup(f, func(k weak.Pointer[pgproto3.Frontend]) { watching.Delete(k) }, key)
	return f
}

// adoptWatch attaches the connection's reader to it (AfterConnect).
func adoptWatch(pc *pgconn.PgConn) {
	if fr, ok := watching.LoadAndDelete(weak.Make(pc.Frontend())); ok {
		pc.CustomData()[watchKey] = fr
	}
}

// watchOf is the connection's reader, nil if it has none.
func watchOf(pc *pgconn.PgConn) *firstByteReader {
	fr, _ := pc.CustomData()[watchKey].(*firstByteReader)
	return fr
}
