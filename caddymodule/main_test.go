package caddymodule

import (
	"os"
	"testing"

	"github.com/edgemcp/edgemcp/internal/testservices"
)

// TestMain drops this test binary's own database when its tests end.
func TestMain(m *testing.M) { os.Exit(testservices.Main(m)) }
