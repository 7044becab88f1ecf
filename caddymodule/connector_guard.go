package caddymodule

import (
	"fmt"
	"time"

	"github.com/caddyserver/caddy/v2"
	"go.uber.org/zap"

	"github.com/edgemcp/edgemcp/pipeline"
	"github.com/edgemcp/edgemcp/pipeline/connguard"
)

// newGuardPool puts health and admission control in front of a newly
// opened connector (pipeline/connguard). It lives in the UsagePool entry
// with the connector, so reloads keep its state. It checks once that the
// database answers; when it does not, Caddy still starts (unless the
// connector is `required`, see guardConnector) and the connector's tools
// answer "connector unavailable" until a background retry succeeds.
func newGuardPool(conn pipeline.SQLConnector, c ConnectorConfig) *connguard.Pool {
	// The pool outlives the configuration that opened it, so it logs to
	// Caddy's default logger rather than to one config's. The DSN is never
	// logged: it may hold a password.
	log := caddy.Log().Named("http.handlers.mcp").With(zap.String("connector", c.Name), zap.String("type", c.Type))
	p := connguard.NewPool(conn, c.MaxConns, func(up bool, err error) {
		if up {
			log.Info("database answers; connector serving")
			return
		}
		log.Warn("database does not answer; tools of this connector answer 'connector unavailable' while it retries in the background",
			zap.String("error", pipeline.SafeText(err, "database unavailable")))
	})
	_ = p.Start() // reported through the callback; `required` is checked per config
	return p
}

// guardConnector is the connector as one configuration uses it: its own
// max_waiting and queue_timeout over the shared connection slots. A
// `required` connector whose database does not answer fails the load.
func guardConnector(p *connguard.Pool, c ConnectorConfig) (pipeline.SQLConnector, error) {
	if c.Required {
		if err := p.Check(); err != nil {
			return nil, fmt.Errorf("connector %q (%s) is required and its database does not answer: %s", c.Name, c.Type, pipeline.SafeText(err, "database unavailable"))
		}
	}
	opts := connguard.Options{MaxWaiting: -1, QueueTimeout: time.Duration(c.QueueTimeout)}
	if c.MaxWaiting != nil {
		opts.MaxWaiting = *c.MaxWaiting
	}
	return p.Guard(opts), nil
}
