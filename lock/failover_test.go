package lock_test

import (
	"context"
	"errors"
	"syscall"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/luagen/luagen/lock"
	"github.com/luagen/luagen/redistest"
	"github.com/luagen/luagen/runtime"
	"github.com/luagen/luagen/runtime/goredis"
)

// failoverEnv is a deployment a failover test kills a primary of: a
// Sentinel-managed primary or a cluster shard. Each scenario leaves it
// whole again (restore), so the scenarios of both executors share one.
type failoverEnv struct {
	rueidis func(t *testing.T) *lock.Client // a lock Client on a new rueidis client
	goredis func(t *testing.T) *lock.Client // a lock Client on a new go-redis client
	// roles returns the key's primary and a replica of it.
	roles func(t *testing.T, key string) (primary, replica *redistest.Server)
	// promote makes replica the key's primary after primary died, and
	// waits until the deployment says so.
	promote func(t *testing.T, key string, primary, replica *redistest.Server)
	// restore restarts old, a dead primary, and waits until it is a
	// replica of the new one, in sync.
	restore func(t *testing.T, old *redistest.Server)
}

func sentinelEnv(t *testing.T) *failoverEnv {
	s := redistest.StartSentinel(t, 1)
	return &failoverEnv{
		rueidis: func(t *testing.T) *lock.Client { return newClient(t, s.Client(t)) },
		goredis: func(t *testing.T) *lock.Client {
			rdb := redis.NewFailoverClient(&redis.FailoverOptions{MasterName: redistest.SentinelMaster, SentinelAddrs: s.Addrs()})
			t.Cleanup(func() { _ = rdb.Close() })
			return newExecClient(t, goredis.NewExecutor(rdb))
		},
		roles: func(t *testing.T, _ string) (*redistest.Server, *redistest.Server) {
			m, err := s.Master()
			require.NoError(t, err)
			for _, n := range append([]*redistest.Server{s.Primary}, s.Replicas...) {
				if n != m {
					return m, n
				}
			}
			t.Fatal("no replica")
			return nil, nil
		},
		promote: func(t *testing.T, _ string, primary, replica *redistest.Server) {
			m, err := s.WaitFailover(primary, 90*time.Second)
			require.NoError(t, err)
			require.Same(t, replica, m)
		},
		restore: func(t *testing.T, old *redistest.Server) {
			require.NoError(t, old.Restart())
			require.NoError(t, s.WaitReplica(old, 90*time.Second))
		},
	}
}

func clusterEnv(t *testing.T) *failoverEnv {
	cl := redistest.StartCluster(t)
	return &failoverEnv{
		rueidis: func(t *testing.T) *lock.Client { return newClient(t, cl.Client(t)) },
		goredis: func(t *testing.T) *lock.Client {
			rdb := redis.NewClusterClient(&redis.ClusterOptions{Addrs: cl.Addrs()})
			t.Cleanup(func() { _ = rdb.Close() })
			warmCluster(t, rdb)
			return newExecClient(t, goredis.NewExecutor(rdb))
		},
		roles: func(t *testing.T, key string) (*redistest.Server, *redistest.Server) {
			p, r, err := cl.PrimaryOf(runtime.Slot(key))
			require.NoError(t, err)
			return p, r
		},
		promote: func(t *testing.T, key string, _, replica *redistest.Server) {
			require.NoError(t, cl.Takeover(runtime.Slot(key), replica, 60*time.Second))
		},
		restore: func(t *testing.T, old *redistest.Server) {
			require.NoError(t, old.Restart())
			require.NoError(t, cl.WaitHealthy(90*time.Second))
		},
	}
}

// warmCluster makes rdb load what a go-redis ClusterClient loads on its
// first use, while every node still answers: the slot map (CLUSTER SLOTS,
// clusterStateHolder.Get reloads synchronously while it has none) and
// the command table (COMMAND, cmdsInfoCache). ClusterClient.loadState and
// cmdsInfo ask the nodes in random order, one after another, so a first
// use after the scenario paused a replica (SIGSTOP) could ask that
// replica first and wait for it until the call's context ends (the
// lock's retry window) or ReadTimeout: A's Lock then failed with an i/o
// timeout instead of reaching the primary. A long-lived client, like an
// application's, has both loaded already; later slot-map reloads
// (LazyReload) run in the background.
func warmCluster(t *testing.T, rdb *redis.ClusterClient) {
	ctx := context.Background()
	require.NoError(t, rdb.ForEachShard(ctx, func(ctx context.Context, c *redis.Client) error {
		return c.Ping(ctx).Err()
	}))
	require.NoError(t, rdb.Exists(ctx, "warm-up").Err()) // routed by its command info: loads the table
}

