package postgres

import "time"

// SetDefaultConnectTimeout lets tests shorten the connect bound.
func SetDefaultConnectTimeout(d time.Duration) (restore func()) {
	old := defaultConnectTimeout
	defaultConnectTimeout = d
	return func() { defaultConnectTimeout = old }
}
