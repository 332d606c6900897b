package lock

import (
	"context"
	crand "crypto/rand"
	"errors"
	"math/rand/v2"
	"reflect"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/luagen/luagen/runtime"
)

// Mutex is one owner of one named lock: a reentrant Redis lock with
// Redisson's RLock semantics. The owner is a random token (crypto/rand,
// 128 bits) drawn by New; every hold taken through the Mutex belongs to it,
// so reentrancy follows the Mutex, not goroutines. Goroutines that must
// exclude each other need a Mutex each (New is cheap: no round trip).
//
// The methods are safe for concurrent use, but concurrent Lock calls on one
// Mutex both succeed: they are the same owner.
type Mutex struct {
	c       *Client
	cfg     config
	scripts *Scripts
	name    string
	owner   string
	keys    keys
	seq     atomic.Uint64 // numbers latches
	// execKey tells Mutexes whose scripts run on the same executor, the
	// only ones that may hand the lock to each other.
	execKey any

	mu     sync.Mutex
	holds  int64 // the owner's hold count as the server last reported it
	token  int64 // fencing token of the current hold
	hold   *hold // the current hold's context and watchdog; nil when none runs
	acks   []string
	undo   int           // rollbacks (Abandon) in flight or expected
	undone chan struct{} // closed when undo drops to 0
}

// keys are a lock's key and channel names; see the package documentation.
type keys struct {
	lock    string // prefix{name}: the hash owner → hold count
	fence   string // prefix{name}:fence
	channel string // prefix{name}:unlock
	latch   string // prefix{name}:latch:<owner>. + a sequence number
}

// New returns a Mutex for the lock called name, with a new owner token.
// opts override the Client's defaults. It fails with an error matching
// ErrBadOption when name is empty, an option is invalid, or the prefix and
// name make keys that do not share one hash slot (a "{" in the prefix with
// no "}" after it can do that). It sends nothing to Redis.
func New(c *Client, name string, opts ...Option) (*Mutex, error) {
	if c == nil {
		return nil, optionError("New needs a Client")
	}
	if name == "" {
		return nil, optionError("empty lock name")
	}
	cfg := c.base
	cfg.apply(opts)
	if err := cfg.validate(); err != nil {
		return nil, nameError(name, err)
	}
	m := &Mutex{c: c, cfg: cfg, name: name, owner: crand.Text()}
	base := cfg.prefix + "{" + name + "}"
	m.keys = keys{lock: base, fence: base + ":fence", channel: base + ":unlock", latch: base + ":latch:" + m.owner + "."}
	if err := runtime.CheckSlots("lock.New", []string{m.keys.lock, m.keys.fence, m.keys.channel, m.keys.latch}); err != nil {
		return nil, nameError(name, optionError("%v", err))
	}
	m.scripts = NewScripts(c.executor(&cfg))
	m.execKey = m
	if cfg.exec == nil {
		m.execKey = nil // the Client's rueidis client
	} else if reflect.ValueOf(cfg.exec).Comparable() {
		m.execKey = cfg.exec
	}
	return m, nil
}

// Name returns the lock name given to New.
func (m *Mutex) Name() string { return m.name }

// Owner returns the Mutex's owner token: the field of the lock hash that
// holds its hold count.
func (m *Mutex) Owner() string { return m.owner }

// Key returns the lock's key, prefix{name}.
func (m *Mutex) Key() string { return m.keys.lock }

// ErrNotAcquired is the cause of the context that Lock and TryLock return
// when they do not acquire the lock: it is cancelled from the start, so
// using it by mistake stops the work it guards.
var ErrNotAcquired = errors.New("lock: not acquired")

var notHeld = func() context.Context {
	ctx, cancel := context.WithCancelCause(context.Background())
	cancel(ErrNotAcquired)
	return ctx
}()

