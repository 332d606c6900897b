package lock_test

import (
	"context"
	"math"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/luagen/luagen/lock"
	"github.com/luagen/luagen/redistest"
)

func TestInvalidOptionsAreRejected(t *testing.T) {
	srv := redistest.Start(t)
	rc := srv.Client(t)
	c := newClient(t, rc)
	for name, opt := range map[string]lock.Option{
		"zero lease":              lock.WithLease(0),
		"negative lease":          lock.WithLease(-time.Second),
		"sub-millisecond lease":   lock.WithLease(500 * time.Microsecond),
		"lease above MaxLease":    lock.WithLease(lock.MaxLease + time.Millisecond),
		"overflowing lease":       lock.WithLease(math.MaxInt64),
		"tiny watchdog lease":     lock.WithWatchdogLease(2 * time.Millisecond),
		"negative watchdog":       lock.WithWatchdogLease(-1),
		"overflowing watchdog":    lock.WithWatchdogLease(math.MaxInt64),
		"zero retry window":       lock.WithRetryWindow(0),
		"zero fence TTL":          lock.WithFenceTTL(0),
		"negative MinPoll":        lock.WithWaitStrategy(lock.WaitStrategy{MinPoll: -1}),
		"MinPoll past QueueTTL/3": lock.WithWaitStrategy(lock.WaitStrategy{MinPoll: time.Second + time.Millisecond}),
		"tiny QueueTTL":           lock.WithWaitStrategy(lock.WaitStrategy{QueueTTL: time.Millisecond}),
		"negative QueueTTL":       lock.WithWaitStrategy(lock.WaitStrategy{QueueTTL: -time.Second}),
	} {
		t.Run(name, func(t *testing.T) {
			_, err := lock.New(c, "x", opt)
			assert.ErrorIs(t, err, lock.ErrBadOption)
			_, err = lock.NewClient(rc, opt)
			assert.ErrorIs(t, err, lock.ErrBadOption, "as a Client default too")
		})
	}
	_, err := lock.New(c, "")
	assert.ErrorIs(t, err, lock.ErrBadOption, "empty name")
	_, err = lock.New(c, "}x", lock.WithKeyPrefix("p"))
	assert.ErrorIs(t, err, lock.ErrBadOption, "p{}x} hashes whole, unlike p{}x}:fence")
	_, err = lock.New(nil, "x")
	assert.ErrorIs(t, err, lock.ErrBadOption)
	_, err = lock.NewClient(nil)
	assert.ErrorIs(t, err, lock.ErrBadOption)
	// The last lease option wins, and nil options are ignored.
	m, err := lock.New(c, "x", lock.WithLease(time.Second), nil, lock.WithWatchdogLease(time.Second))
	require.NoError(t, err)
	assert.Equal(t, "lock:{x}", m.Key())
	m, err = lock.New(c, "a{b}", lock.WithKeyPrefix("app:"))
	require.NoError(t, err, "a name with braces keeps its keys in one slot")
	assert.Equal(t, "app:{a{b}}", m.Key())
	assert.Equal(t, "0", srv.Do(t, "DBSIZE"), "New sends nothing")
}

// A reply lost after the script ran is retried under the same latch: the
// retry returns the first answer and holds are counted once.
func TestLostRepliesAreRetriedOnce(t *testing.T) {
	srv := redistest.Start(t)
	rc := srv.Client(t)
	fx := newFaultExecutor(rc)
	c := newClient(t, rc, lock.WithExecutor(fx))
	m := newMutex(t, c, "lost-reply")
	ctx := context.Background()
	holds := func() int64 {
		n, err := m.HoldCount(ctx)
		require.NoError(t, err)
		return n
	}

	fx.inject("scripts.Acquire", lostReply)
	held, err := m.Lock(ctx)
	require.NoError(t, err)
	assert.EqualValues(t, 1, holds(), "the retried acquire counted one hold")
	assert.Equal(t, 2, fx.count("scripts.Acquire"))
	assert.NotZero(t, m.Token(), "the retry returned the first call's token")

	_, err = m.Lock(ctx)
	require.NoError(t, err)
	require.EqualValues(t, 2, holds())
	fx.inject("scripts.Release", lostReply)
	require.NoError(t, m.Unlock(ctx))
	assert.EqualValues(t, 1, holds(), "the retried release released one hold")
	assert.NoError(t, held.Err())

	fx.inject("scripts.Release", unsent, lostReply)
	require.NoError(t, m.Unlock(ctx))
	assert.EqualValues(t, 0, holds())
	assert.Equal(t, "0", srv.Do(t, "EXISTS", m.Key()))
	assert.ErrorIs(t, context.Cause(held), lock.ErrUnlocked)

	// Only the reentrant acquire and the release that left a hold wrote a
	// latch; first acquires and last releases write none.
	for range 20 {
		_, err := m.Lock(ctx)
		require.NoError(t, err)
		require.NoError(t, m.Unlock(ctx))
	}
	latches := srv.Do(t, "KEYS", m.Key()+":latch:*")
	assert.Equal(t, 2, strings.Count(latches, ":latch:"), "latches left: %s", latches)
}

