package lock

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/luagen/luagen/lock/internal/scripts"
	"github.com/luagen/luagen/runtime"
)

// WaitGrace is how long after its wait TryLock's attempts may still get
// the server's answer: an attempt in flight then (a slow, stalled or
// unreachable server) is abandoned and rolled back in the background, and
// TryLock returns. So TryLock(ctx, wait) returns within wait + WaitGrace,
// whatever the server does; the only time beyond that is the caller's
// goroutine being scheduled. 25 ms is several loopback or data-centre
// round trips (tens to hundreds of µs each) and a GC pause, so an attempt
// that fails to finish in it got no answer in time, which TryLock reports
// as ErrNoAnswer rather than as a busy lock.
const WaitGrace = 25 * time.Millisecond

// Mutex is one owner of one named lock: a reentrant Redis lock with
// Redisson's RLock semantics. The owner is a token drawn by New (the
// Client's 128-bit random id and a sequence number); every hold taken
// through the Mutex belongs to it, so reentrancy follows the Mutex, not
// goroutines. Goroutines that must exclude each other need a Mutex each
// (New is cheap: no round trip).
//
// A Mutex is safe for concurrent use, with one contract: its Lock, TryLock
// and Unlock calls run one at a time (a call waits, within its ctx, for
// the one in progress), so every goroutine sharing a Mutex sees one hold.
// Goroutines that Lock the same Mutex all hold it at once (they are one
// owner; each Lock raises the hold count); while any of them holds it,
// Token returns the hold's token and every held context stays live, until
// the last Unlock ends the hold for all of them.
type Mutex struct {
	c       *Client
	cfg     config
	scripts *scripts.Scripts
	name    string
	owner   string
	keys    scripts.LockKeys // generated from the ---@keys family of lua/lock; see the package documentation
	tomb    string           // keys.Tomb(owner): this owner's highest abandoned attempt
	seq     atomic.Uint64    // numbers acquire attempts and latches
	op      chan struct{}    // capacity 1: taken by the Lock, TryLock or Unlock in progress
	wake    chan int64       // handoffs to this Mutex (the token), from the Client

	mu     sync.Mutex
	holds  int64    // the owner's hold count as the server last reported it
	token  int64    // fencing token of the current hold
	newest int64    // the largest token of any hold so far: a handoff message with no larger one is stale
	hold   *hold    // the current hold's context and watchdog; nil when none runs
	gaveUp *givenUp // the last hold given up as lost on this process' clock, until Unlock reports it
	losses uint64   // holds ended by a loss so far: a reentrant reply that spans one is void
	undo   int      // rollbacks (Abandon) in flight
	undone chan struct{}
}

// givenUp is a hold this process gave up as lost when its lease ran out on
// the process' clock, and what the rollback that followed found on the
// server (set when done is closed).
type givenUp struct {
	cause    error // ErrLost or ErrLeaseExpired
	done     chan struct{}
	released bool  // the server still counted the hold, and it was given back
	err      error // the rollback did not get through
}

// New returns a Mutex for the lock called name, with a new owner token.
// opts override the Client's defaults. It fails with an error matching
// ErrBadOption when name is empty, an option is invalid, or the prefix and
// name make keys that do not share one hash slot (a "{" in the prefix with
// no "}" after it can do that), and with ErrClosed when c is closed. It
// sends nothing to Redis.
func New(c *Client, name string, opts ...Option) (*Mutex, error) {
	if c == nil {
		return nil, optionError("New needs a Client")
	}
	if c.isClosed() {
		return nil, ErrClosed
	}
	if name == "" {
		return nil, optionError("empty lock name")
	}
	cfg := c.base
	cfg.apply(opts)
	if err := cfg.validate(); err != nil {
		return nil, nameError(name, err)
	}
	m := &Mutex{
		c: c, cfg: cfg, name: name,
		owner: c.id + "." + strconv.FormatUint(c.seq.Add(1), 10),
		op:    make(chan struct{}, 1),
		wake:  make(chan int64, 1),
	}
	m.keys = scripts.LockKeysFor(cfg.prefix, name)
	m.tomb = m.keys.Tomb(m.owner)
	if err := runtime.CheckSlots("lock.New", []string{m.keys.Lock, m.keys.Fence, m.keys.Wake, m.tomb}); err != nil {
		return nil, nameError(name, optionError("%v", err))
	}
	exec, err := withReplicas(&cfg, c.executor(&cfg))
	if err != nil {
		return nil, nameError(name, err)
	}
	m.scripts = scripts.New(exec)
	return m, nil
}

// Name returns the lock name given to New.
func (m *Mutex) Name() string { return m.name }

// Owner returns the Mutex's owner token: the field of the lock hash that
// holds its hold count.
func (m *Mutex) Owner() string { return m.owner }