// newExecClient returns a lock Client running its scripts on e (no
// rueidis client: waiters poll), closed when t ends.
func newExecClient(t *testing.T, e runtime.Executor) *lock.Client {
	c, err := lock.NewClient(nil, lock.WithExecutor(e))
	require.NoError(t, err)
	t.Cleanup(c.Close)
	return c
}

// TestFailoverSentinel and TestFailoverCluster show the hazard of every
// Redis lock on an asynchronously replicated primary, and WithReplicas'
// defence, on both executors. See runFailover.
func TestFailoverSentinel(t *testing.T) { runFailover(t, sentinelEnv(t)) }

func TestFailoverCluster(t *testing.T) { runFailover(t, clusterEnv(t)) }

func runFailover(t *testing.T, env *failoverEnv) {
	for _, ex := range []struct {
		name   string
		client func(t *testing.T) *lock.Client
	}{{"rueidis", env.rueidis}, {"goredis", env.goredis}} {
		t.Run(ex.name+"/Off", func(t *testing.T) { doubleHold(t, env, ex.client, "fo-off-"+ex.name) })
		t.Run(ex.name+"/WithReplicas", func(t *testing.T) { acknowledgedHold(t, env, ex.client, "fo-on-"+ex.name) })
	}
}

// doubleHold: without WithReplicas, A's Lock returns as soon as the
// primary has the hold. The replica is paused (SIGSTOP) so it misses it,
// the primary is killed and the replica promoted: B acquires the same
// lock while A's hold is live. Both hold it.
func doubleHold(t *testing.T, env *failoverEnv, client func(*testing.T) *lock.Client, name string) {
	ctx := context.Background()
	a := newMutex(t, client(t), name, lock.WithLease(2*time.Minute))
	b := newMutex(t, client(t), name, lock.WithLease(2*time.Minute))
	primary, replica := env.roles(t, a.Key())

	// Cut the replica off: paused, it would still find the hold in its
	// socket buffer when it resumes, so the primary also drops its link
	// (the replica cannot reconnect while paused).
	require.NoError(t, replica.Signal(syscall.SIGSTOP))
	assert.Equal(t, "1", primary.Do(t, "CLIENT", "KILL", "TYPE", "replica"))
	aHeld, err := a.Lock(ctx)
	if err != nil {
		_ = replica.Signal(syscall.SIGCONT)
		t.Fatalf("A's Lock: %v", err)
	}
	primary.Stop() // the replica never got the hold
	t.Cleanup(func() { env.restore(t, primary) })
	require.NoError(t, replica.Signal(syscall.SIGCONT))
	env.promote(t, a.Key(), primary, replica)

	bHeld := eventuallyAcquire(t, b)
	assert.NoError(t, aHeld.Err(), "A still holds the lock")
	assert.NoError(t, bHeld.Err(), "and so does B: the hazard")
}