// A failed renewal is retried while the lease lasts; renewals that keep
// failing end the hold with ErrLost once the lease has run out on the
// holder's clock, and what the server still counts of the hold is given
// back at once. (That the holder's clock runs out first is arithmetic:
// it counts 99% of the lease from before the renewal was sent, the server
// 100% from when it ran; a test that compares the two on a busy machine
// measures the scheduler.)
func TestWatchdogRetriesThenGivesUp(t *testing.T) {
	srv := redistest.Start(t)
	rc := srv.Client(t)
	fx := newFaultExecutor(rc)
	const lease = 1500 * time.Millisecond // a renewal every 500 ms, a retry 250 ms after a failure
	var ev events
	c := newClient(t, rc, lock.WithWatchdogLease(lease), lock.WithExecutor(fx), lock.WithHook(ev.hook))
	m := newMutex(t, c, "flaky")
	ctx := context.Background()

	fx.inject("scripts.Renew", unsent)
	held, err := m.Lock(ctx)
	require.NoError(t, err)
	require.Eventually(t, func() bool { return len(ev.of(lock.EventRenewed)) >= 2 }, 2*lease, time.Millisecond)
	require.NoError(t, held.Err(), "one failed renewal is survived")
	require.Len(t, ev.of(lock.EventRenewFailed), 1)
	assert.Equal(t, "1", srv.Do(t, "EXISTS", m.Key()))

	for range 1000 { // the server is unreachable from now on
		fx.inject("scripts.Renew", unsent)
	}
	select {
	case <-held.Done():
	case <-time.After(lease + slack):
		t.Fatal("still held a lease after renewals began to fail")
	}
	assert.ErrorIs(t, context.Cause(held), lock.ErrLost)
	// The hold's context is cancelled before EventLost is emitted (hold.over).
	require.Eventually(t, func() bool { return len(ev.of(lock.EventLost)) == 1 }, slack, time.Millisecond)
	require.Eventually(t, func() bool { return srv.Do(t, "EXISTS", m.Key()) == "0" }, slack, time.Millisecond,
		"the hold given up is given back, not left to its lease")
	// Which of the two depends on whether the give-back or the server's
	// expiry came first (a late timer on a busy machine); that a hold the
	// server still counts is released is TestGivenUpHoldIsReleased's.
	err = m.Unlock(ctx)
	require.ErrorIs(t, err, lock.ErrNotHeld)
	assert.Regexp(t, "the server still counted it, and it was released|the server had ended it too", err.Error())
}