// Lock blocks until it holds the lock or ctx ends, and returns a context
// that is cancelled when the hold ends: when the owner releases its last
// hold (cause ErrUnlocked), when the lock is lost (ErrLost, or
// ErrLeaseExpired with WithLease), when ctx ends, or when the Client is
// closed (ErrClosed). context.Cause tells which. Work guarded by the lock
// should run under that context.
//
// ctx also bounds the hold: when it ends, the watchdog stops and the lock
// expires within one lease unless Unlock releases it first. To bound only
// the wait, use TryLock.
//
// Acquiring a lock the owner already holds succeeds at once and raises the
// hold count; the returned context is then also cancelled when the first
// hold ends. While another owner holds the lock, Lock waits for its unlock
// notification, polling after the holder's remaining lease should the
// notification be lost (see WaitStrategy). When that owner is another
// Mutex of the same Client, its release hands the lock straight over
// instead (see WaitStrategy.MaxHandoffs), and when this Client knows that
// one of its Mutexes holds the lock, Lock waits for that without an
// attempt the server would refuse.
//
// On failure it returns an already cancelled context and ctx's error, a
// Redis error, or ErrClosed. When ctx ends while an attempt is in flight,
// that attempt is rolled back in the background (Abandon) and never renewed.
func (m *Mutex) Lock(ctx context.Context) (context.Context, error) {
	held, _, err := m.acquire(ctx, 0, false)
	return held, err
}

// TryLock is Lock with a bounded wait: it waits at most wait for another
// owner to release the lock (0 or less: one attempt, no waiting) and reports
// false, with a nil error, when the lock was still held by then. It returns
// within wait plus the round trip of its last attempt, or of a handoff to
// it that is under way when wait ends (it then holds the lock). ctx
// bounds the hold as for Lock.
func (m *Mutex) TryLock(ctx context.Context, wait time.Duration) (context.Context, bool, error) {
	return m.acquire(ctx, max(wait, 0), true)
}

func (m *Mutex) acquire(ctx context.Context, wait time.Duration, bounded bool) (context.Context, bool, error) {
	start := time.Now()
	deadline := start.Add(wait)
	attempt := 0
	var sub *subscription
	defer func() {
		if sub != nil {
			sub.leave()
		}
	}()
	fail := func(err error, trigger Trigger) (context.Context, bool, error) {
		if trigger == TriggerNotified {
			sub.notify() // pass the unused permit on
		}
		m.emit(Event{Kind: EventAcquireFailed, Attempt: attempt, Wait: time.Since(start), Err: err})
		return notHeld, false, nameError(m.name, err)
	}
	if err := ctx.Err(); err != nil {
		return fail(err, 0)
	}
	if m.c.isClosed() {
		return fail(ErrClosed, 0)
	}
	if err := m.waitUndo(ctx); err != nil {
		return fail(err, 0)
	}
	trigger := TriggerFirst
	var w *heir     // enlisted: a release of this Client may hand the lock over
	var grant *heir // the heir whose unknown handoff the next attempt settles
	var queued bool // sleep before the next attempt
	var sleep time.Duration
	next := TriggerPoll
	if !bounded || wait > 0 {
		// Another Mutex of this Client holds the lock: wait for its
		// release rather than send an attempt that would be refused.
		w, sub, sleep = m.c.queueBehind(m)
		queued = w != nil
	}
	for {
		if queued {
			if rem := time.Until(deadline); bounded && rem <= sleep {
				sleep, next = rem, TriggerDeadline
			}
			var v *verdict
			var err error
			if trigger, v, err = m.pause(ctx, sub, w, sleep, next); err != nil {
				return fail(err, 0)
			}
			switch {
			case v == nil:
			case v.granted:
				return m.handed(ctx, sub, w, *v, start, attempt)
			case v.unknown:
				grant = w
			}
		}
		attempt++
		m.emit(Event{Kind: EventAttempt, Attempt: attempt, Trigger: trigger, Wait: time.Since(start)})
		sent := time.Now()
		res, err := m.tryAcquire(ctx, grant)
		handed := grant != nil
		grant = nil
		if err != nil {
			return fail(err, trigger)
		}
		if res.Acquired {
			if sub != nil {
				sub.drain()
			}
			// A first acquire outside a handoff found the lock free.
			m.c.acquired(m, sent, res.Token != 0 && !handed)
			held := m.held(ctx, res, sent)
			m.emit(Event{Kind: EventAcquired, Attempt: attempt, Trigger: trigger, Wait: time.Since(start), HoldCount: res.HoldCount, Token: m.Token()})
			return held, true, nil
		}
		if bounded && !time.Now().Before(deadline) {
			m.emit(Event{Kind: EventTimedOut, Attempt: attempt, Wait: time.Since(start)})
			return notHeld, false, nil
		}
		if sub == nil && m.notifies() {
			if sub, err = m.c.subscribe(m.keys.channel); err != nil {
				return fail(err, 0)
			}
			// Unless another waiter of this Client had the channel
			// subscribed before the refused attempt was sent, attempt again
			// once subscribed: an unlock between the refusal and the
			// subscription would be missed.
			if !sub.readyBefore(sent) {
				if err := m.settle(ctx, sub, deadline, bounded); err != nil {
					return fail(err, 0)
				}
				trigger, queued = TriggerSubscribed, false
				continue
			}
		}
		sleep, next = m.cfg.wait.poll(res.TTL), TriggerPoll
		w, queued = m.c.enlist(m), true
	}
}

