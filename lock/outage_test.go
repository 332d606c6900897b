package lock_test

// Issue 20: the holder's view never diverges from the server's in the
// unsafe direction, never leaves a stale hold, and never reports one
// fencing token for two sections: a Lock answered late (an outage with AOF,
// a stalled server) counts its hold from the server's lease, and a hold the
// holder gave up on its own clock is given back on the server.

import (
	"context"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/luagen/luagen/lock"
	"github.com/luagen/luagen/redistest"
)

// pttl returns the lock key's PTTL on the server.
func pttl(t *testing.T, srv *redistest.Server, m *lock.Mutex) time.Duration {
	t.Helper()
	ms, err := strconv.Atoi(srv.Do(t, "PTTL", m.Key()))
	require.NoError(t, err)
	return time.Duration(ms) * time.Millisecond
}

// lockThroughFault runs Lock on m while fault (an outage or a stall that
// outlasts the lease) is in progress, and checks that the hold it returns
// is the server's: live on both sides for longer than the lease (the
// watchdog renews it), a fencing token above every earlier one, and
// released by Unlock.
func lockThroughFault(t *testing.T, srv *redistest.Server, lease time.Duration, fault func()) {
	ctx := context.Background()
	c := newClient(t, srv.Client(t), lock.WithWatchdogLease(lease))
	m := newMutex(t, c, "outage")
	_, err := m.Lock(ctx)
	require.NoError(t, err)
	before := m.Token()
	require.NoError(t, m.Unlock(ctx))

	type result struct {
		held context.Context
		err  error
		at   time.Time
	}
	done := make(chan result, 1)
	faulted := make(chan struct{})
	go func() {
		defer close(faulted)
		fault()
	}()
	go func() {
		time.Sleep(100 * time.Millisecond) // sent during the fault
		held, err := m.Lock(ctx)
		done <- result{held, err, time.Now()}
	}()
	r := <-done
	<-faulted
	require.NoError(t, r.err)
	t.Logf("Lock returned after the fault; server PTTL %v", pttl(t, srv, m))
	token := m.Token()
	assert.Greater(t, token, before, "a new section draws a new fencing token")

	// Live for longer than one lease: renewed by the watchdog, on both
	// sides.
	time.Sleep(lease * 3 / 2)
	assert.NoError(t, context.Cause(r.held), "the hold the server counts is live here")
	assert.Equal(t, "1", srv.Do(t, "HGET", m.Key(), m.Owner()), "and on the server")
	assert.Equal(t, token, m.Token())

	require.NoError(t, m.Unlock(ctx))
	assert.Equal(t, "0", srv.Do(t, "EXISTS", m.Key()), "Unlock released it")
	_, err = m.Lock(ctx)
	require.NoError(t, err)
	assert.Greater(t, m.Token(), token)
	require.NoError(t, m.Unlock(ctx))
}

// Lock called while Redis (AOF, appendfsync always) is down for longer
// than the lease: its retry gets through once the server is back, and the
// hold counts from that try, not from the first one sent into the outage.
func TestLockThroughRestart(t *testing.T) {
	srv := redistest.Start(t, "--appendonly", "yes", "--appendfsync", "always")
	const lease = 2 * time.Second
	lockThroughFault(t, srv, lease, func() {
		srv.Stop()
		time.Sleep(lease * 3 / 2)
		if err := srv.Restart(); err != nil {
			t.Error(err)
		}
	})
}

// The same with a server stalled by SIGSTOP for longer than the lease: the
// one try is sent before the stall and answered after it, so only the
// server can say how much of the lease is left; Lock asks it.
func TestLockThroughStall(t *testing.T) {
	srv := redistest.Start(t)
	const lease = 2 * time.Second
	lockThroughFault(t, srv, lease, func() {
		assert.NoError(t, srv.Signal(syscall.SIGSTOP))
		time.Sleep(lease * 5 / 4)
		assert.NoError(t, srv.Signal(syscall.SIGCONT))
	})
}