// All waiters of one Client share one subscription per lock (the Client's
// wake channel); each release hands the lock to one of them, and the
// subscription ends after the last one leaves.
func TestWaitersShareOneSubscription(t *testing.T) {
	srv := redistest.Start(t)
	ctx := context.Background()
	holder := newMutex(t, newClient(t, srv.Client(t)), "shared", lock.WithLease(time.Minute))
	_, err := holder.Lock(ctx)
	require.NoError(t, err)

	const waiters = 6
	c := newClient(t, srv.Client(t))
	var ev events
	var wg sync.WaitGroup
	var channel string
	for range waiters {
		m := newMutex(t, c, "shared", lock.WithHook(ev.hook))
		channel = wakeChannel(m)
		wg.Go(func() {
			if _, err := m.Lock(ctx); err != nil {
				t.Error(err)
				return
			}
			time.Sleep(5 * time.Millisecond)
			if err := m.Unlock(ctx); err != nil {
				t.Error(err)
			}
		})
	}
	// Each waiter attempts once, and again once subscribed unless the
	// shared subscription was confirmed before its first attempt: wait
	// until they have all gone to sleep.
	last := -1
	require.Eventually(t, func() bool {
		n := len(ev.of(lock.EventAttempt))
		done := n >= waiters && n == last
		last = n
		return done
	}, 10*time.Second, 50*time.Millisecond)
	assert.Equal(t, "["+channel+" 1]", srv.Do(t, "PUBSUB", "NUMSUB", channel), "one subscription for all waiters")
	require.NoError(t, holder.Unlock(ctx))
	wg.Wait()
	require.Len(t, ev.of(lock.EventAcquired), waiters)
	for _, e := range ev.of(lock.EventAcquired) {
		assert.Equal(t, lock.TriggerHandoff, e.Trigger, "handed over by a release")
	}
	polls := 0
	for _, e := range ev.of(lock.EventAttempt) {
		if e.Trigger == lock.TriggerPoll {
			polls++
		}
	}
	assert.Zero(t, polls, "every hand-off went by notification")
	t.Logf("%d attempts for %d acquisitions", len(ev.of(lock.EventAttempt)), waiters)
	require.Eventually(t, func() bool { return srv.Do(t, "PUBSUB", "NUMSUB", channel) == "["+channel+" 0]" },
		5*time.Second, 20*time.Millisecond, "unsubscribed after the last waiter left")
}

// An explicit lease is never renewed; the held context ends with it.
func TestExplicitLease(t *testing.T) {
	srv := redistest.Start(t)
	rc := srv.Client(t)
	fx := newFaultExecutor(rc)
	c := newClient(t, rc, lock.WithExecutor(fx))
	const lease = 300 * time.Millisecond
	m := newMutex(t, c, "leased", lock.WithLease(lease))
	start := time.Now()
	held, err := m.Lock(context.Background())
	require.NoError(t, err)
	<-held.Done()
	took := time.Since(start)
	assert.ErrorIs(t, context.Cause(held), lock.ErrLeaseExpired)
	assert.GreaterOrEqual(t, took, lease-lease/100-5*time.Millisecond)
	assert.LessOrEqual(t, took, lease+slack)
	assert.Zero(t, fx.count("scripts.Renew"))
	require.Eventually(t, func() bool { return srv.Do(t, "EXISTS", m.Key()) == "0" }, time.Second, 5*time.Millisecond)
}

// The end of the context given to Lock stops the watchdog; the lock then
// lives out its lease, and Unlock still releases it.
func TestContextEndStopsWatchdog(t *testing.T) {
	srv := redistest.Start(t)
	rc := srv.Client(t)
	fx := newFaultExecutor(rc)
	const lease = 600 * time.Millisecond
	c := newClient(t, rc, lock.WithExecutor(fx), lock.WithWatchdogLease(lease))
	m := newMutex(t, c, "ctx-end")
	ctx, cancel := context.WithCancel(context.Background())
	held, err := m.Lock(ctx)
	require.NoError(t, err)
	cancel()
	<-held.Done()
	assert.ErrorIs(t, context.Cause(held), context.Canceled)
	renews := fx.count("scripts.Renew")
	time.Sleep(lease / 2)
	assert.Equal(t, renews, fx.count("scripts.Renew"))
	assert.NotZero(t, m.Token(), "still held on the server")
	require.NoError(t, m.Unlock(ctx), "Unlock with the ended context still releases")
	assert.Equal(t, "0", srv.Do(t, "EXISTS", m.Key()))
}

func TestClose(t *testing.T) {
	srv := redistest.Start(t)
	rc := srv.Client(t)
	c, err := lock.NewClient(rc)
	require.NoError(t, err)
	ctx := context.Background()
	holder := newMutex(t, c, "closing")
	held, err := holder.Lock(ctx)
	require.NoError(t, err)
	var ev events
	waiter := newMutex(t, c, "closing", lock.WithHook(ev.hook))
	result := make(chan error, 1)
	go func() {
		_, err := waiter.Lock(ctx)
		result <- err
	}()
	require.Eventually(t, func() bool { return len(ev.of(lock.EventAttempt)) == 2 }, 5*time.Second, 5*time.Millisecond)
	c.Close()
	assert.ErrorIs(t, <-result, lock.ErrClosed)
	assert.ErrorIs(t, context.Cause(held), lock.ErrClosed)
	_, err = holder.Lock(ctx)
	assert.ErrorIs(t, err, lock.ErrClosed)
	c.Close() // idempotent
	assert.Equal(t, "1", srv.Do(t, "EXISTS", holder.Key()), "Close does not release: the lock expires")
	var none *lock.Client
	assert.NotPanics(t, none.Close, "Close on a nil *Client does nothing")
}

