package lock_test

// Handoffs between Mutexes of one Client (WaitStrategy.MaxHandoffs) on a
// real redis-server: the lock passes in the release's own script, and
// every way that can go wrong leaves at most one hold, never renewed by
// nobody: lost replies, outcomes never learned, heirs that leave, Close.

import (
	"context"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/luagen/luagen/redistest"
	"github.com/luagen/luagen/lock"
	"github.com/luagen/luagen/runtime"
)

// asleep waits until w has made attempts attempts and has had time to go
// to sleep after the last one was refused.
func asleep(t *testing.T, ev *events, attempts int) {
	t.Helper()
	require.Eventually(t, func() bool { return len(ev.of(lock.EventAttempt)) == attempts }, 5*time.Second, time.Millisecond)
	time.Sleep(50 * time.Millisecond)
}

type lockResult struct {
	held context.Context
	ok   bool
	err  error
}

// goLock runs m.TryLock (wait > 0) or m.Lock (wait 0) in a goroutine.
func goLock(ctx context.Context, m *lock.Mutex, wait time.Duration) <-chan lockResult {
	ch := make(chan lockResult, 1)
	go func() {
		var r lockResult
		if wait > 0 {
			r.held, r.ok, r.err = m.TryLock(ctx, wait)
		} else {
			r.held, r.err = m.Lock(ctx)
			r.ok = r.err == nil
		}
		ch <- r
	}()
	return ch
}

func await(t *testing.T, ch <-chan lockResult) lockResult {
	t.Helper()
	select {
	case r := <-ch:
		return r
	case <-time.After(10 * time.Second):
		t.Fatal("Lock did not return")
		return lockResult{}
	}
}

func holdCount(t *testing.T, m *lock.Mutex) int64 {
	t.Helper()
	n, err := m.HoldCount(context.Background())
	require.NoError(t, err)
	return n
}

// A release hands the lock to a sleeping waiter of the same Client in its
// own script: the waiter sends nothing more, holds one hold with its own
// lease and a new token, and its watchdog runs from the grant.
func TestHandoffToWaiterOfSameClient(t *testing.T) {
	srv := redistest.Start(t)
	rc := srv.Client(t)
	fx := newFaultExecutor(rc)
	const lease = 900 * time.Millisecond
	c := newClient(t, rc, lock.WithExecutor(fx))
	var hev, wev events
	holder := newMutex(t, c, "given", lock.WithHook(hev.hook), lock.WithLease(time.Minute))
	waiter := newMutex(t, c, "given", lock.WithHook(wev.hook), lock.WithWatchdogLease(lease))
	ctx := context.Background()
	held, err := holder.Lock(ctx)
	require.NoError(t, err)
	oldToken := holder.Token()

	result := goLock(ctx, waiter, 0)
	asleep(t, &wev, 2) // first, subscribed
	require.NoError(t, holder.Unlock(ctx))
	r := await(t, result)
	require.NoError(t, r.err)

	assert.ErrorIs(t, context.Cause(held), lock.ErrUnlocked)
	acq := wev.of(lock.EventAcquired)
	require.Len(t, acq, 1)
	assert.Equal(t, lock.TriggerHandoff, acq[0].Trigger)
	assert.Equal(t, 2, acq[0].Attempt, "no attempt of its own after the release")
	assert.EqualValues(t, 1, acq[0].HoldCount)
	assert.Greater(t, waiter.Token(), oldToken, "a new fencing token")
	assert.Equal(t, acq[0].Token, waiter.Token())
	assert.Equal(t, strconv.FormatInt(waiter.Token(), 10), srv.Do(t, "GET", waiter.Key()+":fence"))
	rel := hev.of(lock.EventReleased)
	require.Len(t, rel, 1)
	assert.Equal(t, lock.TriggerHandoff, rel[0].Trigger)
	assert.Equal(t, 3, fx.count("lock.Acquire"), "the holder's and the waiter's two")
	assert.Equal(t, 1, fx.count("lock.Handoff"))
	assert.Zero(t, fx.count("lock.Release"))
	assert.Equal(t, "map["+waiter.Owner()+":1]", srv.Do(t, "HGETALL", waiter.Key()))
	pttl, _ := strconv.Atoi(srv.Do(t, "PTTL", waiter.Key()))
	assert.LessOrEqual(t, pttl, int(lease.Milliseconds()), "the heir's lease, not the holder's minute")

	// The heir's watchdog keeps its lock.
	time.Sleep(2 * lease)
	require.NoError(t, r.held.Err())
	assert.NotZero(t, fx.count("lock.Renew"))
	assert.Equal(t, "map["+waiter.Owner()+":1]", srv.Do(t, "HGETALL", waiter.Key()))
	require.NoError(t, waiter.Unlock(ctx))
	assert.Equal(t, "0", srv.Do(t, "EXISTS", waiter.Key()))
}

