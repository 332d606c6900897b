package lock_test

import (
	"context"
	"errors"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/luagen/luagen/lock"
	"github.com/luagen/luagen/redistest"
	"github.com/luagen/luagen/runtime/goredis"
)

// replicated is one primary with one replica, and a lock Client on it per
// executor; the scenarios below pause the replica (cutOff) and resume it.
type replicated struct {
	primary, replica *redistest.Server
	executors        []replicatedExecutor
}

type replicatedExecutor struct {
	name   string
	client func(t *testing.T) *lock.Client
}

func startReplicated(t *testing.T) *replicated {
	primary := redistest.Start(t, "--repl-ping-replica-period", "1")
	replica := redistest.Start(t, "--replicaof", "127.0.0.1", strconv.Itoa(primary.Port), "--repl-ping-replica-period", "1")
	// Registered after Start's Stop, so it runs first: a test that fails
	// while the replica is paused leaves no stopped process behind.
	t.Cleanup(func() { _ = replica.Signal(syscall.SIGCONT) })
	r := &replicated{primary: primary, replica: replica}
	r.executors = []replicatedExecutor{
		{"rueidis", func(t *testing.T) *lock.Client { return newClient(t, primary.Client(t)) }},
		{"goredis", func(t *testing.T) *lock.Client {
			// WAIT blocks the read for up to WithReplicas' timeout, which
			// must stay below ReadTimeout (3 s by default).
			rdb := redis.NewClient(&redis.Options{Addr: primary.Addr, ReadTimeout: 30 * time.Second})
			t.Cleanup(func() { _ = rdb.Close() })
			return newExecClient(t, goredis.NewExecutor(rdb))
		}},
	}
	r.waitInSync(t)
	return r
}

// cutOff pauses the replica (SIGSTOP) and makes the primary drop its
// link, as failover_test.go does: nothing the primary writes from now on
// is acknowledged until resume.
func (r *replicated) cutOff(t *testing.T) {
	t.Helper()
	require.NoError(t, r.replica.Signal(syscall.SIGSTOP))
	assert.Equal(t, "1", r.primary.Do(t, "CLIENT", "KILL", "TYPE", "replica"))
}

// resume lets the replica run again and waits until it is back in sync.
func (r *replicated) resume(t *testing.T) {
	t.Helper()
	require.NoError(t, r.replica.Signal(syscall.SIGCONT))
	r.waitInSync(t)
}

// waitInSync waits until the replica's link is up and it has processed
// every write the primary had when waitInSync began (its slave_repl_offset
// reached the primary's master_repl_offset).
func (r *replicated) waitInSync(t *testing.T) {
	t.Helper()
	want := infoInt(t, r.primary, "master_repl_offset")
	waitFor(t, 60*time.Second, "the replica in sync", func() bool {
		info := r.replica.Do(t, "INFO", "replication")
		return strings.Contains(info, "master_link_status:up\r\n") && infoField(t, info, "slave_repl_offset") >= want
	})
}

// infoInt returns the integer field of s's INFO replication.
func infoInt(t *testing.T, s *redistest.Server, field string) int64 {
	t.Helper()
	return infoField(t, s.Do(t, "INFO", "replication"), field)
}

func infoField(t *testing.T, info, field string) int64 {
	t.Helper()
	for _, line := range strings.Split(info, "\r\n") {
		if v, ok := strings.CutPrefix(line, field+":"); ok {
			n, err := strconv.ParseInt(v, 10, 64)
			require.NoError(t, err, line)
			return n
		}
	}
	t.Fatalf("no %s in INFO replication:\n%s", field, info)
	return 0
}

// heldBy returns the hold count the server has for owner in the lock
// hash key ("<nil>": none).
func heldBy(t *testing.T, s *redistest.Server, key, owner string) string {
	t.Helper()
	return s.Do(t, "HGET", key, owner)
}