// A holder whose renewals run on the server but whose answers never come
// back gives the hold up when the lease runs out on its clock (ErrLost),
// while the server still counts it with a fresh lease: the hold is then
// given back on the server at once (nobody waits out that lease), Unlock
// says so, and the next Lock draws a new fencing token instead of taking
// the old hold, and its token, up again.
func TestGivenUpHoldIsReleased(t *testing.T) {
	srv := redistest.Start(t)
	rc := srv.Client(t)
	fx := newFaultExecutor(rc)
	const lease = 900 * time.Millisecond
	c := newClient(t, rc, lock.WithExecutor(fx), lock.WithWatchdogLease(lease))
	m := newMutex(t, c, "given-up")
	other := newMutex(t, newClient(t, srv.Client(t)), "given-up")
	ctx := context.Background()

	fx.inject("scripts.Renew", stall, stall, stall, stall, stall, stall, stall, stall)
	held, err := m.Lock(ctx)
	require.NoError(t, err)
	token := m.Token()
	<-held.Done()
	require.ErrorIs(t, context.Cause(held), lock.ErrLost)

	// Without the give-back the server would count this owner's hold for
	// up to another lease after the last stalled renewal ran.
	_, ok, err := other.TryLock(ctx, lease/2)
	require.NoError(t, err)
	require.True(t, ok, "another owner gets the lock well before the server's lease ends")
	require.NoError(t, other.Unlock(ctx))

	err = m.Unlock(ctx)
	require.ErrorIs(t, err, lock.ErrNotHeld)
	assert.Contains(t, err.Error(), "the server still counted it, and it was released")
	assert.ErrorIs(t, m.Unlock(ctx), lock.ErrNotHeld, "reported once; then plain ErrNotHeld")

	fx.inject("scripts.Renew", pass)
	_, err = m.Lock(ctx)
	require.NoError(t, err)
	assert.Greater(t, m.Token(), token, "a new section, a new token")
	require.NoError(t, m.Unlock(ctx))
}

// Right after a hold ends on this process' clock (its renewals ran on the
// server, their answers stalled), Unlock already knows it was given up and
// says what the server had, and the next Lock waits for the give-back: it
// never takes the old hold, and its token, up again. (Once, the held
// context was cancelled before the give-back was registered: in that gap
// Unlock answered a bare ErrNotHeld and Lock took the old hold, whose late
// give-back then deleted it under the new holder.)
func TestGiveUpRaceNeverReusesAToken(t *testing.T) {
	srv := redistest.Start(t)
	rc := srv.Client(t)
	ctx := context.Background()
	const lease = 400 * time.Millisecond
	for i := range 20 {
		fx := newFaultExecutor(rc)
		c := newClient(t, rc, lock.WithExecutor(fx), lock.WithWatchdogLease(lease))
		m := newMutex(t, c, "give-up-race")
		fx.inject("scripts.Renew", stall, stall, stall, stall, stall, stall, stall, stall)
		held, err := m.Lock(ctx)
		require.NoError(t, err)
		token := m.Token()
		<-held.Done()
		err = m.Unlock(ctx)
		require.ErrorIs(t, err, lock.ErrNotHeld, "iteration %d", i)
		require.Contains(t, err.Error(), "the server", "iteration %d: Unlock knows of the give-back", i)

		fx.inject("scripts.Renew", pass, pass, pass, pass, pass, pass, pass, pass)
		_, err = m.Lock(ctx)
		require.NoError(t, err)
		require.Greater(t, m.Token(), token, "iteration %d: a new section, a new token", i)
		require.Equal(t, "1", srv.Do(t, "HGET", m.Key(), m.Owner()), "iteration %d: the new hold is the server's", i)
		if err := m.Unlock(ctx); err != nil {
			require.ErrorIs(t, err, lock.ErrNotHeld, "iteration %d: lost meanwhile (a busy machine)", i)
		}
		c.Close()
	}
}

// A reentrant Lock sent into a stall that outlasts the hold on this
// process' clock: when its answer comes, the hold it raised is being given
// back, so it counts nothing; the Lock acquires anew (after the give-back,
// with a new token) instead of returning a hold the server no longer
// counts while another owner takes the lock.
func TestReentrantLockAcrossAGiveUp(t *testing.T) {
	srv := redistest.Start(t)
	ctx := context.Background()
	const lease = 2 * time.Second
	lost := make(chan struct{})
	m := newMutex(t, newClient(t, srv.Client(t), lock.WithWatchdogLease(lease), lock.WithHook(func(e lock.Event) {
		if e.Kind == lock.EventLost {
			close(lost)
		}
	})), "reentrant-give-up")
	_, err := m.Lock(ctx)
	require.NoError(t, err)
	token := m.Token()
	require.NoError(t, srv.Signal(syscall.SIGSTOP))
	stopped := true
	defer func() {
		if stopped {
			_ = srv.Signal(syscall.SIGCONT)
		}
	}()
	time.Sleep(lease * 7 / 10) // the renewals are stalled by now
	reentrant := make(chan error, 1)
	var held context.Context
	go func() {
		var err error
		held, err = m.Lock(ctx) // reentrant, sent into the stall
		reentrant <- err
	}()
	<-lost
	require.NoError(t, srv.Signal(syscall.SIGCONT))
	stopped = false
	require.NoError(t, <-reentrant)
	require.NoError(t, held.Err())
	assert.Greater(t, m.Token(), token, "a new hold, not the given-up one")
	assert.Equal(t, "1", srv.Do(t, "HGET", m.Key(), m.Owner()), "held on the server too, one hold")
	other := newMutex(t, newClient(t, srv.Client(t), patient), "reentrant-give-up")
	_, ok, err := other.TryLock(ctx, 0)
	require.NoError(t, err)
	assert.False(t, ok, "nobody else holds it meanwhile")
	require.NoError(t, m.Unlock(ctx))
	assert.Equal(t, "0", srv.Do(t, "EXISTS", m.Key()))
}