// With MaxHandoffs negative the lock is freed and the waiter woken by the
// unlock message, as between Clients.
func TestHandoffOff(t *testing.T) {
	srv := redistest.Start(t)
	c := newClient(t, srv.Client(t), lock.WithWaitStrategy(lock.WaitStrategy{MaxHandoffs: -1}))
	var ev events
	holder := newMutex(t, c, "off")
	waiter := newMutex(t, c, "off", lock.WithHook(ev.hook))
	ctx := context.Background()
	_, err := holder.Lock(ctx)
	require.NoError(t, err)
	result := goLock(ctx, waiter, 0)
	asleep(t, &ev, 2)
	require.NoError(t, holder.Unlock(ctx))
	require.NoError(t, await(t, result).err)
	acq := ev.of(lock.EventAcquired)
	require.Len(t, acq, 1)
	assert.Equal(t, lock.TriggerNotified, acq[0].Trigger)
	require.NoError(t, waiter.Unlock(ctx))
}

// A waiter that arrives while a Mutex of its Client holds the lock (after
// a handoff, so the Client knows) queues without an attempt; a holder that
// learns it lost the lock wakes it.
func TestQueueBehindLocalHolder(t *testing.T) {
	srv := redistest.Start(t)
	rc := srv.Client(t)
	fx := newFaultExecutor(rc)
	// Long enough that b's fallback poll (after at least 3/4 of the
	// holder's lease) comes well after c's next renewal (after lease/3).
	const lease = 3 * time.Second
	c := newClient(t, rc, lock.WithExecutor(fx), lock.WithWatchdogLease(lease))
	var aev, bev, cev events
	a := newMutex(t, c, "queued", lock.WithHook(aev.hook))
	b := newMutex(t, c, "queued", lock.WithHook(bev.hook))
	cm := newMutex(t, c, "queued", lock.WithHook(cev.hook))
	ctx := context.Background()
	_, err := a.Lock(ctx)
	require.NoError(t, err)
	bResult := goLock(ctx, b, 0)
	asleep(t, &bev, 2)
	require.NoError(t, a.Unlock(ctx))
	bHeld := await(t, bResult)
	require.NoError(t, bHeld.err)

	// b holds by a handoff: c waits for b without asking the server.
	acquires := fx.count("lock.Acquire")
	cResult := goLock(ctx, cm, 0)
	time.Sleep(50 * time.Millisecond)
	assert.Equal(t, acquires, fx.count("lock.Acquire"), "no refused attempt")
	require.NoError(t, b.Unlock(ctx))
	cHeld := await(t, cResult)
	require.NoError(t, cHeld.err)
	acq := cev.of(lock.EventAcquired)
	require.Len(t, acq, 1)
	assert.Equal(t, lock.TriggerHandoff, acq[0].Trigger)
	assert.Zero(t, acq[0].Attempt)
	assert.Empty(t, cev.of(lock.EventAttempt))

	// c loses its lock behind its back; b, queued behind it, is woken when
	// c's watchdog notices, and attempts.
	bResult = goLock(ctx, b, 0)
	time.Sleep(50 * time.Millisecond)
	srv.Do(t, "DEL", cm.Key())
	deleted := time.Now()
	bHeld = await(t, bResult)
	require.NoError(t, bHeld.err)
	assert.ErrorIs(t, context.Cause(cHeld.held), lock.ErrLost)
	assert.Less(t, time.Since(deleted), lease/3+slack, "woken when the loss was noticed, not by its poll")
	assert.EqualValues(t, 1, holdCount(t, b))
	require.NoError(t, b.Unlock(ctx))
}