// TestReplicasHandoff: with WithReplicas, a release that hands the lock
// to the next waiter counts for the heir only once its own write after
// the grant was acknowledged. (1) With the replica running, B's Lock
// returns holding the lock, and the replica has B as the owner by then.
// (2) With the replica cut off, B's Lock, handed the lock by A's Unlock,
// fails with *ReplicaError{Want: 1, Acked: 0} (the package documentation:
// an acquire fewer replicas acknowledged, the claim of a handoff
// included, is rolled back and Lock returns the *ReplicaError), and the
// primary keeps nothing of B's: the grant was given back, the lock is
// free. Once the replica is back, B acquires.
func TestReplicasHandoff(t *testing.T) {
	env := startReplicated(t)
	const timeout = 500 * time.Millisecond
	for _, ex := range env.executors {
		t.Run(ex.name, func(t *testing.T) {
			ctx := context.Background()
			name := "rep-handoff-" + ex.name
			var bEvents events
			a := newMutex(t, ex.client(t), name, lock.WithReplicas(1, timeout))
			b := newMutex(t, ex.client(t), name, lock.WithReplicas(1, timeout), lock.WithHook(bEvents.hook))

			// lockB starts B's Lock while A holds the lock, and returns
			// once B is queued (refused at least twice: the second
			// refusal comes after its wake subscription is ready, where
			// there is one).
			type result struct {
				held context.Context
				err  error
			}
			lockB := func() <-chan result {
				refused := len(bEvents.of(lock.EventRefused))
				done := make(chan result, 1)
				// Not cancelled before t ends: it bounds B's hold.
				lctx, cancel := context.WithCancel(ctx)
				t.Cleanup(cancel)
				go func() {
					held, err := b.Lock(lctx)
					done <- result{held, err}
				}()
				waitFor(t, 30*time.Second, "B queued behind A", func() bool {
					return len(bEvents.of(lock.EventRefused)) >= refused+2
				})
				return done
			}
			awaitB := func(done <-chan result) (context.Context, error) {
				select {
				case r := <-done:
					return r.held, r.err
				case <-time.After(90 * time.Second):
					t.Fatal("B's Lock did not return")
					return nil, nil
				}
			}

			// (1) The heir's hold is on the replica when its Lock returns.
			_, err := a.Lock(ctx)
			require.NoError(t, err)
			done := lockB()
			require.NoError(t, a.Unlock(ctx))
			bHeld, err := awaitB(done)
			require.NoError(t, err, "B's Lock after A's Unlock")
			assert.Equal(t, "1", heldBy(t, env.replica, b.Key(), b.Owner()), "the replica has B's hold when B's Lock returns")
			assert.Equal(t, "<nil>", heldBy(t, env.replica, a.Key(), a.Owner()))
			acq := bEvents.of(lock.EventAcquired)
			require.Len(t, acq, 1)
			t.Logf("B acquired by trigger %v after %d attempts", acq[0].Trigger, acq[0].Attempt)
			require.NoError(t, b.Unlock(ctx))
			assert.ErrorIs(t, context.Cause(bHeld), lock.ErrUnlocked)

			// (2) No replica acknowledges the heir's claim: no hold.
			_, err = a.Lock(ctx)
			require.NoError(t, err)
			done = lockB()
			env.cutOff(t)
			require.NoError(t, a.Unlock(ctx))
			bCtx, err := awaitB(done)
			var re *lock.ReplicaError
			require.ErrorAs(t, err, &re, "B's Lock, handed the lock with no replica to acknowledge it")
			assert.Equal(t, lock.ReplicaError{Want: 1, Acked: 0, Timeout: timeout}, *re)
			assert.ErrorIs(t, err, lock.ErrNotReplicated)
			assert.Zero(t, b.Token())
			assert.ErrorIs(t, context.Cause(bCtx), lock.ErrNotAcquired)
			waitFor(t, 30*time.Second, "B's refused claim rolled back on the primary", func() bool {
				return env.primary.Do(t, "EXISTS", b.Key()) == "0"
			})
			held, err := b.IsHeld(ctx)
			require.NoError(t, err)
			assert.False(t, held, "the primary counts no hold of B's")

			env.resume(t)
			waitFor(t, 60*time.Second, "B acquires once the replica is back", func() bool {
				h, ok, err := b.TryLock(ctx, 0)
				if err != nil {
					require.ErrorAs(t, err, &re) // still catching up
					return false
				}
				require.True(t, ok, "nobody else holds the lock")
				bHeld = h
				return true
			})
			assert.Equal(t, "1", heldBy(t, env.replica, b.Key(), b.Owner()))
			require.NoError(t, b.Unlock(ctx))
			assert.ErrorIs(t, context.Cause(bHeld), lock.ErrUnlocked)
		})
	}
}