// Close ends every wait at once with ErrClosed (the adversary's finding:
// Close 100 ms into a TryLock(ctx, 2s) against a stalled server made it
// return after 7 s with ErrNoAnswer, the rollback of its attempt run on
// its own goroutine for the whole retry window). A TryLock and a Lock
// with a deadline, each with its attempt in flight into a SIGSTOPped
// server, return ErrClosed well before TryLock's wait would have ended; a
// Lock without a deadline, whose attempt runs on its own goroutine,
// returns ErrClosed within the retry window (1 s here).
func TestCloseEndsWaitsAtOnce(t *testing.T) {
	srv := redistest.Start(t)
	c, err := lock.NewClient(srv.Client(t), lock.WithRetryWindow(time.Second))
	require.NoError(t, err)
	ctx := context.Background()
	try := newMutex(t, c, "close-ends-waits")
	lck := newMutex(t, c, "close-ends-waits")
	_, err = try.IsLocked(ctx) // connected before the stall
	require.NoError(t, err)

	require.NoError(t, srv.Signal(syscall.SIGSTOP))
	stopped := true
	defer func() {
		if stopped {
			_ = srv.Signal(syscall.SIGCONT)
		}
	}()
	const wait = 2 * time.Second
	type result struct {
		err error
		at  time.Time
	}
	tried, locked, plain := make(chan result, 1), make(chan result, 1), make(chan result, 1)
	pln := newMutex(t, c, "close-ends-waits")
	go func() {
		_, _, err := try.TryLock(ctx, wait)
		tried <- result{err, time.Now()}
	}()
	go func() {
		lctx, cancel := context.WithTimeout(ctx, time.Minute)
		defer cancel()
		_, err := lck.Lock(lctx)
		locked <- result{err, time.Now()}
	}()
	go func() {
		_, err := pln.Lock(ctx) // no deadline: its attempt runs on this goroutine
		plain <- result{err, time.Now()}
	}()
	time.Sleep(100 * time.Millisecond)
	closed := time.Now()
	closeDone := make(chan struct{})
	go func() {
		defer close(closeDone)
		c.Close()
	}()
	for _, ch := range []chan result{tried, locked} {
		select {
		case r := <-ch:
			assert.ErrorIs(t, r.err, lock.ErrClosed)
			assert.Less(t, r.at.Sub(closed), wait-100*time.Millisecond, "returned at Close, before the wait would have ended")
			t.Logf("returned %v after Close", r.at.Sub(closed))
		case <-time.After(30 * time.Second):
			t.Fatal("a wait did not end")
		}
	}
	select {
	case r := <-plain:
		assert.ErrorIs(t, r.err, lock.ErrClosed)
		assert.Less(t, r.at.Sub(closed), time.Second+slack, "within the retry window")
	case <-time.After(30 * time.Second):
		t.Fatal("the Lock without a deadline did not end")
	}
	require.NoError(t, srv.Signal(syscall.SIGCONT))
	stopped = false
	<-closeDone
}

// A held context never outlives its lease on the holder's clock, whatever
// Unlock is waiting for (the adversary's finding: with a 1 s lease and
// the server SIGSTOPped for 2.5 s, the context of a holder whose Unlock
// was waiting for the server was still live 1.5 s into the pause).
func TestHeldContextEndsDuringUnlock(t *testing.T) {
	srv := redistest.Start(t)
	ctx := context.Background()
	const lease = time.Second
	for i, opt := range []lock.Option{lock.WithLease(lease), lock.WithWatchdogLease(lease)} {
		m := newMutex(t, newClient(t, srv.Client(t), opt), "held-during-unlock")
		start := time.Now()
		held, err := m.Lock(ctx)
		require.NoError(t, err)
		require.NoError(t, srv.Signal(syscall.SIGSTOP))
		unlocked := make(chan error, 1)
		go func() { unlocked <- m.Unlock(ctx) }()
		select {
		case <-held.Done():
			assert.Less(t, time.Since(start), lease+500*time.Millisecond, "it ended at the lease")
		case <-time.After(lease + time.Second):
			t.Error("the held context outlived its lease while Unlock waited")
		}
		if held.Err() != nil {
			assert.ErrorIs(t, context.Cause(held), map[bool]error{true: lock.ErrLeaseExpired, false: lock.ErrLost}[i == 0])
		}
		require.NoError(t, srv.Signal(syscall.SIGCONT))
		err = <-unlocked
		t.Logf("Unlock after the stall: %v; held context: %v", err, context.Cause(held))
		assert.Equal(t, "0", srv.Do(t, "EXISTS", m.Key()), "the lock is free")
	}
}
