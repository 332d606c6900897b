package lock

import (
	"context"
	"errors"
	"math/rand/v2"
	"time"

	"github.com/luagen/luagen/runtime"
)

const (
	retryBackoffMin = 10 * time.Millisecond
	retryBackoffMax = 250 * time.Millisecond
	// maxAcks bounds the latches a Mutex remembers to delete; older ones
	// are left to expire.
	maxAcks = 8
)

// tryAcquire runs one acquire attempt, retried after a lost reply under one
// latch so that a retry never counts a second hold. With grant it settles a
// handoff to w whose outcome is unknown: the attempt runs under the grant's
// latch, so it returns the grant if there was one, and it is sealed, so
// that a Handoff still on its way grants nothing once it was refused.
func (m *Mutex) tryAcquire(ctx context.Context, grant *heir) (AcquireResult, error) {
	var latch string
	if grant != nil {
		latch = grant.latch
	} else {
		latch = m.newLatch()
	}
	acks := m.takeAcks()
	keys := AcquireKeys{Lock: m.keys.lock, Fence: m.keys.fence, Latch: latch, Acks: acks}
	args := AcquireArgs{Owner: m.owner, Lease: m.cfg.leaseFor(), LatchTTL: m.cfg.latchTTL(), FenceTTL: m.cfg.fenceTTL, Seal: grant != nil}
	var res AcquireResult
	err := m.retry(ctx, func(ctx context.Context) (err error) {
		res, err = m.scripts.Acquire(ctx, keys, args)
		return err
	})
	switch {
	case err == nil && res.Acquired:
		m.addAcks(latch)
	case err == nil && grant != nil: // refused and sealed
		m.addAcks(latch)
	case err == nil: // refused: the call wrote no latch
	default:
		m.addAcks(acks...) // they may not have been deleted
		if mayHaveRun(err) {
			m.abandon(latch)
		}
	}
	return res, err
}

// release runs one release, retried after a lost reply under one latch so
// that a retry returns the first answer instead of releasing a second hold.
func (m *Mutex) release(ctx context.Context) (int64, error) {
	latch := m.newLatch()
	acks := m.takeAcks()
	keys := ReleaseKeys{Lock: m.keys.lock, Channel: m.keys.channel, Latch: latch, Acks: acks}
	args := ReleaseArgs{Owner: m.owner, LatchTTL: m.cfg.latchTTL(), Sharded: m.c.sharded}
	var left ReleaseReply
	err := m.retry(ctx, func(ctx context.Context) (err error) {
		left, err = m.scripts.Release(ctx, keys, args)
		return err
	})
	switch {
	case err == nil:
		m.addAcks(latch)
	case errors.Is(err, ErrNotHeld): // the call ran, wrote no latch
	default:
		m.addAcks(acks...)
	}
	return int64(left), err
}

// handoff is release for the last hold when the Client has an heir w
// waiting: the Handoff script gives the lock straight to w, and a retry
// after a lost reply returns the first answer, grant included (read back
// from w's latch). The verdict for w says whether w holds the lock now, or
// whether that is unknown (the call may have run). A release that finds
// the lock not held fails with ErrNotHeld, as release does.
func (m *Mutex) handoff(ctx context.Context, w *heir) (int64, verdict, error) {
	latch := m.newLatch()
	acks := m.takeAcks()
	h := w.m
	keys := HandoffKeys{Lock: m.keys.lock, Fence: m.keys.fence, Channel: m.keys.channel, Latch: latch, HeirLatch: w.latch, Acks: acks}
	args := HandoffArgs{Owner: m.owner, Heir: h.owner, HeirLease: h.cfg.leaseFor(), LatchTTL: m.cfg.latchTTL(),
		HeirLatchTTL: h.cfg.latchTTL(), FenceTTL: h.cfg.fenceTTL, Sharded: m.c.sharded}
	v := verdict{sent: time.Now()}
	var res HandoffResult
	err := m.retry(ctx, func(ctx context.Context) (err error) {
		res, err = m.scripts.Handoff(ctx, keys, args)
		return err
	})
	switch {
	case err == nil && !res.Held: // the call ran, wrote no latch
		return 0, v, ErrNotHeld
	case err == nil:
		v.granted, v.token = res.Token != 0, res.Token
		if !v.granted { // a grant is recorded in w's latch, not in this one
			m.addAcks(latch)
		}
		return res.Left, v, nil
	}
	m.addAcks(acks...)
	v.unknown = mayHaveRun(err)
	return 0, v, err
}