// A holder with two holds hands nothing over at its first Unlock.
func TestHandoffWaitsForLastHold(t *testing.T) {
	srv := redistest.Start(t)
	c := newClient(t, srv.Client(t))
	var ev events
	holder := newMutex(t, c, "twice")
	waiter := newMutex(t, c, "twice", lock.WithHook(ev.hook))
	ctx := context.Background()
	for range 2 {
		_, err := holder.Lock(ctx)
		require.NoError(t, err)
	}
	result := goLock(ctx, waiter, 0)
	asleep(t, &ev, 2)
	require.NoError(t, holder.Unlock(ctx))
	select {
	case r := <-result:
		t.Fatalf("the waiter got the lock while a hold was left: %+v", r)
	case <-time.After(100 * time.Millisecond):
	}
	assert.EqualValues(t, 1, holdCount(t, holder))
	require.NoError(t, holder.Unlock(ctx))
	require.NoError(t, await(t, result).err)
	assert.EqualValues(t, 1, holdCount(t, waiter))
	assert.Equal(t, lock.TriggerHandoff, ev.of(lock.EventAcquired)[0].Trigger)
	require.NoError(t, waiter.Unlock(ctx))
}

// contest is a holder and a waiter of one lock on one Client whose calls go
// through a fault executor, the holder already holding: the start of every
// handoff failure test.
type contest struct {
	srv            *redistest.Server
	fx             *faultExecutor
	c              *lock.Client
	ev             *events
	holder, waiter *lock.Mutex
}

func newContest(t *testing.T, name string, opts ...lock.Option) *contest {
	t.Helper()
	srv := redistest.Start(t)
	rc := srv.Client(t)
	fx := newFaultExecutor(rc)
	c := newClient(t, rc, append([]lock.Option{lock.WithExecutor(fx)}, opts...)...)
	ev := &events{}
	k := &contest{srv: srv, fx: fx, c: c, ev: ev,
		holder: newMutex(t, c, name), waiter: newMutex(t, c, name, lock.WithHook(ev.hook))}
	_, err := k.holder.Lock(context.Background())
	require.NoError(t, err)
	return k
}

// A Handoff whose reply is lost is retried under its latch: the retry
// returns the grant, and the heir holds once.
func TestHandoffLostReplyIsRetried(t *testing.T) {
	k := newContest(t, "lost-grant")
	srv, fx, ev, holder, waiter := k.srv, k.fx, k.ev, k.holder, k.waiter
	ctx := context.Background()
	oldToken := holder.Token()
	result := goLock(ctx, waiter, 0)
	asleep(t, ev, 2)
	fx.inject("lock.Handoff", lostReply)
	require.NoError(t, holder.Unlock(ctx))
	require.NoError(t, await(t, result).err)
	assert.Equal(t, 2, fx.count("lock.Handoff"))
	assert.Equal(t, lock.TriggerHandoff, ev.of(lock.EventAcquired)[0].Trigger)
	assert.EqualValues(t, 1, holdCount(t, waiter))
	assert.Greater(t, waiter.Token(), oldToken)
	assert.Equal(t, strconv.FormatInt(waiter.Token(), 10), srv.Do(t, "GET", waiter.Key()+":fence"))
	require.NoError(t, waiter.Unlock(ctx))
	assert.Equal(t, "0", srv.Do(t, "EXISTS", waiter.Key()))
}

