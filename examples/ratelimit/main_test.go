package ratelimit_test

import (
	"context"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/redis/rueidis"
	"github.com/stretchr/testify/require"

	"github.com/luagen/luagen/luatest"
	"github.com/luagen/luagen/redistest"
	"github.com/luagen/luagen/runtime"
	"github.com/luagen/luagen/runtime/goredis"
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

// backends lists the places every contract test runs on: luatest, and a
// redis-server and a Redis Cluster through each executor a service may
// choose (rueidis and go-redis), named place/executor.
var backends = []struct {
	name  string
	start func(t *testing.T) backend
}{
	{"luatest", func(t *testing.T) backend {
		r := luatest.Start(t, luatest.WithTime(t0))
		return backend{exec: r, now: r.Now, advance: r.Advance, do: func(args ...string) { r.MustDo(args...) }}
	}},
	{"redis-server/rueidis", func(t *testing.T) backend {
		return onRueidis(t, redistest.Start(t).Client(t))
	}},
	{"redis-server/go-redis", func(t *testing.T) backend {
		c := redis.NewClient(&redis.Options{Addr: redistest.Start(t).Addr})
		t.Cleanup(func() { require.NoError(t, c.Close()) })
		return onGoRedis(t, c)
	}},
	{"cluster/rueidis", func(t *testing.T) backend {
		return onRueidis(t, cluster.Get(t).Client(t))
	}},
	{"cluster/go-redis", func(t *testing.T) backend {
		c := redis.NewClusterClient(&redis.ClusterOptions{Addrs: cluster.Get(t).Addrs()})
		t.Cleanup(func() { require.NoError(t, c.Close()) })
		return onGoRedis(t, c)
	}},
}

func onRueidis(t *testing.T, c rueidis.Client) backend {
	clock := &manualClock{now: t0}
	return backend{
		exec:    runtime.NewRueidisExecutor(c),
		now:     clock.Now,
		advance: clock.Advance,
		do: func(args ...string) {
			err := c.Do(context.Background(), c.B().Arbitrary(args[0]).Keys(args[1]).Args(args[2:]...).Build()).Error()
			require.NoError(t, err)
		},
	}
}

// onGoRedis is onRueidis for a go-redis client: a *redis.Client for one
// server, a *redis.ClusterClient for a cluster.
func onGoRedis(t *testing.T, c redis.UniversalClient) backend {
	clock := &manualClock{now: t0}
	return backend{
		exec:    goredis.NewExecutor(c),
		now:     clock.Now,
		advance: clock.Advance,
		do: func(args ...string) {
			cmd := make([]any, len(args))
			for i, a := range args {
				cmd[i] = a
			}
			require.NoError(t, c.Do(context.Background(), cmd...).Err())
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