// Key returns the Redis key of the lock hash, e.g. "lock:{order:42}".
func (m *Mutex) Key() string { return m.keys.Lock }

var notHeld = func() context.Context {
	ctx, cancel := context.WithCancelCause(context.Background())
	cancel(ErrNotAcquired)
	return ctx
}()

// Lock blocks until it holds the lock or ctx ends, and returns a context
// that is cancelled when the hold ends: the owner's last release (cause
// ErrUnlocked), a loss (ErrLost; ErrLeaseExpired with WithLease), ctx's
// end, or Client.Close (ErrClosed); context.Cause tells which. Run the
// work the lock guards under it. ctx also bounds the hold: when it ends the
// watchdog stops and the lock expires within one lease unless Unlock
// releases it first (to bound only the wait, use TryLock).
//
// A Mutex that holds the lock raises its hold count (one round trip); the
// context returned then also ends with the hold. While another owner
// holds it, Lock queues on the server (FIFO across processes) and sleeps
// until a release hands it the lock, or with PollOnly polls, taking a
// freed lock or a handoff (see WaitStrategy). A late reply (a
// retry, a stalled server) counts from the send of the try that got it,
// and when that leaves less than half the lease the server is asked for
// the hold's PTTL once more, so a Lock that returns holds a live lease on
// both sides. With WithReplicas an acquire fewer replicas acknowledged is
// rolled back before Lock returns its *ReplicaError.
//
// On failure it returns an already cancelled context and ctx's error,
// ErrNoAnswer when no try got an answer within the retry window (a dead
// or stalled server, also while waiting for an earlier rollback; it wraps
// the last connection error), another Redis error, ErrClosed, or
// ErrNilContext. An attempt in flight when ctx ends, or a handoff that
// came after, is rolled back in the background (Abandon), which this
// Mutex's next Lock waits for. With a deadline on ctx Lock returns at it
// even if the Redis client holds the call (rueidis does while it redials).
func (m *Mutex) Lock(ctx context.Context) (context.Context, error) {
	held, _, err := m.acquire(ctx, 0, false)
	return held, err
}

// TryLock is Lock with a bounded wait: it waits at most wait for the lock
// (0 or less: one attempt, no queueing; any wait up to math.MaxInt64
// means that long) and reports false, with a nil error, only when it did
// not get it by then because another owner holds it (an attempt got the
// server's answer). It returns within wait plus WaitGrace (25 ms;
// WaitStrategy.Grace) whatever the server does, stalled, unreachable or
// slow, and whatever the Redis client does: an attempt still in flight
// then is abandoned and rolled back in the background as for a cancelled
// Lock, and when no attempt got an answer the error matches ErrNoAnswer
// (wrapping the last transport error, if any), whatever ctx, so a dead
// server is never taken for a busy lock. When ctx ends first, its error is
// returned, also after refusals. ctx bounds the hold as for Lock.
// With WithReplicas the bound is wait + WaitGrace + the replica timeout,
// and a *ReplicaError is returned only once its rollback was answered
// (see WithReplicas).
func (m *Mutex) TryLock(ctx context.Context, wait time.Duration) (context.Context, bool, error) {
	return m.acquire(ctx, max(wait, 0), true)
}

// giveUpLocked records a hold this process has given up as lost on its
// own clock while the server may still count it (a renewal or an acquire
// that ran, but whose answer came too late), and counts the rollback that
// startGiveBack then sends: it releases the hold if this owner still holds
// it, so that nobody waits out its lease, and the next Lock of this Mutex
// waits for it, so it cannot take the same hold (and its fencing token) up
// again; Unlock reports what it found. m.mu is held, so that no Lock,
// Unlock or reentrant reply in between sees the hold neither counted nor
// being given back.
func (m *Mutex) giveUpLocked(cause error) *givenUp {
	g := &givenUp{cause: cause, done: make(chan struct{})}
	m.gaveUp = g
	m.losses++
	m.beginUndoLocked()
	return g
}

// startGiveBack sends the rollback that giveUpLocked counted.
func (m *Mutex) startGiveBack(g *givenUp) {
	rollback := m.abandonCall(int64(m.seq.Add(1)))
	m.rollback(false, true, func(ctx context.Context) (bool, error) {
		g.released, g.err = rollback(ctx)
		close(g.done)
		return g.released, g.err
	})
}

// notifies reports whether waiters subscribe to wake messages.
func (m *Mutex) notifies() bool { return !m.cfg.wait.PollOnly && m.c.rc != nil }