// When the releaser never learns whether its Handoff ran, the heir settles
// it with the grant's latch: it holds once if the Handoff ran, and waits
// for the releaser's lease to run out if it did not. A Handoff that runs
// only after that (late) grants nothing: it frees the lock, and the heir
// still holds once.
func TestHandoffOutcomeUnknown(t *testing.T) {
	for _, outcome := range []string{"ran", "never ran", "ran late"} {
		t.Run(outcome, func(t *testing.T) {
			const lease = 600 * time.Millisecond
			k := newContest(t, "unknown", lock.WithRetryWindow(200*time.Millisecond), lock.WithWatchdogLease(lease))
			srv, fx, ev, holder, waiter := k.srv, k.fx, k.ev, k.holder, k.waiter
			ctx := context.Background()
			result := goLock(ctx, waiter, 0)
			asleep(t, ev, 2)
			var late func()
			refused := make(chan struct{}, 1)
			switch outcome {
			case "ran":
				fx.inject("lock.Handoff", lostReply)
			case "ran late":
				_, late = fx.hold("lock.Handoff", gateLate)
				fx.mu.Lock()
				fx.onDone = func(script string, v runtime.Value, err error) {
					if script == "lock.Acquire" && err == nil && len(v.Array) > 0 && v.Array[0].Int == 0 {
						select {
						case refused <- struct{}{}:
						default:
						}
					}
				}
				fx.mu.Unlock()
			}
			for range 100 {
				fx.inject("lock.Handoff", unsent)
			}
			unlocked := time.Now()
			require.ErrorIs(t, holder.Unlock(ctx), errLostReply, "the retry window ran out")
			if late != nil {
				<-refused // the heir's sealed attempt: the holder still holds
				late()    // and now the Handoff runs
			}
			r := await(t, result)
			require.NoError(t, r.err)
			attempts := ev.of(lock.EventAttempt)
			require.GreaterOrEqual(t, len(attempts), 3)
			assert.Equal(t, lock.TriggerHandoff, attempts[2].Trigger, "the attempt that settles the handoff")
			acq := ev.of(lock.EventAcquired)
			require.Len(t, acq, 1)
			switch outcome {
			case "ran":
				assert.Equal(t, 3, acq[0].Attempt, "the grant, returned by the sealed attempt")
			case "never ran":
				assert.Greater(t, acq[0].Attempt, 3, "refused, then the holder's lease ran out")
				assert.GreaterOrEqual(t, time.Since(unlocked), lease/2)
			case "ran late":
				assert.Equal(t, lock.TriggerNotified, acq[0].Trigger, "the late Handoff freed the lock and said so")
			}
			assert.EqualValues(t, 1, acq[0].HoldCount)
			assert.EqualValues(t, 1, holdCount(t, waiter), "never a second hold")
			assert.Equal(t, strconv.FormatInt(waiter.Token(), 10), srv.Do(t, "GET", waiter.Key()+":fence"))
			require.NoError(t, waiter.Unlock(ctx))
			assert.Equal(t, "0", srv.Do(t, "EXISTS", waiter.Key()))
		})
	}
}

// An heir whose context ends while a release hands it the lock gives the
// grant back (the releaser does it, with an Abandon of the grant's latch),
// whether the Handoff ran before or after; the heir's next Lock waits for
// that and counts one hold.
func TestHandoffHeirContextEnds(t *testing.T) {
	for _, before := range []bool{true, false} {
		t.Run("cancelled before the Handoff ran="+strconv.FormatBool(before), func(t *testing.T) {
			k := newContest(t, "leaving")
			srv, fx, ev, holder, waiter := k.srv, k.fx, k.ev, k.holder, k.waiter
			ctx := context.Background()
			wctx, cancel := context.WithCancel(ctx)
			defer cancel()
			result := goLock(wctx, waiter, 0)
			asleep(t, ev, 2)

			reached, open := fx.hold("lock.Handoff", map[bool]gateMode{true: gateBefore, false: gateAfter}[before])
			defer open()
			unlocked := make(chan error, 1)
			go func() { unlocked <- holder.Unlock(ctx) }()
			<-reached
			if !before {
				assert.Equal(t, "map["+waiter.Owner()+":1]", srv.Do(t, "HGETALL", waiter.Key()), "granted on the server")
			}
			cancel()
			r := await(t, result)
			require.ErrorIs(t, r.err, context.Canceled)
			assert.Len(t, ev.of(lock.EventAcquireFailed), 1)

			again := goLock(ctx, waiter, 0)
			select {
			case r := <-again:
				t.Fatalf("Lock did not wait for the grant to be given back: %+v", r)
			case <-time.After(50 * time.Millisecond):
			}
			open()
			require.NoError(t, <-unlocked)
			require.NoError(t, await(t, again).err)
			assert.EqualValues(t, 1, holdCount(t, waiter), "one hold, not the grant and another")
			assert.Equal(t, 1, fx.count("lock.Abandon"))
			require.NoError(t, waiter.Unlock(ctx))
			assert.Equal(t, "0", srv.Do(t, "EXISTS", waiter.Key()))
		})
	}
}

