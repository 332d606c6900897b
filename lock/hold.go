package lock

import (
	"context"
	"sync"
	"time"

	"github.com/luagen/luagen/lock/internal/scripts"
)

// hold is one period during which a Mutex holds its lock: from a first
// acquire to the last release, a loss, or the end of the context it was
// acquired with. It owns the context handed to the caller and, instead of a
// goroutine, timer callbacks: one that ends the hold when the lease runs out
// on the holder's monotonic clock and, without WithLease, the watchdog's
// renewal timer. Starting and stopping a hold therefore costs no goroutine
// switch on the Lock/Unlock path.
//
// The watchdog renews the lease every renewEvery: each renewal sets the
// lease to its full length from the moment the server runs it, never from
// the previous deadline. A failed renewal (no answer) is retried sooner,
// while the lease lasts; a renewal that finds the lock gone, or a lease that
// runs out on the holder's clock before any renewal got through, ends the
// hold with ErrLost. With WithLease the end of the lease ends the hold with
// ErrLeaseExpired.
type hold struct {
	m      *Mutex
	ctx    context.Context // handed to the caller
	cancel context.CancelCauseFunc
	parent context.Context // the context Lock was called with
	start  time.Time

	mu         sync.Mutex
	validUntil time.Time
	stopped    bool          // the timers are off and nothing more will run
	halted     bool          // no renewal is sent: an Unlock is releasing the hold
	renewing   chan struct{} // closed when the renewal in flight ends; nil when none is
	valid      *time.Timer   // runs expire
	renew      *time.Timer   // runs renewTick; nil with WithLease
	unlink     func() bool   // the context.AfterFunc on parent; nil when none
}

// clockDrift is the share of a lease a holder gives up to clock drift
// between itself and the server, as Redlock's CLOCK_DRIFT_FACTOR.
const clockDrift = 100

// launch arms the hold's timers.
func (h *hold) launch() {
	m := h.m
	h.mu.Lock()
	defer h.mu.Unlock()
	h.stopped = false
	// The earlier timer first: a timer that becomes the earliest of its P
	// wakes an idle thread to watch it, so arming the later one first
	// would cost two wake-ups per Lock instead of one.
	if !m.cfg.leaseSet {
		// A handoff grants a shorter lease (see WaitStrategy.QueueTTL):
		// the first renewal comes soon enough to extend it.
		h.renew = time.AfterFunc(min(m.cfg.renewEvery(), time.Until(h.validUntil)/2), h.renewTick)
	}
	h.valid = time.AfterFunc(time.Until(h.validUntil), h.expire)
	if h.parent.Done() != nil { // else it never ends: nothing to watch
		h.unlink = context.AfterFunc(h.parent, func() { h.over(context.Cause(h.parent), false, false) })
	}
	if !m.c.addHold(h) {
		go h.over(ErrClosed, false, false)
	}
}

// stop turns the timers off; it reports false when they already were.
// h.mu must be held.
func (h *hold) stop() bool {
	if h.stopped {
		return false
	}
	h.stopped = true
	h.valid.Stop()
	if h.renew != nil {
		h.renew.Stop()
	}
	if h.unlink != nil {
		h.unlink()
		h.unlink = nil
	}
	h.m.c.dropHold(h)
	return true
}

// extend moves the validity to validUntil (a later acquire reset the
// lease) when that is later.
func (h *hold) extend(validUntil time.Time) {
	validUntil = validUntil.Add(-h.m.cfg.leaseFor() / clockDrift)
	h.mu.Lock()
	defer h.mu.Unlock()
	if validUntil.After(h.validUntil) {
		h.validUntil = validUntil
		if !h.stopped {
			h.valid.Reset(time.Until(validUntil))
		}
	}
}