func TestForceUnlock(t *testing.T) {
	srv := redistest.Start(t)
	ctx := context.Background()
	const lease = 600 * time.Millisecond
	c := newClient(t, srv.Client(t), lock.WithWatchdogLease(lease))
	holder := newMutex(t, c, "forced")
	held, err := holder.Lock(ctx)
	require.NoError(t, err)
	var ev events
	waiter := newMutex(t, newClient(t, srv.Client(t)), "forced", lock.WithHook(ev.hook))
	result := make(chan bool, 1)
	go func() {
		_, ok, err := waiter.TryLock(ctx, 30*time.Second)
		assert.NoError(t, err)
		result <- ok
	}()
	asleep(t, &ev, 2) // first, then once subscribed

	operator := newMutex(t, c, "forced")
	deleted, err := operator.ForceUnlock(ctx)
	require.NoError(t, err)
	assert.True(t, deleted)
	assert.True(t, <-result)
	assert.Equal(t, lock.TriggerHandoff, ev.of(lock.EventAcquired)[0].Trigger, "ForceUnlock hands the lock to the waiter")
	select {
	case <-held.Done():
		assert.ErrorIs(t, context.Cause(held), lock.ErrLost)
	case <-time.After(lease/3 + slack):
		t.Fatal("the old holder did not learn of the ForceUnlock at its next renewal")
	}
	require.NoError(t, waiter.Unlock(ctx))
	deleted, err = operator.ForceUnlock(ctx)
	require.NoError(t, err)
	assert.False(t, deleted, "nothing to delete")
}

func TestQueries(t *testing.T) {
	srv := redistest.Start(t)
	ctx := context.Background()
	c := newClient(t, srv.Client(t))
	m := newMutex(t, c, "queried", lock.WithLease(10*time.Second))
	other := newMutex(t, c, "queried")

	ttl, err := m.RemainingLease(ctx)
	require.NoError(t, err)
	assert.Zero(t, ttl, "free")
	for _, q := range []func(context.Context) (bool, error){m.IsHeld, m.IsLocked, other.IsLocked} {
		b, err := q(ctx)
		require.NoError(t, err)
		assert.False(t, b)
	}
	_, err = m.Lock(ctx)
	require.NoError(t, err)
	ttl, err = other.RemainingLease(ctx)
	require.NoError(t, err)
	assert.Greater(t, ttl, 9*time.Second)
	assert.LessOrEqual(t, ttl, 10*time.Second)
	held, err := m.IsHeld(ctx)
	require.NoError(t, err)
	assert.True(t, held)
	held, err = other.IsHeld(ctx)
	require.NoError(t, err)
	assert.False(t, held, "held by another owner")
	locked, err := other.IsLocked(ctx)
	require.NoError(t, err)
	assert.True(t, locked)
	n, err := other.HoldCount(ctx)
	require.NoError(t, err)
	assert.Zero(t, n)

	srv.Do(t, "PERSIST", m.Key())
	ttl, err = m.RemainingLease(ctx)
	require.NoError(t, err)
	assert.Negative(t, ttl, "a key without expiry")
	require.NoError(t, m.Unlock(ctx))
}

