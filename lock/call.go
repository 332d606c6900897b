package lock

import (
	"context"
	"errors"
	"fmt"
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
// queue puts the owner in the queue when refused. sent is when the try
// that got the reply was sent. An attempt whose outcome is unknown is
// rolled back (abandon).
//
// The retry window counts from from (a first attempt's from when its call
// got its turn on the Mutex, so that a wait for an earlier rollback is
// part of it).
func (m *Mutex) tryAcquire(ctx context.Context, seq int64, queue bool, from time.Time) (res scripts.AcquireResult, sent time.Time, err error) {
	keys, args := m.acquireCall(seq)
	if queue {
		args.QueueTTL = m.cfg.queueTTL()
	}
	res, sent, err = m.runAcquire(ctx, keys, args, max(m.cfg.retryWindow-time.Since(from), time.Millisecond))
	if err != nil && mayHaveRun(err) {
		m.abandon(seq)
	}
	return res, sent, err
}

// acquireAgain is a reentrant acquire: it raises the hold count under a
// latch, so that a retry after a lost reply returns the first answer.
func (m *Mutex) acquireAgain(ctx context.Context) (scripts.AcquireResult, time.Time, error) {
	keys, args := m.acquireCall(1)
	keys.Latch = []string{m.newLatch()}
	return m.runAcquire(ctx, keys, args, m.cfg.retryWindow)
}

// acquireCall returns the keys and arguments of acquire attempt seq, with
// no latch and no place in the queue.
func (m *Mutex) acquireCall(seq int64) (scripts.AcquireKeys, scripts.AcquireArgs) {
	keys := scripts.AcquireKeys{Lock: m.keys.Lock, Fence: m.keys.Fence, Queue: m.keys.Queue, Waits: m.keys.Waits, Tomb: m.tomb}
	args := scripts.AcquireArgs{Owner: m.owner, Lease: m.cfg.leaseFor(), LatchTTL: m.cfg.latchTTL(), FenceTTL: m.cfg.fenceTTL,
		Attempt: seq, GrantLease: m.cfg.grantLease()}
	return keys, args
}

// runAcquire runs the acquire script, retried after a lost reply within
// window, and returns when the try that got the reply was sent: the lease
// the reply reports began after that, so sent + its TTL is a safe end of
// the hold even when the reply came late (a retry, a stalled server).
//
// When ctx has a deadline (TryLock's wait, the caller's), runAcquire
// returns when it passes even if the executor does not: rueidis, for one,
// holds a call while it reconnects (up to its dial timeout, 5 s by
// default), whatever the call's ctx. The call then ends in the background,
// and the caller rolls the attempt back as for any unknown outcome.
func (m *Mutex) runAcquire(ctx context.Context, keys scripts.AcquireKeys, args scripts.AcquireArgs, window time.Duration) (scripts.AcquireResult, time.Time, error) {
	if _, ok := ctx.Deadline(); !ok {
		r := m.callAcquire(ctx, keys, args, window)
		return r.res, r.sent, r.outcome()
	}
	// The call itself may outlive ctx, so that an answer that came in
	// time but found this goroutine not yet running again (a GC pause, a
	// busy or throttled host) still counts; it is cancelled once the
	// caller stops waiting.
	cctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	ch := make(chan acquireReply, 1)
	go func() {
		defer cancel()
		ch <- m.callAcquire(cctx, keys, args, window)
	}()
	select {
	case r := <-ch:
		return r.res, r.sent, r.outcome()
	case <-ctx.Done():
	}
	select {
	case r := <-ch:
		return r.res, r.sent, r.outcome()
	default:
		cancel()
		return scripts.AcquireResult{}, time.Time{}, ctx.Err()
	}
}

// callAcquire is runAcquire's call, on the caller's goroutine or not.
//
// With WithReplicas each try is followed by WAIT, which counts only when
// the try acquired (a refused one's WAIT is not looked at). A first
// acquire whose WAIT failed (the node was demoted: a MOVED or a Sentinel
// switch sent the script to the new primary, WAIT to the old one) is
// tried again within the window: the same attempt finds the hold its
// earlier try took, writes its lease anew, and the WAIT after it covers
// the hold. A reentrant one is not (its retry may replay its latch,
// writing nothing); when its answer came from a retry, confirm asks the
// replicas after a write of its own.
func (m *Mutex) callAcquire(ctx context.Context, keys scripts.AcquireKeys, args scripts.AcquireArgs, window time.Duration) (r acquireReply) {
	reentrant, tries := len(keys.Latch) > 0, 0
	r.err = m.retryWithin(ctx, window, func(ctx context.Context) (err error) {
		tries++
		r.sent = time.Now()
		cctx, w := m.askAcks(ctx)
		r.res, err = m.scripts.Acquire(cctx, keys, args)
		r.short = nil
		if err == nil && r.res.Acquired {
			if r.short = m.short(w); r.short != nil && r.short.Err != nil && !reentrant {
				return r.short
			}
		}
		return err
	})
	if reentrant && tries > 1 && r.err == nil && r.res.Acquired && r.short == nil && m.cfg.replicas > 0 {
		r.short = m.confirm(ctx)
	}
	return r
}

// acquireReply is the outcome of runAcquire's call.
type acquireReply struct {
	res   scripts.AcquireResult
	sent  time.Time
	err   error
	short *ReplicaError // acquired, but fewer replicas acknowledged it than WithReplicas asks
}

// outcome is the call's error: a hold too few replicas acknowledged is
// one (the caller rolls it back).
func (r *acquireReply) outcome() error {
	if r.err == nil && r.short != nil {
		return r.short
	}
	return r.err
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
	args := scripts.ReleaseArgs{Owner: m.owner, Sharded: m.c.sharded, LatchTTL: m.cfg.latchTTL(), FenceTTL: m.cfg.fenceTTL}
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
	m.startRollback(seq, nil)
}

// startRollback runs a rollback counted by beginUndo, and tells report
// (when not nil), once it is done, whether it gave back a hold the server
// counted, or why it did not get through.
func (m *Mutex) startRollback(seq int64, report func(released bool, err error)) {
	undo := func() {
		defer m.endUndo()
		var released bool
		err := m.retry(context.Background(), func(ctx context.Context) (err error) {
			released, err = m.scripts.Abandon(ctx,
				scripts.AbandonKeys{Lock: m.keys.Lock, Fence: m.keys.Fence, Queue: m.keys.Queue, Waits: m.keys.Waits, Wake: m.keys.Wake, Tomb: m.tomb},
				scripts.AbandonArgs{Owner: m.owner, Sharded: m.c.sharded, TombTTL: m.cfg.latchTTL(), FenceTTL: m.cfg.fenceTTL, Attempt: seq})
			return err
		})
		if report != nil {
			report(released, err)
		}
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
	return m.retryWithin(ctx, m.cfg.retryWindow, call)
}

// retryWithin is retry with a window of its own. When the window ends a
// try in flight, the error is the last transport error of an earlier try,
// if any, rather than the deadline: it says why the server gave no answer.
func (m *Mutex) retryWithin(ctx context.Context, window time.Duration, call func(context.Context) error) error {
	p := retryPolicy
	p.Window = window
	var last error // the last transport error of a try
	err := runtime.Retry(ctx, p, func(ctx context.Context) error {
		err := call(ctx)
		switch {
		case err == nil, errors.Is(err, context.Canceled):
		case !errors.Is(err, context.DeadlineExceeded):
			last = err
		case ctx.Err() == nil:
			err = &lostConnection{err}
			last = err
		}
		return err
	})
	if last != nil && errors.Is(err, context.DeadlineExceeded) {
		return last
	}
	return err
}

// lostConnection is a try that failed with a deadline that was not its
// own: another call's deadline made rueidis close the connection both
// were on (it does so for a call in its synchronous mode). The reply is
// lost; another try may get one, so it is retried like any connection
// error (runtime.IsTransient counts a deadline as final, rightly for the
// caller's own).
type lostConnection struct{ err error }

func (e *lostConnection) Error() string {
	return "connection closed under the call by another call's deadline (" + e.err.Error() + ")"
}

// retryable reports whether err means the reply was lost (a connection
// error or a timeout below the caller's context) or the server did not run
// the script and asks to try later.
func retryable(err error) bool {
	// A hold whose WAIT failed is asked for again (see callAcquire); one
	// that too few replicas acknowledged is an answer.
	var ra *ReplicaError
	if errors.As(err, &ra) {
		return ra.Err != nil && !errors.Is(ra.Err, ErrLost)
	}
	// runtime.IsTransient is the one list of failures worth another try
	// (connection errors, LOADING, BUSY, TRYAGAIN, CLUSTERDOWN, ...); a
	// script that ran and raised an error would raise it again.
	var se *runtime.ScriptError
	return runtime.IsTransient(err) && !errors.As(err, &se)
}

// unanswered reports whether err means the server gave no answer in time
// (a connection error, or a try cut off by the retry window or a bounded
// wait) rather than an answer (an error reply, a declared reply) or a
// verdict of the client.
func unanswered(err error) bool {
	var re *runtime.ReplyError
	return errors.Is(err, context.DeadlineExceeded) || (retryable(err) && !errors.As(err, &re))
}

// mayHaveRun reports whether a failed call may have run on the server:
// false for an error reply (the script did not run, or failed before it
// wrote anything: the scripts read before they write), for a declared
// reply (NotHeld) and for a call never sent.
func mayHaveRun(err error) bool {
	var ra *ReplicaError
	if errors.As(err, &ra) { // it ran: the hold is on the primary
		return true
	}
	var re *runtime.ReplyError
	return !errors.As(err, &re) && !errors.Is(err, runtime.ErrCrossSlot) && !errors.Is(err, scripts.ErrNotHeld)
}

// beginUndo counts one more rollback the next Lock must wait for.
func (m *Mutex) beginUndo() {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.beginUndoLocked()
}

// beginUndoLocked is beginUndo with m.mu held.
func (m *Mutex) beginUndoLocked() {
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

// waitUndo waits for the rollbacks in flight, at most the retry window
// from from: a rollback that gets no answer in that time means the server
// is not answering (ErrNoAnswer).
func (m *Mutex) waitUndo(ctx context.Context, from time.Time) error {
	m.mu.Lock()
	n, done := m.undo, m.undone
	m.mu.Unlock()
	if n == 0 {
		return nil
	}
	t := time.NewTimer(m.cfg.retryWindow - time.Since(from))
	defer t.Stop()
	select {
	case <-done:
		return nil
	case <-t.C:
		return fmt.Errorf("%w: the rollback of an earlier attempt is still in flight", ErrNoAnswer)
	case <-ctx.Done():
		return ctx.Err()
	}
}