// abandon rolls back an acquire call whose outcome is unknown, in the
// background: if it ran, the hold it took is given back; if it has not run
// yet, its latch is marked so that it will do nothing when it arrives.
// Until it is done the Mutex's next Lock waits, so that it cannot count a
// hold that is about to be given back.
func (m *Mutex) abandon(latch string) {
	m.beginUndo()
	undo := func() {
		defer m.endUndo()
		ctx, cancel := context.WithTimeout(context.Background(), m.cfg.retryWindow)
		defer cancel()
		_ = m.retry(ctx, func(ctx context.Context) error {
			_, err := m.scripts.Abandon(ctx, AbandonKeys{Lock: m.keys.lock, Channel: m.keys.channel, Latch: latch},
				AbandonArgs{Owner: m.owner, LatchTTL: m.cfg.latchTTL(), Sharded: m.c.sharded})
			return err
		})
	}
	if !m.c.track() {
		undo() // closing: do it now rather than not at all
		return
	}
	go func() {
		defer m.c.wg.Done()
		undo()
	}()
}

// retry runs call until it succeeds, fails in a way a retry cannot fix, ctx
// ends, or the retry window (from the first send, on the monotonic clock)
// would be exceeded. Only scripts that are safe to repeat go through it:
// Acquire and Release under a latch, and the idempotent rest.
func (m *Mutex) retry(ctx context.Context, call func(context.Context) error) error {
	first := time.Now()
	backoff := retryBackoffMin
	for {
		err := call(ctx)
		if err == nil || ctx.Err() != nil || !retryable(err) {
			return err
		}
		sleep := backoff/2 + rand.N(backoff/2+1)
		if time.Since(first)+sleep > m.cfg.retryWindow {
			return err
		}
		t := time.NewTimer(sleep)
		select {
		case <-ctx.Done():
			t.Stop()
			return err
		case <-m.c.done:
			t.Stop()
			return err
		case <-t.C:
		}
		backoff = min(2*backoff, retryBackoffMax)
	}
}

// retryable reports whether err means the reply was lost (a connection
// error or a timeout below the caller's context) or the server did not run
// the script and asks to try later.
func retryable(err error) bool {
	// runtime.Transient is the one list of failures worth another try
	// (connection errors, LOADING, BUSY, TRYAGAIN, CLUSTERDOWN, ...); a
	// script that ran and raised an error would raise it again.
	var se *runtime.ScriptError
	return runtime.Transient(err) && !errors.As(err, &se)
}

// mayHaveRun reports whether a failed call may have run on the server:
// false for an error reply (the script did not run, or failed before it
// wrote anything: the scripts read before they write) and for a call never
// sent.
func mayHaveRun(err error) bool {
	var re *runtime.ReplyError
	return !errors.As(err, &re) && !errors.Is(err, runtime.ErrCrossSlot)
}

// beginUndo counts one more rollback the next Lock must wait for.
func (m *Mutex) beginUndo() {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.undo == 0 {
		m.undone = make(chan struct{})
	}
	m.undo++
}

// endUndo counts one rollback done.
func (m *Mutex) endUndo() {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.undo--; m.undo == 0 {
		close(m.undone)
	}
}

// waitUndo waits for the rollbacks in flight.
func (m *Mutex) waitUndo(ctx context.Context) error {
	m.mu.Lock()
	n, done := m.undo, m.undone
	m.mu.Unlock()
	if n == 0 {
		return nil
	}
	select {
	case <-done:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	case <-m.c.done:
		return ErrClosed
	}
}

// takeAcks returns the latches to delete with the next call.
func (m *Mutex) takeAcks() []string {
	m.mu.Lock()
	defer m.mu.Unlock()
	acks := m.acks
	m.acks = nil
	return acks
}

// addAcks remembers latches of calls whose replies arrived.
func (m *Mutex) addAcks(latches ...string) {
	if len(latches) == 0 {
		return
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	m.acks = append(m.acks, latches...)
	if n := len(m.acks); n > maxAcks {
		m.acks = append([]string(nil), m.acks[n-maxAcks:]...)
	}
}