// TestReplicasReentrant: a reentrant acquire that no replica acknowledged
// is rolled back: Lock fails with *ReplicaError, the primary's hold count
// is back at 1, and the first hold stays valid (its context live, its
// token unchanged, one Unlock frees the lock).
func TestReplicasReentrant(t *testing.T) {
	env := startReplicated(t)
	const timeout = 500 * time.Millisecond
	for _, ex := range env.executors {
		t.Run(ex.name, func(t *testing.T) {
			ctx := context.Background()
			a := newMutex(t, ex.client(t), "rep-reenter-"+ex.name, lock.WithReplicas(1, timeout))
			held, err := a.Lock(ctx)
			require.NoError(t, err)
			token := a.Token()
			require.NotZero(t, token)
			assert.Equal(t, "1", heldBy(t, env.replica, a.Key(), a.Owner()))

			env.cutOff(t)
			again, err := a.Lock(ctx)
			var re *lock.ReplicaError
			require.ErrorAs(t, err, &re, "the reentrant Lock with no replica to acknowledge it")
			assert.Equal(t, lock.ReplicaError{Want: 1, Acked: 0, Timeout: timeout}, *re)
			assert.ErrorIs(t, context.Cause(again), lock.ErrNotAcquired)
			n, err := a.HoldCount(ctx)
			require.NoError(t, err)
			assert.Equal(t, int64(1), n, "the extra hold was given back on the primary")
			assert.Equal(t, "1", heldBy(t, env.primary, a.Key(), a.Owner()))
			assert.NoError(t, held.Err(), "the first hold is still valid")
			assert.Equal(t, token, a.Token())

			env.resume(t)
			assert.Equal(t, "1", heldBy(t, env.replica, a.Key(), a.Owner()), "the replica ends with the count the primary has")
			require.NoError(t, a.Unlock(ctx), "one Unlock ends the one hold")
			assert.ErrorIs(t, context.Cause(held), lock.ErrUnlocked)
			assert.Equal(t, "0", env.primary.Do(t, "EXISTS", a.Key()))
		})
	}
}

// TestReplicasRenewal: a watchdog renewal that no replica acknowledged
// is a failed renewal (EventRenewFailed with *ReplicaError). (1) When the
// replica stays cut off, the hold ends with ErrLost once the validity of
// the last acknowledged write runs out, although the primary, renewed
// without acknowledgement, still has a lease: that one is given back.
// (2) When the replica comes back before then, renewals succeed again
// and the hold lives on past that point.
func TestReplicasRenewal(t *testing.T) {
	env := startReplicated(t)
	// Renewals every 3 s; a renewal's WAIT takes at most 500 ms, so the
	// hold has 8 s or so between the first unacknowledged renewal and
	// its end: time for a paused replica to come back and reconnect on a
	// busy machine.
	const lease, timeout = 9 * time.Second, 500 * time.Millisecond
	isShort := func(err error) bool {
		var re *lock.ReplicaError
		return errors.As(err, &re) && *re == lock.ReplicaError{Want: 1, Acked: 0, Timeout: timeout}
	}
	for _, ex := range env.executors {
		t.Run(ex.name+"/Lost", func(t *testing.T) {
			ctx := context.Background()
			var ev events
			a := newMutex(t, ex.client(t), "rep-renew-lost-"+ex.name,
				lock.WithReplicas(1, timeout), lock.WithWatchdogLease(lease), lock.WithHook(ev.hook))
			held, err := a.Lock(ctx)
			require.NoError(t, err)
			env.cutOff(t)
			defer env.resume(t)

			select {
			case <-held.Done():
			case <-time.After(3 * lease):
				t.Fatal("the hold outlived its acknowledged lease by far")
			}
			assert.ErrorIs(t, context.Cause(held), lock.ErrLost)
			// Every renewal failed for want of an acknowledgement; the
			// last one may instead have been cut off by the end of the
			// hold's validity (its WAIT runs under that deadline).
			fails := ev.of(lock.EventRenewFailed)
			require.NotEmpty(t, fails, "renewals were sent and failed")
			assert.True(t, isShort(fails[0].Err), "the first renewal failed with %v", fails[0].Err)
			for i, f := range fails {
				last := i == len(fails)-1
				assert.True(t, isShort(f.Err) || (last && errors.Is(f.Err, context.DeadlineExceeded)), "renewal %d of %d failed with %v", i+1, len(fails), f.Err)
			}
			assert.Empty(t, ev.of(lock.EventRenewed), "no renewal counted while the replica was cut off")
			lost := ev.of(lock.EventLost)
			require.Len(t, lost, 1)
			assert.ErrorIs(t, lost[0].Err, lock.ErrLost)
			err = a.Unlock(ctx)
			assert.ErrorIs(t, err, lock.ErrNotHeld)
			t.Logf("Unlock after the loss: %v", err)
			waitFor(t, 30*time.Second, "the unacknowledged lease given back on the primary", func() bool {
				return heldBy(t, env.primary, a.Key(), a.Owner()) == "<nil>"
			})
		})
		t.Run(ex.name+"/Resumed", func(t *testing.T) {
			ctx := context.Background()
			var ev events
			a := newMutex(t, ex.client(t), "rep-renew-back-"+ex.name,
				lock.WithReplicas(1, timeout), lock.WithWatchdogLease(lease), lock.WithHook(ev.hook))
			held, err := a.Lock(ctx)
			require.NoError(t, err)
			env.cutOff(t)
			cut := time.Now() // the last acknowledged write was before this
			waitFor(t, 2*lease, "a renewal fails", func() bool { return len(ev.of(lock.EventRenewFailed)) > 0 })
			env.resume(t)
			require.NoError(t, held.Err(), "the hold lasts while its acknowledged lease does")

			waitFor(t, 3*lease, "renewals succeed again", func() bool { return len(ev.of(lock.EventRenewed)) > 0 })
			for _, f := range ev.of(lock.EventRenewFailed) {
				assert.True(t, isShort(f.Err), "renewal failed with %v", f.Err)
			}
			// Past the end of the lease acknowledged before the cut, the
			// hold is still on, and on the replica.
			for time.Since(cut) < lease+time.Second && held.Err() == nil {
				time.Sleep(100 * time.Millisecond)
			}
			require.NoError(t, held.Err(), "the hold continues after renewals are acknowledged again")
			assert.Empty(t, ev.of(lock.EventLost))
			assert.Equal(t, "1", heldBy(t, env.replica, a.Key(), a.Owner()))
			require.NoError(t, a.Unlock(ctx))
			assert.ErrorIs(t, context.Cause(held), lock.ErrUnlocked)
		})
	}
}