// A TryLock whose wait runs out while a release is handing it the lock
// takes the grant: the Handoff was its last attempt in flight.
func TestHandoffTryLockDeadline(t *testing.T) {
	k := newContest(t, "deadline")
	fx, ev, holder, waiter := k.fx, k.ev, k.holder, k.waiter
	ctx := context.Background()
	const wait = 300 * time.Millisecond
	result := goLock(ctx, waiter, wait)
	asleep(t, ev, 2)
	reached, open := fx.hold("lock.Handoff", gateAfter)
	defer open()
	go func() { _ = holder.Unlock(ctx) }()
	<-reached
	time.Sleep(wait) // past the waiter's deadline
	select {
	case r := <-result:
		t.Fatalf("TryLock returned while its handoff was in flight: %+v", r)
	default:
	}
	open()
	r := await(t, result)
	require.NoError(t, r.err)
	require.True(t, r.ok)
	assert.EqualValues(t, 1, holdCount(t, waiter))
	assert.Empty(t, ev.of(lock.EventTimedOut))
	require.NoError(t, waiter.Unlock(ctx))
}

// Close while a release hands the lock over: the heir returns ErrClosed and
// the grant is given back, so the lock is not held for a lease by nobody.
func TestHandoffClose(t *testing.T) {
	k := newContest(t, "closing")
	srv, fx, c, ev, holder, waiter := k.srv, k.fx, k.c, k.ev, k.holder, k.waiter
	ctx := context.Background()
	result := goLock(ctx, waiter, 0)
	asleep(t, ev, 2)
	reached, open := fx.hold("lock.Handoff", gateAfter)
	defer open()
	unlocked := make(chan error, 1)
	go func() { unlocked <- holder.Unlock(ctx) }()
	<-reached
	c.Close()
	require.ErrorIs(t, await(t, result).err, lock.ErrClosed)
	open()
	require.NoError(t, <-unlocked)
	assert.Equal(t, "0", srv.Do(t, "EXISTS", holder.Key()), "the grant was given back")
}

// Handoffs run at most MaxHandoffs in a row; then the lock is freed and
// notified, so a waiter of another Client (another process) gets it while
// eight goroutines of one Client take turns as fast as they can.
func TestHandoffsLeaveRoomForOtherClients(t *testing.T) {
	srv := redistest.Start(t)
	ctx := context.Background()
	const maxHandoffs = 4
	var mu sync.Mutex
	run, longest, sections, handoffs := 0, 0, 0, 0
	hook := func(e lock.Event) {
		if e.Kind != lock.EventAcquired {
			return
		}
		mu.Lock()
		defer mu.Unlock()
		sections++
		if e.Trigger == lock.TriggerHandoff {
			handoffs++
			run++
			longest = max(longest, run)
		} else {
			run = 0
		}
	}
	local := newClient(t, srv.Client(t), lock.WithHook(hook), lock.WithWaitStrategy(lock.WaitStrategy{MaxHandoffs: maxHandoffs}))
	var stop atomic.Bool
	var wg sync.WaitGroup
	for range 8 {
		m := newMutex(t, local, "busy")
		wg.Go(func() {
			for !stop.Load() {
				if _, err := m.Lock(ctx); err != nil {
					t.Error(err)
					return
				}
				if err := m.Unlock(ctx); err != nil {
					t.Error(err)
					return
				}
			}
		})
	}
	defer func() {
		stop.Store(true)
		wg.Wait()
	}()
	require.Eventually(t, func() bool { mu.Lock(); defer mu.Unlock(); return handoffs > 100 }, 10*time.Second, time.Millisecond)

	remote := newMutex(t, newClient(t, srv.Client(t)), "busy")
	mu.Lock()
	before := sections
	mu.Unlock()
	start := time.Now()
	wctx, cancel := context.WithTimeout(ctx, 20*time.Second)
	defer cancel()
	_, err := remote.Lock(wctx)
	require.NoError(t, err, "the other Client never got the lock")
	mu.Lock()
	waited := sections - before
	mu.Unlock()
	t.Logf("the other Client got the lock after %v and %d sections of the busy one", time.Since(start), waited)
	assert.LessOrEqual(t, waited, 100*(maxHandoffs+1), "within a bounded number of sections")
	require.NoError(t, remote.Unlock(ctx))
	stop.Store(true)
	wg.Wait()
	mu.Lock()
	defer mu.Unlock()
	assert.LessOrEqual(t, longest, maxHandoffs, "never more handoffs in a row")
	assert.Equal(t, maxHandoffs, longest, "and handoffs did run")
}