// acknowledgedHold: with WithReplicas(1, …), (1) A's Lock with the
// replica paused fails with *ReplicaError{Want: 1, Acked: 0} and leaves
// nothing held; (2) with the replica running A's Lock returns once the
// replica has the hold, so after the primary is killed and the replica
// promoted B is refused; B gets the lock only after A's lease has ended
// (A's held context is done by then), once a replica is back (the
// clients moved to the new primary: no acquire fails or hangs for good).
func acknowledgedHold(t *testing.T, env *failoverEnv, client func(*testing.T) *lock.Client, name string) {
	ctx := context.Background()
	const lease = 20 * time.Second // outlasts the failover with room to spare
	opt := lock.WithReplicas(1, 500*time.Millisecond)
	a := newMutex(t, client(t), name, opt, lock.WithLease(lease))
	b := newMutex(t, client(t), name, opt, lock.WithLease(lease))
	primary, replica := env.roles(t, a.Key())

	// (1) The replica cannot acknowledge: no hold.
	require.NoError(t, replica.Signal(syscall.SIGSTOP))
	lctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	held, err := a.Lock(lctx)
	cancel()
	require.NoError(t, replica.Signal(syscall.SIGCONT))
	var re *lock.ReplicaError
	require.ErrorAs(t, err, &re, "A's Lock without an acknowledging replica")
	assert.Equal(t, lock.ReplicaError{Want: 1, Acked: 0, Timeout: 500 * time.Millisecond}, *re)
	assert.ErrorIs(t, err, lock.ErrNotReplicated)
	assert.ErrorIs(t, context.Cause(held), lock.ErrNotAcquired)
	assert.Zero(t, a.Token())
	waitFor(t, 30*time.Second, "the refused hold rolled back on the primary", func() bool {
		return primary.Do(t, "EXISTS", a.Key()) == "0"
	})

	// (2) An acknowledged hold survives the failover.
	var aHeld context.Context
	waitFor(t, 60*time.Second, "A acquires once the replica is back", func() bool {
		held, err := a.Lock(ctx)
		if err != nil {
			require.ErrorAs(t, err, &re) // the replica is still catching up
			return false
		}
		aHeld = held
		return true
	})
	// SCAN is keyless, so a cluster replica answers it too.
	assert.Contains(t, replica.Do(t, "SCAN", "0", "MATCH", a.Key(), "COUNT", "10000"), a.Key(), "the replica has the hold when Lock returns")
	primary.Stop()
	restored := false
	t.Cleanup(func() {
		if !restored {
			env.restore(t, primary)
		}
	})
	env.promote(t, a.Key(), primary, replica)

	// The new primary has no replica yet: a refused attempt's WAIT is not
	// looked at, so B's TryLock is plainly refused.
	var ok bool
	waitFor(t, 60*time.Second, "B gets an answer from the new primary", func() bool {
		_, ok, err = b.TryLock(ctx, 0)
		return err == nil
	})
	assert.False(t, ok, "B is refused: the promoted replica has A's hold")
	require.NoError(t, aHeld.Err(), "A's lease outlasted the failover, so the refusal is A's hold")

	env.restore(t, primary)
	restored = true
	bctx, cancel := context.WithTimeout(ctx, 2*lease)
	defer cancel()
	var bHeld context.Context
	for bHeld == nil {
		held, err := b.Lock(bctx)
		switch {
		case err == nil:
			bHeld = held
		case errors.As(err, &re) && bctx.Err() == nil: // the restored replica still syncing
		default:
			t.Fatalf("B's Lock: %v", err)
		}
	}
	// A's lease ended on A's own clock before the server let its key go
	// (A counts from before it sent Lock), so B's hold comes after it; A's
	// timer goroutine may still be waiting for a CPU on a busy machine
	// when B's Lock returns, hence the bounded wait for its cancel.
	select {
	case <-aHeld.Done():
	case <-time.After(5 * time.Second):
	}
	assert.ErrorIs(t, context.Cause(aHeld), lock.ErrLeaseExpired, "B holds only after A's lease ended")
	assert.NoError(t, bHeld.Err())
	require.NoError(t, b.Unlock(ctx))
}

// eventuallyAcquire tries m.TryLock until it acquires, through the errors
// of a failover, for at most a minute.
func eventuallyAcquire(t *testing.T, m *lock.Mutex) context.Context {
	var held context.Context
	var last error
	waitFor(t, 60*time.Second, "B acquires", func() bool {
		h, ok, err := m.TryLock(context.Background(), 0)
		held, last = h, err
		if err != nil {
			t.Logf("%v TryLock: %v", time.Now().Format("15:04:05.000"), err)
		}
		return ok
	})
	require.NotNil(t, held, "last error: %v", last)
	return held
}

// waitFor polls cond every 100 ms until it holds, failing t after timeout.
func waitFor(t *testing.T, timeout time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("%s: not within %v", what, timeout)
		}
		time.Sleep(100 * time.Millisecond)
	}
}