// halt stops the watchdog and waits for a renewal in flight to have its
// answer, so that no renewal reaches the server after a release sent next.
// It gives up when ctx ends. The hold's context stays live until the
// release is done (end) or its validity runs out meanwhile (expire): a
// release that waits for a stalled server does not stretch the hold.
func (h *hold) halt(ctx context.Context) error {
	h.mu.Lock()
	h.halted = true
	if h.renew != nil {
		h.renew.Stop()
	}
	done := h.renewing
	h.mu.Unlock()
	if done == nil {
		return nil
	}
	select {
	case <-done:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// resume restarts the watchdog after halt, when the release left holds
// (the server counted more than this Mutex did); a hold whose validity ran
// out meanwhile is given up instead, as expire does.
func (h *hold) resume() {
	h.mu.Lock()
	h.halted = false
	over := h.ctx.Err() != nil
	if !over && !h.stopped && h.renew != nil {
		h.renew.Reset(min(h.m.cfg.renewEvery(), time.Until(h.validUntil)/2))
	}
	h.mu.Unlock()
	if over {
		h.over(context.Cause(h.ctx), true, true)
	}
}

// end finishes the hold with cause; the caller has cleared m.hold (under
// m.mu, which it no longer holds).
func (h *hold) end(cause error) {
	h.mu.Lock()
	h.stop()
	h.mu.Unlock()
	h.cancel(cause)
}

// over ends the hold from a timer or context callback: the lock was lost
// (lost true), or the caller's context or the Client ended. It does nothing
// when the hold was stopped already.
//
// giveBack (a loss on this process' clock, where the server may still
// count the hold) also gives the hold back on the server, registered
// before the context is cancelled, so that whoever sees the hold end also
// sees the rollback to wait for.
func (h *hold) over(cause error, lost, giveBack bool) {
	h.mu.Lock()
	first := h.stop()
	h.mu.Unlock()
	if !first {
		return
	}
	m := h.m
	var g *givenUp
	m.mu.Lock()
	if m.hold == h {
		m.hold = nil
		if lost {
			m.holds, m.token = 0, 0
			m.losses++
		}
		if giveBack {
			g = m.giveUpLocked(cause)
		}
	}
	m.mu.Unlock()
	if g != nil {
		m.startGiveBack(g)
	}
	if lost { // before the context ends, so whoever sees it end sees the event
		m.emit(Event{Kind: EventLost, Hold: time.Since(h.start), Err: cause})
	}
	h.cancel(cause)
}

// expire runs when the validity may have run out.
func (h *hold) expire() {
	h.mu.Lock()
	if h.stopped {
		h.mu.Unlock()
		return
	}
	if left := time.Until(h.validUntil); left > 0 { // extended meanwhile
		h.valid.Reset(left)
		h.mu.Unlock()
		return
	}
	halted := h.halted
	h.mu.Unlock()
	cause := ErrLost
	if h.m.cfg.leaseSet {
		cause = ErrLeaseExpired
	}
	if halted {
		// An Unlock is releasing the hold and ends it when done; the
		// holder learns now that it no longer holds it.
		h.m.emit(Event{Kind: EventLost, Hold: time.Since(h.start), Err: cause})
		h.cancel(cause)
		return
	}
	// The server's lease may outlast this one (a renewal that ran but
	// answered too late): what it still counts is given back.
	h.over(cause, true, true)
}

// renewTick is the watchdog: one renewal, then the next is scheduled.
func (h *hold) renewTick() {
	m := h.m
	if !m.c.track() { // Close waits for renewals in flight
		return
	}
	defer m.c.wg.Done()
	h.mu.Lock()
	if h.stopped || h.halted {
		h.mu.Unlock()
		return
	}
	done := make(chan struct{})
	h.renewing = done
	until := h.validUntil
	h.mu.Unlock()

	next, gone := h.send(until)

	h.mu.Lock()
	h.renewing = nil
	close(done)
	if h.stopped || gone {
		h.mu.Unlock()
		if gone {
			h.over(ErrLost, true, false)
		}
		return
	}
	h.valid.Reset(time.Until(h.validUntil))
	if !h.halted {
		h.renew.Reset(next)
	}
	h.mu.Unlock()
}

// send sends one renewal and returns when to send the next, or gone when
// the lock is no longer the owner's.
func (h *hold) send(until time.Time) (next time.Duration, gone bool) {
	m := h.m
	lease, every := m.cfg.watchdog, m.cfg.renewEvery()
	ctx, cancel := context.WithDeadline(h.parent, until)
	defer cancel()
	defer context.AfterFunc(m.c.ctx, cancel)()
	sent := time.Now()
	cctx, w := m.askAcks(ctx)
	ok, err := m.scripts.Renew(cctx, m.keys.Renew(), scripts.RenewArgs{Owner: m.owner, Lease: lease})
	if short := m.short(w); err == nil && ok && short != nil {
		// The primary has the new lease, the replicas may not: count
		// the one they acknowledged last, and try again sooner.
		err = short
	}
	switch {
	case err == nil && ok:
		h.mu.Lock()
		h.validUntil = sent.Add(lease - lease/clockDrift)
		h.mu.Unlock()
		m.emit(Event{Kind: EventRenewed, Hold: time.Since(h.start)})
		return every, false
	case err == nil:
		return 0, true
	}
	m.emit(Event{Kind: EventRenewFailed, Hold: time.Since(h.start), Err: err})
	// Retry while the lease lasts: soon enough for a few more tries, late
	// enough not to hammer a struggling server.
	return max(min(every/2, time.Until(until)/3), time.Millisecond), false
}
