package redis

import (
	"context"
	"errors"
	"io"
	"net"
	"strings"

	goredis "github.com/redis/go-redis/v9"

	"github.com/edgemcp/edgemcp/pipeline"
)

// Public texts, the same words as the SQL connectors'.
const (
	msgCanceled    = "canceled"
	msgTimedOut    = "timed out"
	msgStmtTimeout = "command timed out"
	msgUnavailable = "database unavailable"
	msgFailed      = "command failed"
	msgBusy        = "connector busy"
	msgNoPerm      = "NOPERM this user has no permission to run the command or access the key"
)

// publicError shapes a Do error. Server error replies (WRONGTYPE ...,
// ERR ...) are the command's own fault and are shown; NOPERM messages name
// the user, so they get a fixed text; anything about the connection is
// "database unavailable" (go-redis' dial errors carry the address).
func publicError(ctx context.Context, err error) error {
	switch {
	case ctx.Err() != nil && errors.Is(ctx.Err(), context.DeadlineExceeded):
		return &pipeline.PublicError{Public: msgTimedOut, Cause: err}
	case ctx.Err() != nil:
		return &pipeline.PublicError{Public: msgCanceled, Cause: err}
	}
	var rerr goredis.Error
	if errors.As(err, &rerr) {
		text, server := errorText(rerr)
		pub := &pipeline.PublicError{Public: text, Cause: err}
		if server {
			pub.Code = replyPrefix(text)
		}
		return pub
	}
	var netErr net.Error
	switch {
	case errors.As(err, &netErr) && netErr.Timeout():
		return &pipeline.PublicError{Public: msgStmtTimeout, Cause: err}
	case errors.Is(err, goredis.ErrPoolTimeout):
		return &pipeline.PublicError{Public: msgBusy, Cause: err}
	case errors.As(err, &netErr), errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF),
		errors.Is(err, net.ErrClosed), errors.Is(err, goredis.ErrClosed):
		return &pipeline.PublicError{Public: msgUnavailable, Cause: err}
	}
	return &pipeline.PublicError{Public: msgFailed, Cause: err}
}

// errorText is what of a server error reply may be shown: the reply
// itself (server is true), or one of our own texts.
func errorText(err error) (text string, server bool) {
	msg := err.Error()
	switch {
	case strings.HasPrefix(msg, "NOPERM"):
		return msgNoPerm, false
	case strings.HasPrefix(msg, "WRONGPASS"), strings.HasPrefix(msg, "NOAUTH"),
		strings.HasPrefix(msg, "LOADING"), strings.HasPrefix(msg, "MASTERDOWN"):
		return msgUnavailable, false
	}
	return msg, true
}

// replyPrefix is the error reply's code, its first word by Redis
// convention ("WRONGTYPE", "ERR", "BUSYKEY"); a reply without one is "ERR".
func replyPrefix(msg string) string {
	word, _, _ := strings.Cut(msg, " ")
	if word == "" || strings.ToUpper(word) != word || len(word) > 32 {
		return "ERR"
	}
	return word
}