// handed finishes an acquire with the lock a release handed to w: the
// hold starts from when the Handoff was sent. A grant that comes as ctx
// ends is given back rather than held with nothing renewing it.
func (m *Mutex) handed(ctx context.Context, sub *subscription, w *heir, v verdict, start time.Time, attempt int) (context.Context, bool, error) {
	if err := ctx.Err(); err != nil {
		m.c.released(m, nil, verdict{})
		m.abandon(w.latch)
		m.emit(Event{Kind: EventAcquireFailed, Attempt: attempt, Wait: time.Since(start), Err: err})
		return notHeld, false, nameError(m.name, err)
	}
	m.addAcks(w.latch)
	if sub != nil {
		sub.drain()
	}
	held := m.held(ctx, AcquireResult{Acquired: true, HoldCount: 1, Token: v.token}, v.sent)
	m.emit(Event{Kind: EventAcquired, Attempt: attempt, Trigger: TriggerHandoff, Wait: time.Since(start), HoldCount: 1, Token: v.token})
	return held, true, nil
}

// notifies reports whether waiters subscribe to unlock notifications.
func (m *Mutex) notifies() bool { return !m.cfg.wait.PollOnly && m.c.rc != nil }

// settle waits until the subscription is confirmed (or has failed, then
// waiters poll), at most until a bounded wait's deadline.
func (m *Mutex) settle(ctx context.Context, sub *subscription, deadline time.Time, bounded bool) error {
	var timeout <-chan time.Time
	if bounded {
		t := time.NewTimer(time.Until(deadline))
		defer t.Stop()
		timeout = t.C
	}
	select {
	case <-sub.settled:
		return nil
	case <-timeout:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	case <-m.c.done:
		return ErrClosed
	}
}