// TestReplicasHandoffWaits: the heir's Lock waits for the replica. The
// replica is paused (SIGSTOP, its link kept, so that it acknowledges all
// it missed once it runs again) before A's Unlock hands the lock to B:
// the primary has the grant, yet B's Lock does not return while the
// replica cannot acknowledge; once it runs again, B's Lock returns
// holding the lock, and the replica has B as the owner.
func TestReplicasHandoffWaits(t *testing.T) {
	env := startReplicated(t)
	// WAIT may take 10 s: ample for the replica to resume and answer on
	// a busy machine. It must be at most a third of the grant lease, so
	// the queue TTL is raised.
	opts := []lock.Option{lock.WithReplicas(1, 10*time.Second), lock.WithWaitStrategy(lock.WaitStrategy{QueueTTL: 30 * time.Second})}
	for _, ex := range env.executors {
		t.Run(ex.name, func(t *testing.T) {
			ctx := context.Background()
			name := "rep-handoff-waits-" + ex.name
			var bEvents events
			a := newMutex(t, ex.client(t), name, opts...)
			b := newMutex(t, ex.client(t), name, append(opts, lock.WithHook(bEvents.hook))...)
			_, err := a.Lock(ctx)
			require.NoError(t, err)

			type result struct {
				held context.Context
				err  error
			}
			done := make(chan result, 1)
			lctx, cancel := context.WithCancel(ctx)
			defer cancel()
			go func() {
				held, err := b.Lock(lctx)
				done <- result{held, err}
			}()
			waitFor(t, 30*time.Second, "B queued behind A", func() bool { return len(bEvents.of(lock.EventRefused)) >= 2 })

			require.NoError(t, env.replica.Signal(syscall.SIGSTOP))
			resumed := false
			defer func() {
				if !resumed {
					_ = env.replica.Signal(syscall.SIGCONT)
				}
			}()
			require.NoError(t, a.Unlock(ctx))
			waitFor(t, 30*time.Second, "the primary has the grant to B", func() bool {
				return heldBy(t, env.primary, b.Key(), b.Owner()) == "1"
			})
			select {
			case r := <-done:
				t.Fatalf("B's Lock returned while the replica was paused: %v", r.err)
			case <-time.After(time.Second):
			}

			require.NoError(t, env.replica.Signal(syscall.SIGCONT))
			resumed = true
			var r result
			select {
			case r = <-done:
			case <-time.After(90 * time.Second):
				t.Fatal("B's Lock did not return after the replica resumed")
			}
			require.NoError(t, r.err, "B's Lock once the replica acknowledges")
			assert.Equal(t, "1", heldBy(t, env.replica, b.Key(), b.Owner()), "the replica has B's hold when B's Lock returns")
			require.NoError(t, b.Unlock(ctx))
			assert.ErrorIs(t, context.Cause(r.held), lock.ErrUnlocked)
			env.waitInSync(t)
		})
	}
}