// With notifications off, waiters poll (MaxPoll caps the sleep) and
// nothing subscribes.
func TestPollOnly(t *testing.T) {
	srv := redistest.Start(t)
	ctx := context.Background()
	c := newClient(t, srv.Client(t), lock.WithWaitStrategy(lock.WaitStrategy{PollOnly: true, QueueTTL: 60 * time.Millisecond}))
	holder := newMutex(t, c, "polled", lock.WithLease(time.Minute))
	_, err := holder.Lock(ctx)
	require.NoError(t, err)
	var ev events
	w := newMutex(t, c, "polled", lock.WithHook(ev.hook))
	result := make(chan error, 1)
	go func() {
		_, err := w.Lock(ctx)
		result <- err
	}()
	require.Eventually(t, func() bool { return len(ev.of(lock.EventAttempt)) >= 3 }, 5*time.Second, 5*time.Millisecond)
	channel := wakeChannel(w)
	assert.Equal(t, "["+channel+" 0]", srv.Do(t, "PUBSUB", "NUMSUB", channel))
	require.NoError(t, holder.Unlock(ctx))
	require.NoError(t, <-result)
	attempts := ev.of(lock.EventAttempt)
	assert.Equal(t, lock.TriggerPoll, attempts[len(attempts)-1].Trigger)
	require.NoError(t, w.Unlock(ctx))
}

// Without wake messages a handed-over lock does not idle until the heir's
// fallback poll (QueueTTL/3, 10 s here; it used to, so 8 waiters made one
// section a second): every waiter that has waited about PollStarvation
// asks again as soon as its answer is in, so each handoff is taken within
// a round trip or two.
func TestPollOnlyHandoffDoesNotIdle(t *testing.T) {
	srv := redistest.Start(t)
	ctx := context.Background()
	const waiters = 4
	strategy := lock.WithWaitStrategy(lock.WaitStrategy{PollOnly: true, QueueTTL: 30 * time.Second})
	holder := newMutex(t, newClient(t, srv.Client(t), strategy), "polled-fast", lock.WithLease(time.Minute))
	_, err := holder.Lock(ctx)
	require.NoError(t, err)
	results := make([]<-chan lockResult, waiters)
	ms := make([]*lock.Mutex, waiters)
	for i := range ms {
		ms[i] = newMutex(t, newClient(t, srv.Client(t), strategy), "polled-fast", lock.WithLease(time.Minute))
		results[i] = goLock(ctx, ms[i], 0)
		require.Eventually(t, func() bool { return srv.Do(t, "LLEN", holder.Key()+":queue") == strconv.Itoa(i+1) },
			5*time.Second, time.Millisecond, "queued in this order")
	}
	// Past PollStarvation every waiter is served in queue order (until
	// then a waiter further back may take a free lock first).
	time.Sleep(2 * lock.PollStarvation)
	start := time.Now()
	require.NoError(t, holder.Unlock(ctx))
	for i, m := range ms {
		r := await(t, results[i])
		require.NoError(t, r.err, "waiter %d", i)
		require.NoError(t, m.Unlock(ctx)) // hands over to the next
	}
	took := time.Since(start)
	t.Logf("%d handoffs by polling in %v", waiters, took)
	assert.Less(t, took, 10*time.Second/2, "well before one fallback poll")
}

// PollOnly's starvation mode: a waiter that has waited past
// PollStarvation is handed the lock by the next release, so the releaser
// that asks again at once is refused (in normal mode it would take the
// free lock again, as the offline script tests show).
func TestPollOnlyStarvationHandsOver(t *testing.T) {
	srv := redistest.Start(t)
	ctx := context.Background()
	strategy := lock.WithWaitStrategy(lock.WaitStrategy{PollOnly: true})
	// a's TryLock asserts an answer: a grace for a busy machine.
	a := newMutex(t, newClient(t, srv.Client(t), lock.WithWaitStrategy(lock.WaitStrategy{PollOnly: true, Grace: 5 * time.Second})), "polled-starving")
	var ev events
	b := newMutex(t, newClient(t, srv.Client(t), strategy), "polled-starving", lock.WithHook(ev.hook))
	_, err := a.Lock(ctx)
	require.NoError(t, err)
	bLock := goLock(ctx, b, 0)
	require.Eventually(t, func() bool { return len(ev.of(lock.EventRefused)) > 0 }, 5*time.Second, time.Millisecond)
	time.Sleep(2 * lock.PollStarvation)
	require.NoError(t, a.Unlock(ctx))
	_, ok, err := a.TryLock(ctx, 0)
	require.NoError(t, err)
	assert.False(t, ok, "the lock went to B, which had waited past PollStarvation")
	r := await(t, bLock)
	require.NoError(t, r.err)
	assert.Equal(t, "1", srv.Do(t, "HGET", b.Key(), b.Owner()))
	require.NoError(t, b.Unlock(ctx))
}

// A PollOnly waiter asks back to back only for PollStarvation after it
// starved (a handoff comes within a few sections then); behind a long hold
// it asks every millisecond, as redislock's waiters do. Before, it asked
// back to back for the whole hold: about 20,000 scripts a second on
// loopback. A busy machine only makes the count lower.
func TestPollOnlyLongHoldPollsEveryMillisecond(t *testing.T) {
	srv := redistest.Start(t)
	ctx := context.Background()
	strategy := lock.WithWaitStrategy(lock.WaitStrategy{PollOnly: true})
	a := newMutex(t, newClient(t, srv.Client(t), strategy), "polled-long")
	var ev events
	b := newMutex(t, newClient(t, srv.Client(t), strategy), "polled-long", lock.WithHook(ev.hook))
	_, err := a.Lock(ctx)
	require.NoError(t, err)
	const hold = time.Second
	bLock := goLock(ctx, b, 0)
	time.Sleep(hold)
	attempts := len(ev.of(lock.EventAttempt))
	require.NoError(t, a.Unlock(ctx))
	require.NoError(t, await(t, bLock).err)
	require.NoError(t, b.Unlock(ctx))
	t.Logf("%d attempts during a %v hold", attempts, hold)
	// One a millisecond, plus the back-to-back asks of PollStarvation at
	// one round trip each (tens of µs on loopback): well under 2,000.
	assert.Less(t, attempts, 2000)
	assert.Greater(t, attempts, 10, "it polled")
}

// A waiter whose context ends returns at once with its error.
func TestCancelWhileWaiting(t *testing.T) {
	srv := redistest.Start(t)
	c := newClient(t, srv.Client(t))
	holder := newMutex(t, c, "cancelled", lock.WithLease(time.Minute))
	_, err := holder.Lock(context.Background())
	require.NoError(t, err)
	var ev events
	w := newMutex(t, c, "cancelled", lock.WithHook(ev.hook))
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	start := time.Now()
	held, err := w.Lock(ctx)
	assert.ErrorIs(t, err, context.DeadlineExceeded)
	assert.Less(t, time.Since(start), 200*time.Millisecond+slack)
	assert.ErrorIs(t, context.Cause(held), lock.ErrNotAcquired)
	failed := ev.of(lock.EventAcquireFailed)
	require.Len(t, failed, 1)
	assert.ErrorIs(t, failed[0].Err, context.DeadlineExceeded)
	_, err = w.Lock(ctx)
	assert.ErrorIs(t, err, context.DeadlineExceeded, "an ended context sends nothing")
}

// A waiter that finds its Client already subscribed to the lock's channel
// (confirmed before its first attempt was sent) sleeps after that attempt:
// an unlock after it reaches the subscription anyway. It is still woken.
func TestWaiterJoinsReadySubscription(t *testing.T) {
	srv := redistest.Start(t)
	ctx := context.Background()
	holder := newMutex(t, newClient(t, srv.Client(t)), "joined", lock.WithLease(time.Minute))
	_, err := holder.Lock(ctx)
	require.NoError(t, err)
	c := newClient(t, srv.Client(t))
	var first, second events
	w1 := newMutex(t, c, "joined", lock.WithHook(first.hook))
	w2 := newMutex(t, c, "joined", lock.WithHook(second.hook))
	r1 := goLock(ctx, w1, 0)
	asleep(t, &first, 2) // first, subscribed: the subscription was new
	r2 := goLock(ctx, w2, 0)
	asleep(t, &second, 1)
	attempts := second.of(lock.EventAttempt)
	require.Len(t, attempts, 1, "asleep after one attempt")
	assert.Equal(t, lock.TriggerFirst, attempts[0].Trigger)

	// The unlock message wakes one of them; its Unlock hands the lock to
	// the other.
	require.NoError(t, holder.Unlock(ctx))
	var next <-chan lockResult
	var woken, other *lock.Mutex
	select {
	case r := <-r1:
		require.NoError(t, r.err)
		woken, other, next = w1, w2, r2
	case r := <-r2:
		require.NoError(t, r.err)
		woken, other, next = w2, w1, r1
	case <-time.After(10 * time.Second):
		t.Fatal("no waiter woke")
	}
	require.NoError(t, woken.Unlock(ctx))
	require.NoError(t, await(t, next).err)
	require.NoError(t, other.Unlock(ctx))
}
