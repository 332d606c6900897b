package lock

import (
	"context"
	"errors"
	"math/rand/v2"
	"time"

	"github.com/redis/rueidis"

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
// latch so that a retry never counts a second hold.
func (m *Mutex) tryAcquire(ctx context.Context) (AcquireResult, error) {
	latch := m.newLatch()
	acks := m.takeAcks()
	keys := AcquireKeys{Lock: m.keys.lock, Fence: m.keys.fence, Latch: latch, Acks: acks}
	args := AcquireArgs{Owner: m.owner, Lease: m.cfg.leaseFor(), LatchTTL: m.cfg.latchTTL(), FenceTTL: m.cfg.fenceTTL}
	var res AcquireResult
	err := m.retry(ctx, func(ctx context.Context) (err error) {
		res, err = m.scripts.Acquire(ctx, keys, args)
		return err
	})
	switch {
	case err == nil && res.Acquired:
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

// abandon rolls back an acquire call whose outcome is unknown, in the
// background: if it ran, the hold it took is given back; if it has not run
// yet, its latch is marked so that it will do nothing when it arrives.
func (m *Mutex) abandon(latch string) {
	undo := func() {
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
	var se *runtime.ScriptError
	var re *runtime.ReplyError
	switch {
	case errors.As(err, &se):
		return false
	case errors.As(err, &re):
		switch re.Code() {
		case "LOADING", "BUSY", "TRYAGAIN", "CLUSTERDOWN", "MASTERDOWN", "READONLY":
			return true
		}
		return false
	case errors.Is(err, runtime.ErrCrossSlot), errors.Is(err, runtime.ErrUnexpectedReply),
		errors.Is(err, rueidis.ErrClosing):
		return false
	}
	var ce *runtime.CodeError
	return !errors.As(err, &ce)
}

// mayHaveRun reports whether a failed call may have run on the server:
// false for an error reply (the script did not run, or failed before it
// wrote anything: the scripts read before they write) and for a call never
// sent.
func mayHaveRun(err error) bool {
	var re *runtime.ReplyError
	return !errors.As(err, &re) && !errors.Is(err, runtime.ErrCrossSlot)
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
