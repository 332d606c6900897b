package lock

import (
	"context"
	"errors"
	"time"

	"github.com/luagen/luagen/lock/internal/scripts"
	"github.com/luagen/luagen/runtime"
)

// retryPolicy spaces the retries of one script call whose reply was lost.
var retryPolicy = runtime.RetryPolicy{
	MinBackoff: 10 * time.Millisecond,
	MaxBackoff: 250 * time.Millisecond,
	Retryable:  retryable,
}

// tryAcquire runs attempt seq of a first acquire, retried after a lost
// reply: a retry that finds the owner holding the lock takes that hold as
// it is (the script's "held" branch), so it never counts a second one.
// queue puts the owner in the queue when refused. An attempt whose outcome
// is unknown is rolled back (abandon).
func (m *Mutex) tryAcquire(ctx context.Context, seq int64, queue bool) (scripts.AcquireResult, error) {
	keys, args := m.acquireCall(seq)
	if queue {
		args.QueueTTL = m.cfg.queueTTL()
	}
	res, err := m.runAcquire(ctx, keys, args)
	if err != nil && mayHaveRun(err) {
		m.abandon(seq)
	}
	return res, err
}

// acquireAgain is a reentrant acquire: it raises the hold count under a
// latch, so that a retry after a lost reply returns the first answer.
func (m *Mutex) acquireAgain(ctx context.Context) (scripts.AcquireResult, error) {
	keys, args := m.acquireCall(1)
	keys.Latch = []string{m.newLatch()}
	return m.runAcquire(ctx, keys, args)
}

// acquireCall returns the keys and arguments of acquire attempt seq, with
// no latch and no place in the queue.
func (m *Mutex) acquireCall(seq int64) (scripts.AcquireKeys, scripts.AcquireArgs) {
	keys := scripts.AcquireKeys{Lock: m.keys.Lock, Fence: m.keys.Fence, Queue: m.keys.Queue, Waits: m.keys.Waits, Tomb: m.tomb}
	args := scripts.AcquireArgs{Owner: m.owner, Attempt: seq, Lease: m.cfg.leaseFor(), FenceTTL: m.cfg.fenceTTL,
		GrantLease: m.cfg.grantLease(), LatchTTL: m.cfg.latchTTL()}
	return keys, args
}

// runAcquire runs the acquire script, retried after a lost reply.
func (m *Mutex) runAcquire(ctx context.Context, keys scripts.AcquireKeys, args scripts.AcquireArgs) (scripts.AcquireResult, error) {
	var res scripts.AcquireResult
	err := m.retry(ctx, func(ctx context.Context) (err error) {
		res, err = m.scripts.Acquire(ctx, keys, args)
		return err
	})
	return res, err
}

// release gives back one hold and returns the holds left. A release that
// leaves holds runs under a latch, so that a retry returns the first
// answer; the last one needs none: when a try whose reply was lost may
// have released it, a retry that finds the hold gone reports it released.
func (m *Mutex) release(ctx context.Context, last bool) (int64, error) {
	keys := scripts.ReleaseKeys{Lock: m.keys.Lock, Fence: m.keys.Fence, Queue: m.keys.Queue, Waits: m.keys.Waits, Wake: m.keys.Wake}
	if !last {
		keys.Latch = []string{m.newLatch()}
	}
	args := scripts.ReleaseArgs{Owner: m.owner, FenceTTL: m.cfg.fenceTTL, LatchTTL: m.cfg.latchTTL(), Sharded: m.c.sharded}
	var left scripts.ReleaseReply
	ran := false // a try may have run
	err := m.retry(ctx, func(ctx context.Context) (err error) {
		left, err = m.scripts.Release(ctx, keys, args)
		ran = ran || (err != nil && mayHaveRun(err))
		return err
	})
	if errors.Is(err, scripts.ErrNotHeld) {
		if ran && last {
			return 0, nil
		}
		return 0, ErrNotHeld
	}
	return int64(left), err
}

// abandon rolls back attempt seq and every earlier one, in the background:
// an attempt that arrives later does nothing, the owner leaves the queue,
// and a hold it took (or a handoff to it) is given back. Until it is done
// the Mutex's next Lock waits, so that it cannot count a hold that is
// about to be given back. It runs for at most the retry window, also when
// the Client is closing (Close waits for it).
func (m *Mutex) abandon(seq int64) {
	m.beginUndo()
	undo := func() {
		defer m.endUndo()
		_ = m.retry(context.Background(), func(ctx context.Context) error {
			_, err := m.scripts.Abandon(ctx,
				scripts.AbandonKeys{Lock: m.keys.Lock, Fence: m.keys.Fence, Queue: m.keys.Queue, Waits: m.keys.Waits, Wake: m.keys.Wake, Tomb: m.tomb},
				scripts.AbandonArgs{Owner: m.owner, Attempt: seq, TombTTL: m.cfg.latchTTL(), FenceTTL: m.cfg.fenceTTL, Sharded: m.c.sharded})
			return err
		})
	}
	if !m.c.track() {
		undo() // closed: do it now rather than not at all
		return
	}
	go func() {
		defer m.c.wg.Done()
		undo()
	}()
}

// retry runs call until it succeeds, fails in a way a retry cannot fix, ctx
// ends, or the retry window (from the first send, on the monotonic clock)
// is over: every try runs under a context that ends with the window, so a
// server that does not answer cannot hold a call longer. Only scripts that
// are safe to repeat go through it.
func (m *Mutex) retry(ctx context.Context, call func(context.Context) error) error {
	p := retryPolicy
	p.Window = m.cfg.retryWindow
	return runtime.Retry(ctx, p, call)
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
// wrote anything: the scripts read before they write), for a declared
// reply (NotHeld) and for a call never sent.
func mayHaveRun(err error) bool {
	var re *runtime.ReplyError
	return !errors.As(err, &re) && !errors.Is(err, runtime.ErrCrossSlot) && !errors.Is(err, scripts.ErrNotHeld)
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
	}
}