// begin waits for the Lock, TryLock or Unlock in progress on this Mutex.
func (m *Mutex) begin(ctx context.Context) error {
	select {
	case m.op <- struct{}{}:
		return nil
	default:
	}
	select {
	case m.op <- struct{}{}:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	case <-m.c.done:
		return ErrClosed
	}
}

func (m *Mutex) end() { <-m.op }

// newestToken returns the largest fencing token of any hold so far.
func (m *Mutex) newestToken() int64 {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.newest
}

// holding reports whether this Mutex counts a hold.
func (m *Mutex) holding() bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.holds > 0
}

// Unlock releases one hold: the count drops by one, and the last release
// stops the watchdog, cancels the held context (cause ErrUnlocked) and
// frees the lock, or hands it to the first live waiter in the same script
// (see WaitStrategy). While it waits for the server, the held context
// still ends when the hold's validity runs out on this process' clock.
//
// When this Mutex holds nothing as far as it knows, Unlock returns
// ErrNotHeld without asking the server. A hold given up as lost on this
// process' clock (ErrLost, ErrLeaseExpired) may still be counted by the
// server (a renewal that answered too late); it is given back at once in
// the background, and the next Unlock waits for that (within ctx) and
// returns ErrNotHeld saying what the server had: "the server still counted
// it, and it was released", "the server had ended it too", or why giving
// it back failed. When the server says the hold is gone (expired, taken
// over) Unlock changes nothing, returns an error matching ErrNotHeld, and
// cancels a held context still live with cause ErrLost. After
// Client.Close it returns ErrClosed and sends nothing.
//
// A release whose reply was lost is retried within the retry window and
// never releases two holds. An already ended ctx (a "defer m.Unlock(ctx)"
// after ctx's end) is replaced by context.WithoutCancel(ctx) bounded by the
// retry window: a release never sent would keep others waiting a lease.
func (m *Mutex) Unlock(ctx context.Context) error {
	if ctx == nil {
		return ErrNilContext
	}
	if ctx.Err() != nil {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(context.WithoutCancel(ctx), m.cfg.retryWindow)
		defer cancel()
	}
	if err := m.begin(ctx); err != nil {
		return m.wrap(err)
	}
	defer m.end()
	if m.c.isClosed() {
		return ErrClosed
	}
	// While a hold is counted, a reentrant acquire's extra hold may be
	// being given back: count holds once that is done.
	if m.holding() {
		if err := m.waitUndo(ctx, time.Now()); err != nil {
			return m.wrap(err)
		}
	}
	m.mu.Lock()
	h, holds, g := m.hold, m.holds, m.gaveUp
	m.mu.Unlock()
	if holds == 0 && g != nil {
		return m.reportGivenUp(ctx, g)
	}
	if holds == 0 {
		return ErrNotHeld
	}
	last := holds == 1
	if h != nil && last {
		// Stop renewing before the release is sent, so that no renewal
		// reaches the server after it.
		if err := h.halt(ctx); err != nil {
			return m.wrap(err)
		}
	}

	left, err := m.release(ctx, last)

	m.mu.Lock()
	ev := Event{Kind: EventReleased, HoldCount: left}
	var cause error
	resume := false // the server counted more holds than this Mutex did
	switch {
	case err == nil && left == 0:
		m.holds, m.token = 0, 0
		cause = ErrUnlocked
	case err == nil:
		m.holds = left
		resume = h != nil && last
	case errors.Is(err, ErrNotHeld):
		m.holds, m.token = 0, 0
		cause = ErrLost
		ev = Event{Kind: EventLost, Err: ErrLost}
	case last:
		// The release may or may not have happened. With the watchdog
		// stopped, the lock expires within one lease either way.
		m.holds, m.token = 0, 0
		cause = err
	}
	var ended *hold // nil when no hold runs, or one ended already (lost, ctx)
	if cause != nil && h != nil && m.hold == h {
		m.hold, ended = nil, h
		ev.Hold = time.Since(h.start)
	}
	m.mu.Unlock()
	if resume {
		h.resume()
	}
	if ended != nil {
		if ended.ctx.Err() != nil && ev.Kind == EventLost {
			ev.Kind = 0 // the holder knew already
		}
		ended.end(cause)
	}
	if err != nil && !errors.Is(err, ErrNotHeld) {
		return m.wrap(err)
	}
	if ev.Kind != 0 {
		m.emit(ev)
	}
	return err
}

