package lock_test

// Issue 35: WithReplicas' contracts hold exactly. When Lock or TryLock
// returns a *ReplicaError nothing of the acquire is held at that moment,
// and "the replicas fell short" is a *ReplicaError however late the
// server answers WAIT (Redis checks a blocked client's timeout in its
// event loop, which sleeps up to 1/hz = 100 ms: WAIT answers up to that
// long after its timeout).

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/luagen/luagen/lock"
	"github.com/luagen/luagen/runtime"
)

// slowExecutor is a ReplicaWaiter that makes the server look slow in two
// chosen ways: every Abandon is sent late (so a rollback left to the
// background is still to come when Lock returns), and every WAIT answers
// waitLate after its own answer (as Redis does when its event loop
// sleeps past the timeout). Both delays end with the call's ctx.
type slowExecutor struct {
	runtime.ReplicaWaiter
	abandonLate time.Duration
	waitLate    time.Duration
}

func (e *slowExecutor) EvalSha(ctx context.Context, s *runtime.Script, keys, args []string) (runtime.Value, error) {
	if err := e.before(ctx, s); err != nil {
		return runtime.Value{}, err
	}
	return e.ReplicaWaiter.EvalSha(ctx, s, keys, args)
}

func (e *slowExecutor) Eval(ctx context.Context, s *runtime.Script, keys, args []string) (runtime.Value, error) {
	if err := e.before(ctx, s); err != nil {
		return runtime.Value{}, err
	}
	return e.ReplicaWaiter.Eval(ctx, s, keys, args)
}

func (e *slowExecutor) EvalShaWait(ctx context.Context, s *runtime.Script, keys, args []string, w *runtime.Wait) (runtime.Value, error) {
	v, err := e.ReplicaWaiter.EvalShaWait(ctx, s, keys, args, w)
	return v, e.after(ctx, err)
}

func (e *slowExecutor) EvalWait(ctx context.Context, s *runtime.Script, keys, args []string, w *runtime.Wait) (runtime.Value, error) {
	v, err := e.ReplicaWaiter.EvalWait(ctx, s, keys, args, w)
	return v, e.after(ctx, err)
}

func (e *slowExecutor) before(ctx context.Context, s *runtime.Script) error {
	if s.Name() != "scripts.Abandon" {
		return nil
	}
	return sleepCtx(ctx, e.abandonLate)
}

func (e *slowExecutor) after(ctx context.Context, err error) error {
	if err != nil {
		return err
	}
	return sleepCtx(ctx, e.waitLate)
}

