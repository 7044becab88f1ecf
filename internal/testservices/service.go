package testservices

import (
	"crypto/rand"
	"encoding/hex"
	"os"
	"sync"
	"testing"
)

// service is one server the tests need: where to find it and whether it
// answered when first asked.
type service struct {
	what, env, def string
	once           sync.Once
	addr           string
	err            error
}

// require returns the service's address (after setup, which runs once per
// process and may derive a new address), or fails the test saying how to
// provide the service.
func (s *service) require(t testing.TB, setup func(addr string) (string, error)) string {
	t.Helper()
	s.once.Do(func() {
		addr := os.Getenv(s.env)
		if addr == "" {
			addr = s.def
		}
		s.addr, s.err = setup(addr)
	})
	if s.err != nil {
		t.Fatalf("%s is required by this test and did not answer: %v\n"+
			"Set %s to a reachable server (default %s), "+
			"or run the project's test command (scripts/test.sh), which starts a throwaway one.",
			s.what, s.err, s.env, s.def)
	}
	return s.addr
}

// Name returns a unique, lower-case identifier starting with prefix, so
// that tests and test runs never share a table, schema or key.
func Name(prefix string) string {
	return prefix + "_" + randomHex()
}

// randomHex is 12 random lower-case hex digits.
func randomHex() string {
	var b [6]byte
	if _, err := rand.Read(b[:]); err != nil {
		panic(err)
	}
	return hex.EncodeToString(b[:])
}

// Main runs a package's tests and then drops what this process created
// outside the tests' own cleanups (its PostgreSQL database). Use it as
//
//	func TestMain(m *testing.M) { os.Exit(testservices.Main(m)) }
func Main(m *testing.M) int {
	code := m.Run()
	dropDatabase()
	return code
}
