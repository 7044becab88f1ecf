// Package testservices gives every test in the module the services it runs
// against (docs/architecture.md, Tests): PostgreSQL, MySQL/MariaDB and
// Redis, each found through an environment variable that scripts/test.sh
// exports (default: the server on this machine's standard port) and
// checked once per test binary. A server that does not answer fails the
// test with instructions; it is never a skip, so a run without databases
// cannot pass by testing nothing.
//
// Fault tests that stop and restart a server get a private one of their
// own instead (StartPostgres, StartMariaDB, StartRedis); the
// shared servers are never stopped. Those skip, saying what to install,
// only when the server binaries are missing.
//
// Tests never share state with another test binary or another run: each
// test binary gets its own PostgreSQL database (created on first use and
// dropped by Main), and table names, schema names and Redis key prefixes
// carry a random part.
package testservices