func sleepCtx(ctx context.Context, d time.Duration) error {
	if d <= 0 {
		return nil
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// slowClient returns a lock Client on env's primary (rueidis) whose
// executor is e around the Client's own.
func (r *replicated) slowClient(t *testing.T, abandonLate, waitLate time.Duration) *lock.Client {
	e := &slowExecutor{ReplicaWaiter: runtime.NewRueidisExecutor(r.primary.Client(t)), abandonLate: abandonLate, waitLate: waitLate}
	return newExecClient(t, e)
}

// warmUp locks and unlocks m while the replica runs, so that the
// scripts are in the server's script cache: a first EVALSHA answered
// NOSCRIPT is sent again as EVAL, each followed by its WAIT, which would
// double the WAIT's time in the scenarios below.
func warmUp(t *testing.T, m *lock.Mutex) {
	t.Helper()
	lockAcked(t, m)
	require.NoError(t, m.Unlock(context.Background()))
}

// lockAcked locks m while the replica runs, again after a *ReplicaError:
// on a busy machine the replica may take longer than WithReplicas' short
// timeouts here to acknowledge.
func lockAcked(t *testing.T, m *lock.Mutex) context.Context {
	t.Helper()
	var held context.Context
	waitFor(t, 30*time.Second, "a Lock the replica acknowledges", func() bool {
		var err error
		held, err = m.Lock(context.Background())
		var re *lock.ReplicaError
		if errors.As(err, &re) {
			return false
		}
		require.NoError(t, err)
		return true
	})
	return held
}

// requireShort asserts that err is the *ReplicaError of one replica
// wanted, none acknowledged, with timeout.
func requireShort(t *testing.T, err error, timeout time.Duration, what string) {
	t.Helper()
	var re *lock.ReplicaError
	require.ErrorAs(t, err, &re, what)
	assert.Equal(t, lock.ReplicaError{Want: 1, Acked: 0, Timeout: timeout}, *re, what)
	assert.ErrorIs(t, err, lock.ErrNotReplicated, what)
}

// TestReplicasRolledBackBeforeReturn: a TryLock that returns a
// *ReplicaError has given its hold back by then (the newcomer's
// finding: IsLocked was still true on the first poll after it). The
// rollback is sent 300 ms late here; the lock is free the moment TryLock
// returns, asked on another connection.
func TestReplicasRolledBackBeforeReturn(t *testing.T) {
	env := startReplicated(t)
	const timeout = 100 * time.Millisecond
	c := env.slowClient(t, 300*time.Millisecond, 0)
	m := newMutex(t, c, "rep-rolled-back", lock.WithReplicas(1, timeout))
	warmUp(t, m)
	env.cutOff(t)
	defer env.resume(t)

	held, ok, err := m.TryLock(context.Background(), 0)
	exists := env.primary.Do(t, "EXISTS", m.Key())
	requireShort(t, err, timeout, "TryLock with no replica to acknowledge")
	assert.False(t, ok)
	assert.ErrorIs(t, context.Cause(held), lock.ErrNotAcquired)
	assert.Equal(t, "0", exists, "nothing is held when TryLock returns the *ReplicaError")
	locked, err := m.IsLocked(context.Background())
	require.NoError(t, err)
	assert.False(t, locked)
}

// TestReplicasHandoffRolledBackBeforeReturn: the same for the heir of a
// handoff (the adversary's finding, 1 run in 3 before): B's Lock, handed
// the lock by A's Unlock while the replica is cut off, returns the
// *ReplicaError only once the grant is given back, so the primary has no
// hold of B's when it returns.
func TestReplicasHandoffRolledBackBeforeReturn(t *testing.T) {
	env := startReplicated(t)
	const timeout = 100 * time.Millisecond
	ctx := context.Background()
	var bEvents events
	a := newMutex(t, newClient(t, env.primary.Client(t)), "rep-handoff-rolled-back", lock.WithReplicas(1, timeout))
	cb := env.slowClient(t, 300*time.Millisecond, 0)
	b := newMutex(t, cb, "rep-handoff-rolled-back", lock.WithReplicas(1, timeout), lock.WithHook(bEvents.hook))

	warmUp(t, b)
	lockAcked(t, a)
	type result struct {
		err    error
		holder string // the primary's hold count for B when Lock returned
	}
	done := make(chan result, 1)
	go func() {
		_, err := b.Lock(ctx)
		done <- result{err, env.primary.Do(t, "HGET", b.Key(), b.Owner())}
	}()
	waitFor(t, 30*time.Second, "B queued behind A", func() bool { return len(bEvents.of(lock.EventRefused)) >= 2 })
	env.cutOff(t)
	defer env.resume(t)
	require.NoError(t, a.Unlock(ctx))
	var r result
	select {
	case r = <-done:
	case <-time.After(60 * time.Second):
		t.Fatal("B's Lock did not return")
	}
	requireShort(t, r.err, timeout, "B's Lock, handed the lock with no replica to acknowledge it")
	assert.Equal(t, "<nil>", r.holder, "the grant was given back before B's Lock returned")
	assert.Zero(t, b.Token())
}

// TestReplicasLateWait: WAIT that answers after its timeout (Redis
// answers up to 1/hz late; here 150 ms late, on top of the real WAIT
// with the replica cut off) still makes TryLock(ctx, 0) report a
// *ReplicaError, not ErrNoAnswer: TryLock's bound counts WAIT's timeout
// apart from the grace, and when WAIT has not answered by then the
// attempt is rolled back and its rollback tells whether it held the lock
// (the newcomer's finding with WithReplicas(2, 100ms), the adversary's
// with (1, 300ms)). Nothing is held when it returns, and it returns
// within wait + Grace + timeout plus the rollback's round trip.
func TestReplicasLateWait(t *testing.T) {
	env := startReplicated(t)
	for _, timeout := range []time.Duration{50 * time.Millisecond, 300 * time.Millisecond} {
		t.Run(timeout.String(), func(t *testing.T) {
			c := env.slowClient(t, 0, 150*time.Millisecond)
			m := newMutex(t, c, "rep-late-wait-"+timeout.String(), lock.WithReplicas(1, timeout))
			warmUp(t, m)
			env.cutOff(t)
			defer env.resume(t)
			start := time.Now()
			_, ok, err := m.TryLock(context.Background(), 0)
			took := time.Since(start)
			exists := env.primary.Do(t, "EXISTS", m.Key())
			requireShort(t, err, timeout, "TryLock whose WAIT answered late")
			assert.False(t, ok)
			assert.Equal(t, "0", exists, "nothing is held when TryLock returns")
			t.Logf("TryLock(ctx, 0) returned after %v", took)
		})
	}
	// The real server alone, replica paused: WAIT's timeout fires late by
	// up to 100 ms (hz 10), which the 25 ms grace did not cover.
	for _, ex := range env.executors {
		t.Run("server/"+ex.name, func(t *testing.T) {
			const timeout = 300 * time.Millisecond
			m := newMutex(t, ex.client(t), "rep-late-wait-server-"+ex.name, lock.WithReplicas(1, timeout))
			warmUp(t, m)
			env.cutOff(t)
			defer env.resume(t)
			for i := range 3 {
				_, _, err := m.TryLock(context.Background(), 0)
				requireShort(t, err, timeout, "TryLock with the replica paused")
				assert.Equal(t, "0", env.primary.Do(t, "EXISTS", m.Key()), "try %d: nothing held", i)
			}
		})
	}
}

// TestReplicasReentrantLateWait: a reentrant TryLock whose WAIT answers
// late gives its extra hold back (the adversary's liveness finding:
// it returned ErrNoAnswer and kept the count at 2, so the owner's one
// Unlock left the lock held, renewed by the watchdog, for good). It
// returns the *ReplicaError with the count back at 1, the first hold
// live; one Unlock frees the lock.
func TestReplicasReentrantLateWait(t *testing.T) {
	env := startReplicated(t)
	const timeout = 150 * time.Millisecond
	ctx := context.Background()
	c := env.slowClient(t, 0, 150*time.Millisecond)
	m := newMutex(t, c, "rep-reenter-late", lock.WithReplicas(1, timeout), lock.WithWatchdogLease(3*time.Second))
	other := newMutex(t, newClient(t, env.primary.Client(t)), "rep-reenter-late")
	held := lockAcked(t, m)

	env.cutOff(t)
	again, ok, err := m.TryLock(ctx, 0)
	count := heldBy(t, env.primary, m.Key(), m.Owner())
	requireShort(t, err, timeout, "the reentrant TryLock whose WAIT answered late")
	assert.False(t, ok)
	assert.ErrorIs(t, context.Cause(again), lock.ErrNotAcquired)
	assert.Equal(t, "1", count, "the extra hold was given back when TryLock returned")
	assert.NoError(t, held.Err(), "the first hold is still valid")
	env.resume(t)

	require.NoError(t, m.Unlock(ctx))
	assert.ErrorIs(t, context.Cause(held), lock.ErrUnlocked)
	assert.Equal(t, "0", env.primary.Do(t, "EXISTS", m.Key()), "one Unlock freed the lock")
	_, ok, err = other.TryLock(ctx, 0)
	require.NoError(t, err)
	assert.True(t, ok, "another owner takes it")
	require.NoError(t, other.Unlock(ctx))
}