// pause sleeps until a notification (when subscribed), a release's
// verdict (when w is enlisted), d, ctx's end or Close, and says what ended
// it. A verdict means TriggerHandoff. When something else wakes an heir
// that a release has already claimed, the verdict is still awaited: the
// release may have handed the lock over.
func (m *Mutex) pause(ctx context.Context, sub *subscription, w *heir, d time.Duration, onTimer Trigger) (Trigger, *verdict, error) {
	t := time.NewTimer(d)
	defer t.Stop()
	var wake chan struct{}
	if sub != nil {
		wake = sub.wake
	}
	var verdicts chan verdict
	if w != nil {
		verdicts = w.ch
	}
	var trigger Trigger
	select {
	case v := <-verdicts:
		return TriggerHandoff, &v, nil
	case <-wake:
		if err := ctx.Err(); err != nil {
			sub.notify()
			w.leave()
			return 0, nil, err
		}
		trigger = TriggerNotified
	case <-t.C:
		trigger = onTimer
	case <-ctx.Done():
		w.leave()
		return 0, nil, ctx.Err()
	case <-m.c.done:
		w.leave()
		return 0, nil, ErrClosed
	}
	if w == nil || w.withdraw() {
		return trigger, nil, nil
	}
	if trigger == TriggerNotified {
		sub.notify() // the verdict decides; pass the permit on
	}
	select {
	case v := <-verdicts:
		return TriggerHandoff, &v, nil
	case <-ctx.Done():
		w.leave()
		return 0, nil, ctx.Err()
	case <-m.c.done:
		w.leave()
		return 0, nil, ErrClosed
	}
}

// poll is the fallback sleep after an attempt refused with the holder's
// remaining lease ttl (negative: -1 ms no expiry, -2 ms no lock).
func (w WaitStrategy) poll(ttl time.Duration) time.Duration {
	var d time.Duration
	switch {
	case ttl == -time.Millisecond:
		d = w.MaxPoll
		if d == 0 {
			d = noExpiryPoll
		}
	case ttl > 0:
		d = ttl - rand.N(ttl/4+1)
	}
	if w.MaxPoll > 0 && d > w.MaxPoll {
		d = w.MaxPoll
	}
	minPoll := w.MinPoll
	if minPoll == 0 {
		minPoll = defaultMinPoll
	}
	return max(d, minPoll)
}

// held records a successful acquire sent at sent and returns the caller's
// context.
func (m *Mutex) held(ctx context.Context, res AcquireResult, sent time.Time) context.Context {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.holds = res.HoldCount
	h := m.hold
	if h != nil && res.Token != 0 {
		// A first acquire while a hold still ran: the server had lost the
		// old hold before its watchdog noticed.
		h.end(ErrLost)
		h = nil
	}
	if res.Token != 0 {
		m.token = res.Token
	}
	validUntil := sent.Add(m.cfg.leaseFor())
	if h == nil {
		h = m.startHold(ctx, validUntil)
		return h.ctx
	}
	h.extend(validUntil)
	return h.child(ctx)
}

// Unlock releases one hold: the hold count drops by one, and the last
// release deletes the lock, wakes waiters, stops the watchdog and cancels
// the held context (cause ErrUnlocked). When another Mutex of the same
// Client is waiting for the lock, the last release instead gives the lock
// to the one that has waited longest, in the same round trip (at most
// WaitStrategy.MaxHandoffs times in a row; see there), after this hold's
// context is cancelled.
//
// Only the owner can release: when this Mutex does not hold the lock (never
// acquired, already released, expired, or taken over by another owner)
// Unlock changes nothing and returns an error matching ErrNotHeld; a held
// context that was still live is then cancelled with cause ErrLost.
//
// A release whose reply was lost is retried within the retry window and
// returns the first answer (a per-call latch key), so it never releases two
// holds. Since the common "defer m.Unlock(ctx)" may run after ctx has
// ended, an already ended ctx is replaced by context.WithoutCancel(ctx)
// bounded by the retry window: a release that is never sent would keep
// everyone else waiting for a whole lease.
func (m *Mutex) Unlock(ctx context.Context) error {
	if ctx.Err() != nil {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(context.WithoutCancel(ctx), m.cfg.retryWindow)
		defer cancel()
	}
	m.mu.Lock()
	h := m.hold
	holds := m.holds
	m.mu.Unlock()
	last := holds <= 1
	if h != nil && last {
		// Stop renewing before the release is sent, so that no renewal
		// reaches the server after it.
		if err := h.halt(ctx); err != nil {
			return nameError(m.name, err)
		}
	}
	var w *heir
	if holds == 1 {
		w = m.c.claim(m)
	}
	var left int64
	var v verdict
	var err error
	if w != nil {
		left, v, err = m.handoff(ctx, w)
	} else {
		left, err = m.release(ctx)
	}

	var ev *Event
	m.mu.Lock()
	ended := func(cause error) {
		if h != nil {
			if m.hold == h {
				m.hold = nil
			}
			h.end(cause)
		}
	}
	switch {
	case err == nil && left == 0:
		m.holds, m.token = 0, 0
		ev = &Event{Kind: EventReleased}
		if v.granted {
			ev.Trigger = TriggerHandoff
		}
		if h != nil {
			ev.Hold = time.Since(h.start)
		}
		ended(ErrUnlocked)
	case err == nil:
		m.holds = left
		if h != nil && last {
			h.launch() // the server counted more holds than this Mutex did
		}
		ev = &Event{Kind: EventReleased, HoldCount: left}
	case errors.Is(err, ErrNotHeld):
		m.holds, m.token = 0, 0
		if h != nil && h.ctx.Err() == nil {
			ev = &Event{Kind: EventLost, Hold: time.Since(h.start), Err: ErrLost}
		}
		ended(ErrLost)
	case h != nil && last:
		// The release may or may not have happened. With the watchdog
		// stopped, the lock expires within one lease either way.
		ended(err)
	}
	m.mu.Unlock()
	// After this hold's context is cancelled, so that an heir's begins
	// after it.
	if err == nil && left > 0 {
		m.c.settle(w, v)
	} else {
		m.c.released(m, w, v)
	}
	if ev != nil {
		m.emit(*ev)
	}
	if err != nil {
		return nameError(m.name, err)
	}
	return nil
}

