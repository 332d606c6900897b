package lock

import (
	"context"
	"sync"
	"time"
)

// hold is one period during which a Mutex holds its lock: from a first
// acquire to the last release, loss, or the end of the context it was
// acquired with. It owns the context handed to the caller and one goroutine
// that cancels it when the lease runs out on the holder's monotonic clock
// and, without WithLease, renews the lease (the watchdog).
type hold struct {
	m      *Mutex
	ctx    context.Context // handed to the caller
	cancel context.CancelCauseFunc
	parent context.Context // the context Lock was called with
	start  time.Time
	poke   chan struct{} // validUntil moved

	mu         sync.Mutex
	validUntil time.Time
	stop       chan struct{} // closed to stop the goroutine
	stopped    bool
	done       chan struct{} // closed when the goroutine has stopped
}

// clockDrift is the share of a lease a holder gives up to clock drift
// between itself and the server, as Redlock's CLOCK_DRIFT_FACTOR.
const clockDrift = 100

// startHold begins a hold valid until validUntil; m.mu must be held.
func (m *Mutex) startHold(parent context.Context, validUntil time.Time) *hold {
	ctx, cancel := context.WithCancelCause(parent)
	h := &hold{
		m:          m,
		ctx:        ctx,
		cancel:     cancel,
		parent:     parent,
		start:      time.Now(),
		poke:       make(chan struct{}, 1),
		validUntil: validUntil.Add(-m.cfg.leaseFor() / clockDrift),
	}
	m.hold = h
	h.launch()
	return h
}

// launch starts the hold's goroutine (again, after halt).
func (h *hold) launch() {
	stop, done := make(chan struct{}), make(chan struct{})
	h.mu.Lock()
	h.stop, h.done, h.stopped = stop, done, false
	h.mu.Unlock()
	if !h.m.c.track() {
		close(done)
		h.cancel(ErrClosed)
		return
	}
	go h.run(stop, done)
}

// until returns the end of the hold's validity on the holder's clock.
func (h *hold) until() time.Time {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.validUntil
}

// extend moves the validity to validUntil (a later acquire reset the
// lease) when that is later.
func (h *hold) extend(validUntil time.Time) {
	validUntil = validUntil.Add(-h.m.cfg.leaseFor() / clockDrift)
	h.mu.Lock()
	if validUntil.After(h.validUntil) {
		h.validUntil = validUntil
	}
	h.mu.Unlock()
	select {
	case h.poke <- struct{}{}:
	default:
	}
}

// child returns a context for a reentrant acquire under parent: it ends
// with parent or when the hold ends, whichever is first.
func (h *hold) child(parent context.Context) context.Context {
	ctx, cancel := context.WithCancelCause(parent)
	context.AfterFunc(h.ctx, func() { cancel(context.Cause(h.ctx)) })
	return ctx
}

// signalStop tells the goroutine to stop without waiting for it.
func (h *hold) signalStop() (done chan struct{}) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if !h.stopped {
		h.stopped = true
		close(h.stop)
	}
	return h.done
}

// halt stops the goroutine and waits until it has stopped, so a renewal in
// flight has its answer before halt returns. It gives up when ctx ends.
func (h *hold) halt(ctx context.Context) error {
	done := h.signalStop()
	select {
	case <-done:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// end finishes the hold with cause; the caller holds m.mu and clears m.hold.
func (h *hold) end(cause error) {
	h.signalStop()
	h.cancel(cause)
}

// over is how the goroutine ends the hold: the lock was lost (lost true)
// or the hold's context or the Client ended.
func (h *hold) over(cause error, lost bool) {
	m := h.m
	m.mu.Lock()
	if m.hold == h {
		m.hold = nil
		if lost {
			m.holds, m.token = 0, 0
		}
	}
	m.mu.Unlock()
	h.cancel(cause)
	if lost {
		m.emit(Event{Kind: EventLost, Hold: time.Since(h.start), Err: cause})
	}
}

// run is the hold's goroutine: it ends the hold when the validity runs out
// on the holder's monotonic clock, when the context Lock was called with
// ends, or when the Client closes; without WithLease it is also the
// watchdog. It returns without ending the hold when stop is closed.
//
// The watchdog renews the lease every renewEvery: each renewal sets the
// lease to its full length from the moment the server runs it, never from
// the previous deadline. A failed renewal (no answer) is retried sooner,
// while the lease lasts; a renewal that finds the lock gone, or a lease
// that runs out on the holder's clock before any renewal got through, ends
// the hold with ErrLost. With WithLease the end of the lease ends the hold
// with ErrLeaseExpired.
func (h *hold) run(stop, done chan struct{}) {
	defer h.m.c.wg.Done()
	defer close(done)
	m := h.m
	lease, every := m.cfg.watchdog, m.cfg.renewEvery()
	expired := ErrLost
	var renew *time.Timer
	var renewC <-chan time.Time // nil with WithLease: never ready
	if m.cfg.leaseSet {
		expired = ErrLeaseExpired
	} else {
		renew = time.NewTimer(every)
		defer renew.Stop()
		renewC = renew.C
	}
	valid := time.NewTimer(time.Until(h.until()))
	defer valid.Stop()
	for {
		select {
		case <-stop:
			return
		case <-h.parent.Done():
			h.over(context.Cause(h.parent), false)
			return
		case <-m.c.done:
			h.over(ErrClosed, false)
			return
		case <-h.poke:
			valid.Reset(time.Until(h.until()))
		case <-valid.C:
			if left := time.Until(h.until()); left > 0 {
				valid.Reset(left)
				continue
			}
			h.over(expired, true)
			return
		case <-renewC:
			next, gone := h.renew(lease, every)
			if gone {
				h.over(ErrLost, true)
				return
			}
			valid.Reset(time.Until(h.until()))
			renew.Reset(next)
		}
	}
}

// renew sends one renewal and returns when to send the next, or gone when
// the lock is no longer the owner's.
func (h *hold) renew(lease, every time.Duration) (next time.Duration, gone bool) {
	m := h.m
	until := h.until()
	ctx, cancel := context.WithDeadline(h.parent, until)
	defer cancel()
	defer context.AfterFunc(m.c.ctx, cancel)()
	sent := time.Now()
	ok, err := m.scripts.Renew(ctx, RenewKeys{Lock: m.keys.lock}, RenewArgs{Owner: m.owner, Lease: lease})
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