// reportGivenUp is Unlock after this process gave its hold up as lost on its
// own clock: it waits for the rollback that followed and says what it
// found on the server, once.
func (m *Mutex) reportGivenUp(ctx context.Context, g *givenUp) error {
	select {
	case <-g.done:
	case <-ctx.Done():
		return m.wrap(ctx.Err())
	}
	m.mu.Lock()
	if m.gaveUp == g {
		m.gaveUp = nil
	}
	m.mu.Unlock()
	switch {
	case g.err != nil:
		return fmt.Errorf("%w (%v on this process' clock); giving it back on the server failed, it expires with its lease: %w", ErrNotHeld, g.cause, m.wrap(g.err))
	case g.released:
		return fmt.Errorf("%w (%v on this process' clock); the server still counted it, and it was released", ErrNotHeld, g.cause)
	}
	return fmt.Errorf("%w (%v on this process' clock); the server had ended it too", ErrNotHeld, g.cause)
}

// Token returns the fencing token of the current hold: a number drawn by
// the first acquire of each hold (or by the release that handed the lock
// over), larger than every token drawn before it for this lock, so a
// downstream store can refuse writes carrying a token lower than one it
// has seen (Kleppmann's fencing). It is 0 after Client.Close and when this Mutex holds no lock as
// far as it knows.
//
// Tokens are max(previous + 1, server time in µs): they rise across holders
// and across a loss of the counter key (restart without persistence, a
// failover that missed the last write, expiry after WithFenceTTL), unless
// that loss coincides with the server clock stepping back.
func (m *Mutex) Token() int64 {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.holds == 0 || m.c.isClosed() {
		return 0
	}
	return m.token
}

// HoldCount returns the owner's hold count on the server: 0 when this
// Mutex does not hold the lock. Redisson: getHoldCount.
func (m *Mutex) HoldCount(ctx context.Context) (int64, error) {
	in, err := m.inspect(ctx)
	return in.HoldCount, err
}

// IsHeld reports whether this Mutex holds the lock, asking the server.
// Redisson: isHeldByCurrentThread.
func (m *Mutex) IsHeld(ctx context.Context) (bool, error) {
	in, err := m.inspect(ctx)
	return in.HoldCount > 0, err
}

// IsLocked reports whether any owner holds the lock. Redisson: isLocked.
func (m *Mutex) IsLocked(ctx context.Context) (bool, error) {
	in, err := m.inspect(ctx)
	return in.Holders > 0, err
}

// RemainingLease returns the lock's remaining lease, whoever holds it (milliseconds
// precision, from PTTL): 0 when the lock is free, negative when the key
// exists without an expiry (not written by this package).
// Redisson: remainTimeToLive.
func (m *Mutex) RemainingLease(ctx context.Context) (time.Duration, error) {
	in, err := m.inspect(ctx)
	if err != nil {
		return 0, err
	}
	switch {
	case in.TTL == -2*time.Millisecond:
		return 0, nil
	case in.TTL < 0:
		return -1, nil
	}
	return in.TTL, nil
}

func (m *Mutex) inspect(ctx context.Context) (scripts.Inspection, error) {
	if ctx == nil {
		return scripts.Inspection{}, ErrNilContext
	}
	in, err := m.ask(ctx)
	if err != nil && ctx.Err() == nil && unanswered(err) {
		err = fmt.Errorf("%w within the retry window: %w", ErrNoAnswer, err)
	}
	return in, m.wrap(err)
}

// ask runs the Inspect script for this owner, retried within the retry
// window, and returns its answer and error as they are (inspect and
// validity say them in their own terms); on a closed Client it sends
// nothing and fails with ErrClosed.
func (m *Mutex) ask(ctx context.Context) (scripts.Inspection, error) {
	if m.c.isClosed() {
		return scripts.Inspection{}, ErrClosed
	}
	var in scripts.Inspection
	err := m.retry(ctx, 0, func(ctx context.Context) (err error) {
		in, err = m.scripts.Inspect(ctx, m.keys.Inspect(), scripts.InspectArgs{Owner: m.owner})
		return err
	})
	return in, err
}

// ForceUnlock deletes the lock whoever holds it and hands it to the first
// live waiter, and reports whether there was a lock to delete. It is for
// operators: a holder that will never come back, or a key left by a
// crashed deployment. The holder learns of it at its next renewal (its
// held context is cancelled with ErrLost). Redisson: forceUnlock.
func (m *Mutex) ForceUnlock(ctx context.Context) (bool, error) {
	switch {
	case ctx == nil:
		return false, ErrNilContext
	case m.c.isClosed():
		return false, ErrClosed
	}
	var deleted bool
	err := m.retry(ctx, 0, func(ctx context.Context) (err error) {
		deleted, err = m.scripts.ForceUnlock(ctx,
			m.keys.ForceUnlock(),
			scripts.ForceUnlockArgs{FenceTTL: m.cfg.fenceTTL, Sharded: m.c.sharded})
		return err
	})
	return deleted, m.wrap(err)
}

// newLatch names a latch key for one script call.
func (m *Mutex) newLatch() string {
	return m.keys.Latch(m.owner, int64(m.seq.Add(1)))
}