// Token returns the fencing token of the current hold: a number drawn by
// the first acquire of each hold, larger than every token drawn before it
// for this lock, so a downstream store can refuse writes carrying a token
// lower than one it has seen (Kleppmann's fencing). It is 0 when this Mutex
// holds no lock as far as it knows.
//
// Tokens are max(previous + 1, server time in µs): they rise across holders
// and across a loss of the counter key (restart without persistence, a
// failover that missed the last write, expiry after WithFenceTTL), unless
// that loss coincides with the server clock stepping back.
func (m *Mutex) Token() int64 {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.holds == 0 {
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

// TTL returns the lock's remaining lease, whoever holds it (milliseconds
// precision, from PTTL): 0 when the lock is free, negative when the key
// exists without an expiry (not written by this package).
// Redisson: remainTimeToLive.
func (m *Mutex) TTL(ctx context.Context) (time.Duration, error) {
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

func (m *Mutex) inspect(ctx context.Context) (Inspection, error) {
	var in Inspection
	err := m.retry(ctx, func(ctx context.Context) (err error) {
		in, err = m.scripts.Inspect(ctx, InspectKeys{Lock: m.keys.lock}, InspectArgs{Owner: m.owner})
		return err
	})
	if err != nil {
		return Inspection{}, nameError(m.name, err)
	}
	return in, nil
}

// ForceUnlock deletes the lock whoever holds it and wakes its waiters, and
// reports whether there was a lock to delete. It is for operators: a
// holder that will never come back, or a key left by a crashed deployment.
// The holder learns of it at its next renewal (its held context is
// cancelled with ErrLost). Redisson: forceUnlock.
func (m *Mutex) ForceUnlock(ctx context.Context) (bool, error) {
	var deleted bool
	err := m.retry(ctx, func(ctx context.Context) (err error) {
		deleted, err = m.scripts.ForceUnlock(ctx, ForceUnlockKeys{Lock: m.keys.lock, Channel: m.keys.channel},
			ForceUnlockArgs{Sharded: m.c.sharded})
		return err
	})
	if err != nil {
		return false, nameError(m.name, err)
	}
	return deleted, nil
}

// newLatch names a latch key for one script call.
func (m *Mutex) newLatch() string {
	return m.keys.latch + strconv.FormatUint(m.seq.Add(1), 10)
}
