package server_test

import (
	"testing"

	"go.uber.org/goleak"
)

// Every test closes its server, and its clients, before it ends: no
// connection goroutine may outlive the package's tests. rueidis's
// singleflight sleeps out a reconnect delay after a failed connection
// (TestRueidisCachingRefused) in a goroutine of its own, which ends by
// itself.
func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m, goleak.IgnoreAnyFunction("github.com/redis/rueidis.(*call).DelayDo.func1"))
}
