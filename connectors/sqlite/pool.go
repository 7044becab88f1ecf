package sqlite

// MaxConns is the pool size (connection slots for admission control).
func (c *Connector) MaxConns() int { return c.db.Stats().MaxOpenConnections }
