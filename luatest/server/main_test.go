package server_test

import (
	"testing"

	"go.uber.org/goleak"
)

// Every test closes its server, and its clients, before it ends: no
// connection goroutine may outlive the package's tests.
func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }
