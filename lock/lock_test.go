package lock_test

// The ten behaviours the lock must show on a real redis-server. Time bounds
// carry slack for a loaded 2-core CI machine; where the requirement is about
// ordering (hand-off by notification) the tests assert on ordering and
// counts, not on wall time.

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/redis/rueidis"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/luagen/luagen/lock"
	"github.com/luagen/luagen/redistest"
	"github.com/luagen/luagen/runtime"
)

// slack is what a time bound may be exceeded by on a loaded CI machine.
const slack = 750 * time.Millisecond

// patient is for a client whose TryLock(ctx, 0) asserts an answer (a
// refusal) rather than TryLock's bound: on a busy machine the answer can
// take longer than the default 25 ms grace.
var patient = lock.WithWaitStrategy(lock.WaitStrategy{Grace: 5 * time.Second})

// tight is what a bound on a return path with no round trip in it (a
// deadline passes, the caller returns) may be exceeded by on a loaded CI
// machine: scheduling delay only.
const tight = 200 * time.Millisecond

// 1. Mutual exclusion: 32 goroutines on each of 3 clients (separate
// connections), 80 critical sections each, on one lock. Inside, a
// non-atomic GET/SET increment of a Redis counter and an in-process
// occupancy check.
func TestMutualExclusion(t *testing.T) {
	t.Parallel() // latency-bound: it overlaps the other long tests
	srv := redistest.Start(t)
	const clients, goroutines, sections = 3, 32, 80
	const counter = "mx:{counter}"
	var occupancy, maxOccupancy, errs atomic.Int64
	var wg sync.WaitGroup
	start := time.Now()
	for range clients {
		rc := srv.Client(t)
		c := newClient(t, rc, lock.WithWatchdogLease(2*time.Second))
		for range goroutines {
			m := newMutex(t, c, "mx")
			wg.Go(func() {
				for range sections {
					if err := section(m, rc, counter, &occupancy, &maxOccupancy); err != nil {
						errs.Add(1)
						t.Errorf("section: %v", err)
						return
					}
				}
			})
		}
	}
	wg.Wait()
	t.Logf("%d sections in %v", clients*goroutines*sections, time.Since(start))
	assert.Zero(t, errs.Load())
	assert.EqualValues(t, 1, maxOccupancy.Load(), "never more than one holder inside")
	assert.Equal(t, strconv.Itoa(clients*goroutines*sections), srv.Do(t, "GET", counter))
	assert.Equal(t, "0", srv.Do(t, "EXISTS", "lock:{mx}"), "the last Unlock deleted the lock")
}

func section(m *lock.Mutex, rc rueidis.Client, counter string, occupancy, maxOccupancy *atomic.Int64) error {
	ctx := context.Background()
	held, err := m.Lock(ctx)
	if err != nil {
		return err
	}
	n := occupancy.Add(1)
	for {
		old := maxOccupancy.Load()
		if n <= old || maxOccupancy.CompareAndSwap(old, n) {
			break
		}
	}
	err = increment(held, rc, counter)
	occupancy.Add(-1) // also when the section failed: an overlap counted is a real one
	if err != nil {
		return err
	}
	return m.Unlock(ctx)
}

// increment adds 1 to counter with a GET and a SET, under held.
func increment(held context.Context, rc rueidis.Client, counter string) error {
	v, err := rc.Do(held, rc.B().Get().Key(counter).Build()).AsInt64()
	if err != nil && !rueidis.IsRedisNil(err) {
		return err
	}
	return rc.Do(held, rc.B().Set().Key(counter).Value(strconv.FormatInt(v+1, 10)).Build()).Error()
}

// 2. Only the owner can release; releasing a lock that expired is an error
// too, and neither touches the lock.
func TestOwnerOnlyRelease(t *testing.T) {
	srv := redistest.Start(t)
	c := newClient(t, srv.Client(t))
	ctx := context.Background()

	owner := newMutex(t, c, "owned")
	other := newMutex(t, c, "owned")
	held, err := owner.Lock(ctx)
	require.NoError(t, err)
	before := srv.Do(t, "HGETALL", owner.Key())

	err = other.Unlock(ctx)
	require.ErrorIs(t, err, lock.ErrNotHeld)
	assert.EqualError(t, err, "lock: not held")
	assert.Equal(t, before, srv.Do(t, "HGETALL", owner.Key()), "the lock is untouched")
	n, err := owner.HoldCount(ctx)
	require.NoError(t, err)
	assert.EqualValues(t, 1, n)
	assert.NoError(t, held.Err())
	require.NoError(t, owner.Unlock(ctx))

	// An explicit lease runs out; a new owner takes the lock; the old
	// owner's Unlock fails and leaves the new owner's lock alone.
	old := newMutex(t, c, "expiring", lock.WithLease(150*time.Millisecond))
	oldHeld, err := old.Lock(ctx)
	require.NoError(t, err)
	<-oldHeld.Done()
	require.ErrorIs(t, context.Cause(oldHeld), lock.ErrLeaseExpired)
	newer := newMutex(t, c, "expiring")
	_, ok, err := newer.TryLock(ctx, 2*time.Second)
	require.NoError(t, err)
	require.True(t, ok)
	before = srv.Do(t, "HGETALL", newer.Key())
	ttl := srv.Do(t, "PTTL", newer.Key())

	require.ErrorIs(t, old.Unlock(ctx), lock.ErrNotHeld)
	assert.Equal(t, before, srv.Do(t, "HGETALL", newer.Key()), "the new owner's lock is untouched")
	assert.Equal(t, "map["+newer.Owner()+":1]", before)
	after, _ := strconv.Atoi(srv.Do(t, "PTTL", newer.Key()))
	was, _ := strconv.Atoi(ttl)
	assert.LessOrEqual(t, after, was, "its lease was not extended either")
	require.NoError(t, newer.Unlock(ctx))
}

// holderProc is a lock holder in a child process: this test binary run
// with -test.run=^TestHelperHolder$. It prints "acquired <token>" once it
// holds the lock, "lost <cause>" when its held context ends and "unlock
// <error>" after its Unlock.
type holderProc struct {
	cmd   *exec.Cmd
	lines chan line
}

type line struct {
	text string
	at   time.Time
}

func startHolder(t *testing.T, addr, name string, lease time.Duration) *holderProc {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^TestHelperHolder$", "-test.count=1")
	cmd.Env = append(os.Environ(), "LOCK_HOLDER_ADDR="+addr, "LOCK_HOLDER_NAME="+name, "LOCK_HOLDER_LEASE="+lease.String())
	cmd.Stderr = os.Stderr
	out, err := cmd.StdoutPipe()
	require.NoError(t, err)
	require.NoError(t, cmd.Start())
	h := &holderProc{cmd: cmd, lines: make(chan line, 64)}
	go func() {
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			h.lines <- line{sc.Text(), time.Now()}
		}
		close(h.lines)
	}()
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		for range h.lines {
		}
		_ = cmd.Wait()
	})
	return h
}

// expect returns the first line starting with prefix.
func (h *holderProc) expect(t *testing.T, prefix string, timeout time.Duration) line {
	t.Helper()
	deadline := time.After(timeout)
	for {
		select {
		case l, ok := <-h.lines:
			if !ok {
				t.Fatalf("holder exited before printing %q", prefix)
			}
			if strings.HasPrefix(l.text, prefix) {
				return l
			}
		case <-deadline:
			t.Fatalf("holder printed no %q within %v", prefix, timeout)
		}
	}
}

// TestHelperHolder is the child process of TestHolderCrash and
// TestPausedHolder, not a test of its own.
func TestHelperHolder(t *testing.T) {
	addr := os.Getenv("LOCK_HOLDER_ADDR")
	if addr == "" {
		t.Skip("runs only as the child process of TestHolderCrash and TestPausedHolder")
	}
	lease, err := time.ParseDuration(os.Getenv("LOCK_HOLDER_LEASE"))
	require.NoError(t, err)
	rc, err := rueidis.NewClient(rueidis.ClientOption{InitAddress: []string{addr}, DisableCache: true})
	require.NoError(t, err)
	defer rc.Close()
	c, err := lock.NewClient(rc, lock.WithWatchdogLease(lease))
	require.NoError(t, err)
	defer c.Close()
	m, err := lock.New(c, os.Getenv("LOCK_HOLDER_NAME"))
	require.NoError(t, err)
	held, err := m.Lock(context.Background())
	require.NoError(t, err)
	fmt.Printf("acquired %d\n", m.Token())
	<-held.Done()
	fmt.Printf("lost %v\n", context.Cause(held))
	fmt.Printf("unlock %v\n", m.Unlock(context.Background()))
}

// 3. A holder killed mid-hold (SIGKILL: no Unlock, no goodbye) blocks the
// lock for at most its lease: another owner gets it within lease + one
// renew interval of the kill.
func TestHolderCrash(t *testing.T) {
	srv := redistest.Start(t)
	const lease = time.Second
	h := startHolder(t, srv.Addr, "crash", lease)
	h.expect(t, "acquired", 10*time.Second)

	c := newClient(t, srv.Client(t), patient)
	m := newMutex(t, c, "crash")
	ctx := context.Background()
	time.Sleep(lease) // the holder's watchdog renews meanwhile
	_, ok, err := m.TryLock(ctx, 0)
	require.NoError(t, err)
	require.False(t, ok, "the child still holds the lock after a full lease")

	require.NoError(t, h.cmd.Process.Signal(syscall.SIGKILL))
	killed := time.Now()
	_, ok, err = m.TryLock(ctx, 10*time.Second)
	took := time.Since(killed)
	require.NoError(t, err)
	require.True(t, ok)
	t.Logf("acquired %v after the holder was killed (lease %v, renew interval %v)", took, lease, lease/3)
	assert.LessOrEqual(t, took, lease+lease/3+slack)
	require.NoError(t, m.Unlock(ctx))
}

// 4. A holder paused (SIGSTOP) for longer than its lease loses the lock to
// another owner; once resumed its held context is cancelled at once or
// within one renew interval, and its Unlock fails without touching the new
// holder's lock.
func TestPausedHolder(t *testing.T) {
	srv := redistest.Start(t)
	const lease = 900 * time.Millisecond
	h := startHolder(t, srv.Addr, "paused", lease)
	oldToken, err := strconv.ParseInt(strings.TrimPrefix(h.expect(t, "acquired", 10*time.Second).text, "acquired "), 10, 64)
	require.NoError(t, err)

	c := newClient(t, srv.Client(t))
	m := newMutex(t, c, "paused")
	ctx := context.Background()
	require.NoError(t, h.cmd.Process.Signal(syscall.SIGSTOP))
	stopped := time.Now()
	held, err := m.Lock(ctx)
	require.NoError(t, err)
	t.Logf("took over %v after the holder was paused", time.Since(stopped))
	assert.Greater(t, m.Token(), oldToken, "a new fencing token")
	time.Sleep(time.Until(stopped.Add(lease * 3 / 2))) // paused longer than the lease

	require.NoError(t, h.cmd.Process.Signal(syscall.SIGCONT))
	resumed := time.Now()
	lost := h.expect(t, "lost", 10*time.Second)
	t.Logf("resumed holder printed %q after %v", lost.text, lost.at.Sub(resumed))
	assert.Equal(t, "lost "+lock.ErrLost.Error(), lost.text)
	assert.LessOrEqual(t, lost.at.Sub(resumed), lease/3+slack, "cancelled within one renew interval")
	unlock := h.expect(t, "unlock", 10*time.Second)
	assert.Contains(t, unlock.text, "lock: not held")

	assert.NoError(t, held.Err(), "the new holder keeps its lock")
	assert.Equal(t, "map["+m.Owner()+":1]", srv.Do(t, "HGETALL", m.Key()))
	require.NoError(t, m.Unlock(ctx))
}

// evalCalls returns how many EVAL and EVALSHA calls the server has run.
func evalCalls(t *testing.T, srv *redistest.Server) int {
	t.Helper()
	return srv.CommandCalls(t, "eval") + srv.CommandCalls(t, "evalsha")
}

// 5. Nothing renews a lock after its release, or a lock whose acquire was
// cancelled: neither the executor nor the server sees a script call for
// three watchdog intervals.
func TestNoRenewalAfterReleaseOrCancelledAcquire(t *testing.T) {
	srv := redistest.Start(t)
	rc := srv.Client(t)
	fx := newFaultExecutor(rc)
	const lease = 600 * time.Millisecond
	const interval = lease / 3
	c := newClient(t, rc, lock.WithWatchdogLease(lease), lock.WithExecutor(fx))
	m := newMutex(t, c, "quiet")
	ctx := context.Background()

	held, err := m.Lock(ctx)
	require.NoError(t, err)
	require.Eventually(t, func() bool { return fx.count("scripts.Renew") >= 2 }, 5*lease, 10*time.Millisecond,
		"the watchdog renews while the lock is held")
	require.NoError(t, m.Unlock(ctx))
	require.ErrorIs(t, context.Cause(held), lock.ErrUnlocked)
	renews, calls := fx.count("scripts.Renew"), evalCalls(t, srv)
	time.Sleep(3 * interval)
	assert.Equal(t, renews, fx.count("scripts.Renew"), "no renewal sent after the release")
	assert.Equal(t, calls, evalCalls(t, srv), "no script reached the server after the release")

	// The acquire runs on the server, but its caller's context ends before
	// the reply: Lock fails, the hold is rolled back, nothing renews it.
	fx.inject("scripts.Acquire", stall)
	cctx, cancel := context.WithTimeout(ctx, 100*time.Millisecond)
	defer cancel()
	_, err = m.Lock(cctx)
	require.ErrorIs(t, err, context.DeadlineExceeded)
	require.Eventually(t, func() bool { return srv.Do(t, "EXISTS", m.Key()) == "0" }, 5*time.Second, 10*time.Millisecond,
		"the cancelled acquire is rolled back")
	require.Eventually(t, func() bool { return fx.count("scripts.Abandon") == 1 }, 5*time.Second, 10*time.Millisecond)
	renews, calls = fx.count("scripts.Renew"), evalCalls(t, srv)
	time.Sleep(3 * interval)
	assert.Equal(t, renews, fx.count("scripts.Renew"), "no renewal sent for a cancelled acquire")
	assert.Equal(t, calls, evalCalls(t, srv), "no script reached the server after the rollback")
	assert.Zero(t, m.Token())
}

// 6. A lock deleted behind the holder's back is noticed at the next
// renewal: the held context is cancelled within one renew interval.
func TestExternalDeleteCancelsHolder(t *testing.T) {
	srv := redistest.Start(t)
	const lease = 900 * time.Millisecond
	c := newClient(t, srv.Client(t), lock.WithWatchdogLease(lease))
	var ev events
	m := newMutex(t, c, "deleted", lock.WithHook(ev.hook))
	held, err := m.Lock(context.Background())
	require.NoError(t, err)

	srv.Do(t, "DEL", m.Key())
	deleted := time.Now()
	select {
	case <-held.Done():
	case <-time.After(lease/3 + slack):
		t.Fatalf("held context still live %v after the lock was deleted", time.Since(deleted))
	}
	t.Logf("cancelled %v after the DEL (renew interval %v)", time.Since(deleted), lease/3)
	assert.ErrorIs(t, context.Cause(held), lock.ErrLost)
	require.Eventually(t, func() bool { return len(ev.of(lock.EventLost)) == 1 }, time.Second, 5*time.Millisecond)
	assert.Zero(t, m.Token())
	assert.ErrorIs(t, m.Unlock(context.Background()), lock.ErrNotHeld)
}

// 7. TryLock(ctx, 1s) on a lock held throughout returns false after 1 s
// plus one round trip.
func TestBoundedWait(t *testing.T) {
	srv := redistest.Start(t)
	c := newClient(t, srv.Client(t))
	ctx := context.Background()
	holder := newMutex(t, c, "bounded", lock.WithLease(time.Minute))
	_, err := holder.Lock(ctx)
	require.NoError(t, err)

	w := newMutex(t, c, "bounded")
	start := time.Now()
	held, ok, err := w.TryLock(ctx, time.Second)
	took := time.Since(start)
	require.NoError(t, err)
	require.False(t, ok)
	require.ErrorIs(t, context.Cause(held), lock.ErrNotAcquired)
	t.Logf("TryLock(1s) returned false after %v", took)
	assert.GreaterOrEqual(t, took, time.Second)
	assert.LessOrEqual(t, took, time.Second+slack, "1 s plus a round trip, with the slack every bound here has on a busy machine")
}

// 8. A waiter gets the lock from the release itself, told by one wake
// message: no attempt of its own after the release, no fallback poll.
func TestHandoffByNotification(t *testing.T) {
	srv := redistest.Start(t)
	rc := srv.Client(t)
	fx := newFaultExecutor(rc)
	refused := make(chan struct{}, 16)
	fx.onDone = func(script string, v runtime.Value, err error) {
		if script == "scripts.Acquire" && err == nil && len(v.Array) > 0 && v.Array[0].Int == 0 {
			refused <- struct{}{}
		}
	}
	ctx := context.Background()
	holder := newMutex(t, newClient(t, srv.Client(t)), "handoff", lock.WithLease(time.Minute))
	_, err := holder.Lock(ctx)
	require.NoError(t, err)

	var ev events
	var seq atomic.Int64
	var unlocked, acquired int64
	w := newMutex(t, newClient(t, rc, lock.WithExecutor(fx)), "handoff", lock.WithHook(func(e lock.Event) {
		if e.Kind == lock.EventAcquired {
			acquired = seq.Add(1)
		}
		ev.hook(e)
	}))
	result := make(chan error, 1)
	go func() {
		_, err := w.Lock(ctx)
		result <- err
	}()
	<-refused // the first attempt
	<-refused // the attempt after subscribing: the waiter now sleeps
	unlocked = seq.Add(1)
	require.NoError(t, holder.Unlock(ctx))
	select {
	case err := <-result:
		require.NoError(t, err)
	case <-time.After(10 * time.Second):
		t.Fatal("the waiter did not get the lock")
	}

	var triggers []lock.Trigger
	for _, e := range ev.of(lock.EventAttempt) {
		triggers = append(triggers, e.Trigger)
	}
	assert.Equal(t, []lock.Trigger{lock.TriggerFirst, lock.TriggerSubscribed}, triggers)
	require.Len(t, ev.of(lock.EventAcquired), 1)
	assert.Equal(t, 2, ev.of(lock.EventAcquired)[0].Attempt)
	assert.Equal(t, lock.TriggerHandoff, ev.of(lock.EventAcquired)[0].Trigger, "the release handed the lock over")
	assert.Less(t, unlocked, acquired, "acquired after Unlock was called")
	assert.Equal(t, 2, fx.count("scripts.Acquire"), "no attempt after the handoff, no poll")
	require.NoError(t, w.Unlock(ctx))
}

// 9. Reentrancy: three acquires, three releases; the key goes with the
// third release, and HoldCount follows along.
func TestReentrancy(t *testing.T) {
	srv := redistest.Start(t)
	c := newClient(t, srv.Client(t))
	ctx := context.Background()
	m := newMutex(t, c, "reentrant")
	other := newMutex(t, c, "reentrant", patient)

	var helds []context.Context
	for i := 1; i <= 3; i++ {
		held, err := m.Lock(ctx)
		require.NoError(t, err)
		helds = append(helds, held)
		n, err := m.HoldCount(ctx)
		require.NoError(t, err)
		assert.EqualValues(t, i, n)
		assert.Equal(t, strconv.Itoa(i), srv.Do(t, "HGET", m.Key(), m.Owner()))
	}
	token := m.Token()
	assert.NotZero(t, token)
	_, ok, err := other.TryLock(ctx, 0)
	require.NoError(t, err)
	assert.False(t, ok, "another owner is refused")

	for i := 2; i >= 0; i-- {
		require.NoError(t, m.Unlock(ctx))
		n, err := m.HoldCount(ctx)
		require.NoError(t, err)
		assert.EqualValues(t, i, n)
		if i > 0 {
			assert.Equal(t, "1", srv.Do(t, "EXISTS", m.Key()), "the key stays while holds remain")
			assert.Equal(t, token, m.Token(), "one hold, one token")
			for _, h := range helds {
				assert.NoError(t, h.Err())
			}
		}
	}
	assert.Equal(t, "0", srv.Do(t, "EXISTS", m.Key()), "the third release deletes the key")
	for _, h := range helds {
		assert.ErrorIs(t, context.Cause(h), lock.ErrUnlocked)
	}
	assert.Zero(t, m.Token())
	assert.ErrorIs(t, m.Unlock(ctx), lock.ErrNotHeld, "a fourth release")
}

// 10. Fencing tokens rise strictly from holder to holder, across clients,
// and across a loss of the counter key.
func TestFencingTokensIncrease(t *testing.T) {
	srv := redistest.Start(t)
	ctx := context.Background()
	var clients []*lock.Client
	for range 3 {
		clients = append(clients, newClient(t, srv.Client(t)))
	}
	var last int64
	for i := range 30 {
		m := newMutex(t, clients[i%3], "fenced")
		_, err := m.Lock(ctx)
		require.NoError(t, err)
		token := m.Token()
		require.Greater(t, token, last, "holder %d", i)
		if i%10 == 9 {
			// Reentrant acquires keep the hold's token.
			_, err := m.Lock(ctx)
			require.NoError(t, err)
			assert.Equal(t, token, m.Token())
			require.NoError(t, m.Unlock(ctx))
		}
		if i == 15 {
			srv.Do(t, "DEL", m.Key()+":fence") // as a restart without persistence would
		}
		require.NoError(t, m.Unlock(ctx))
		last = token
	}
}

// 10b. A counter ahead of the server clock (the clock stepped back since it
// was written) still rises by one per hold: on a first acquire and on a
// handoff, which draw the token alike.
func TestFencingTokenAboveClock(t *testing.T) {
	srv := redistest.Start(t)
	ctx := context.Background()
	holder := newMutex(t, newClient(t, srv.Client(t)), "ahead")
	var ev events
	waiter := newMutex(t, newClient(t, srv.Client(t)), "ahead", lock.WithHook(ev.hook))
	const ahead = int64(1) << 52 // µs: about 140 years past the clock, below 2^53
	srv.Do(t, "SET", holder.Key()+":fence", strconv.FormatInt(ahead, 10))

	_, err := holder.Lock(ctx)
	require.NoError(t, err)
	assert.Equal(t, ahead+1, holder.Token(), "first acquire")
	got := goLock(ctx, waiter, 0)
	asleep(t, &ev, 2) // refused, then again once its wake channel is subscribed
	require.NoError(t, holder.Unlock(ctx))
	r := await(t, got)
	require.NoError(t, r.err)
	assert.Equal(t, lock.TriggerHandoff, ev.of(lock.EventAcquired)[0].Trigger)
	assert.Equal(t, ahead+2, waiter.Token(), "handoff")
	assert.Equal(t, strconv.FormatInt(ahead+2, 10), srv.Do(t, "GET", holder.Key()+":fence"))
	require.NoError(t, waiter.Unlock(ctx))
}
