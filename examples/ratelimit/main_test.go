package ratelimit_test

import (
	"context"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/redis/rueidis"
	"github.com/stretchr/testify/require"

	"github.com/luagen/luagen/luatest"
	"github.com/luagen/luagen/redistest"
	"github.com/luagen/luagen/runtime"
)

// cluster is one 3+3 Redis Cluster for the package's tests: starting one
// takes seconds. Tests on it use keys of their own (prefixes named after the
// test).
var cluster redistest.SharedCluster

func TestMain(m *testing.M) {
	code := m.Run()
	cluster.Stop()
	os.Exit(code)
}

// t0 is where every test's clock starts: a fixed instant, so replies such
// as RetryAfter are exact.
var t0 = time.UnixMilli(1_700_000_000_000)

// unit is the time step of the contract tests. The scripts read the
// caller's clock, but a real server expires keys (PEXPIRE, SET PX) on its
// own: with steps of 100 ms, a key could expire in the real time a slow
// machine takes between two calls while the test's clock stands still. In
// minutes, no test runs long enough for that.
const unit = time.Minute

// backend is one place the scripts run: luatest offline, a real
// redis-server, or a real Redis Cluster. Each has a clock the test moves
// by hand and passes to the limiters with WithClock; the scripts take
// "now" from the caller, so a hand-moved clock drives them on a real
// server too.
type backend struct {
	exec    runtime.Executor
	now     func() time.Time
	advance func(time.Duration)
	do      func(args ...string) // one command, for set-up
}

// backends lists the three places every contract test runs on.
var backends = []struct {
	name  string
	start func(t *testing.T) backend
}{
	{"luatest", func(t *testing.T) backend {
		r := luatest.New(t, luatest.WithTime(t0))
		return backend{exec: r, now: r.Now, advance: r.Advance, do: func(args ...string) { r.MustDo(args...) }}
	}},
	{"redis-server", func(t *testing.T) backend {
		return onClient(t, redistest.Start(t).Client(t))
	}},
	{"cluster", func(t *testing.T) backend {
		return onClient(t, cluster.Get(t).Client(t))
	}},
}

func onClient(t *testing.T, c rueidis.Client) backend {
	clock := &manualClock{now: t0}
	return backend{
		exec:    runtime.Rueidis(c),
		now:     clock.Now,
		advance: clock.Advance,
		do: func(args ...string) {
			err := c.Do(context.Background(), c.B().Arbitrary(args[0]).Keys(args[1]).Args(args[2:]...).Build()).Error()
			require.NoError(t, err)
		},
	}
}

// manualClock is a clock that only moves when the test says so.
type manualClock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *manualClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *manualClock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
}
