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
//
// With WithReplicas, a hold too few replicas acknowledged, or an attempt
// whose WAIT had not answered when actx ended (TryLock's bound: Redis
// answers WAIT up to 1/hz after its timeout), is rolled back before
// tryAcquire returns, and the error is then a *ReplicaError (see
// confirmUndo).
func (m *Mutex) tryAcquire(ctx, actx context.Context, seq int64, queue bool, from time.Time) (res scripts.AcquireResult, sent time.Time, err error) {
	keys, args := m.acquireCall(seq)
	if queue {
		args.QueueTTL = m.cfg.queueTTL()
	}
	res, sent, err = m.runAcquire(actx, keys, args, max(m.cfg.retryWindow-time.Since(from), time.Millisecond))
	switch {
	case err == nil || !mayHaveRun(err):
	case m.unconfirmed(ctx, actx, err):
		err = m.confirmUndo(ctx, err, m.startRollback(true, m.abandonCall(seq)))
	default:
		m.abandon(seq)
	}
	return res, sent, err
}

// acquireAgain is a reentrant acquire: it raises the hold count under
// latch, so that a retry after a lost reply returns the first answer.
func (m *Mutex) acquireAgain(ctx context.Context, latch string) (scripts.AcquireResult, time.Time, error) {
	keys, args := m.acquireCall(1)
	keys.Latch = []string{latch}
	return m.runAcquire(ctx, keys, args, m.cfg.retryWindow)
}

// undoAgain gives back the extra hold of the reentrant acquire named by
// latch, whose outcome is unknown: it sends that acquire again (the latch
// makes it count at most once, whether the first send ran, runs later or
// never arrives) and releases the hold it counted. It reports whether it
// gave a hold back; false with a nil error when the owner held nothing
// any more.
func (m *Mutex) undoAgain(latch string) func(context.Context) (bool, error) {
	return func(ctx context.Context) (bool, error) {
		keys, args := m.acquireCall(1)
		keys.Latch = []string{latch}
		var res scripts.AcquireResult
		err := m.retry(ctx, func(ctx context.Context) (err error) {
			res, err = m.scripts.Acquire(ctx, keys, args) // no WAIT: ctx asks for none
			return err
		})
		if err != nil || !res.Acquired {
			return false, err
		}
		if _, err = m.release(ctx, false); errors.Is(err, ErrNotHeld) {
			return false, nil
		}
		return err == nil, err
	}
}

// unconfirmed reports whether err, the failure of an acquire that may have
// run, leaves a hold the replicas did not confirm: WAIT fell short or
// failed (a *ReplicaError), or had not answered when TryLock's bound
// (actx) passed, with the caller's ctx live.
func (m *Mutex) unconfirmed(ctx, actx context.Context, err error) bool {
	if m.cfg.replicas == 0 || ctx.Err() != nil || m.c.isClosed() {
		return false
	}
	var ra *ReplicaError
	return errors.As(err, &ra) || (errors.Is(err, context.DeadlineExceeded) && actx.Err() != nil)
}

// confirmUndo waits for the rollback done of an acquire that replicas did
// not confirm (see unconfirmed; err is its failure), so that nothing of
// it is held when the caller returns a *ReplicaError: it returns err's
// *ReplicaError, or a new one when WAIT had not answered but the rollback
// gave a hold back (the attempt had taken it; no acknowledgement came in
// time), or err when there was nothing to give back. It waits within ctx
// (the rollback is one round trip, retried within the retry window: also
// past TryLock's bound, which a *ReplicaError's promise outweighs); when
// the rollback got no answer the error matches ErrNoAnswer.
func (m *Mutex) confirmUndo(ctx context.Context, err error, done <-chan undone) error {
	var u undone
	select {
	case u = <-done:
	case <-ctx.Done():
		return ctx.Err()
	case <-m.c.done:
		return ErrClosed
	}
	var ra *ReplicaError
	switch {
	case u.err != nil:
		return fmt.Errorf("%w: the rollback of a hold the replicas did not acknowledge failed: %w", ErrNoAnswer, u.err)
	case errors.As(err, &ra):
		return ra
	case u.released:
		return &ReplicaError{Want: m.cfg.replicas, Timeout: m.cfg.replicaTimeout}
	}
	return err
}

// acquireCall returns the keys and arguments of acquire attempt seq, with
// no latch and no place in the queue.
func (m *Mutex) acquireCall(seq int64) (scripts.AcquireKeys, scripts.AcquireArgs) {
	keys := scripts.AcquireKeys{Lock: m.keys.Lock, Fence: m.keys.Fence, Queue: m.keys.Queue, Waits: m.keys.Waits, Tomb: m.tomb}
	args := scripts.AcquireArgs{Owner: m.owner, Lease: m.cfg.leaseFor(), LatchTTL: m.cfg.latchTTL(), FenceTTL: m.cfg.fenceTTL,
		Attempt: seq, GrantLease: m.cfg.grantLease(), Starve: m.cfg.starve()}
	return keys, args
}

// runAcquire runs the acquire script, retried after a lost reply within
// window, and returns when the try that got the reply was sent: the lease
// the reply reports began after that, so sent + its TTL is a safe end of
// the hold even when the reply came late (a retry, a stalled server).
//
// When ctx has a deadline (TryLock's wait, the caller's), runAcquire
// returns when it passes, or when the Client closes (ErrClosed), even if
// the executor does not: rueidis, for one, holds a call while it
// reconnects (up to its dial timeout, 5 s by default), and a call to a
// stalled server until its own deadline, whatever the call's ctx. The
// call then ends in the background, and the caller rolls the attempt back
// as for any unknown outcome. Without a deadline the call runs on the
// caller's goroutine (a goroutine per attempt would cost the uncontended
// Lock about a quarter of its allocations), bounded by the retry window.
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
	err := ErrClosed
	select {
	case r := <-ch:
		return r.res, r.sent, r.outcome()
	case <-ctx.Done():
		err = ctx.Err()
	case <-m.c.done:
	}
	select {
	case r := <-ch:
		return r.res, r.sent, r.outcome()
	default:
		cancel()
		return scripts.AcquireResult{}, time.Time{}, err
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
	m.startRollback(true, m.abandonCall(seq))
}

// abandonCall is the rollback of attempt seq: the Abandon script, which
// reports whether it gave back a hold of the owner.
func (m *Mutex) abandonCall(seq int64) func(context.Context) (bool, error) {
	return func(ctx context.Context) (released bool, err error) {
		err = m.retry(ctx, func(ctx context.Context) (err error) {
			released, err = m.scripts.Abandon(ctx,
				scripts.AbandonKeys{Lock: m.keys.Lock, Fence: m.keys.Fence, Queue: m.keys.Queue, Waits: m.keys.Waits, Wake: m.keys.Wake, Tomb: m.tomb},
				scripts.AbandonArgs{Owner: m.owner, Sharded: m.c.sharded, TombTTL: m.cfg.latchTTL(), FenceTTL: m.cfg.fenceTTL, Attempt: seq})
			return err
		})
		return released, err
	}
}

// undone is what a rollback found: whether it gave back a hold the server
// counted, or why it did not get through.
type undone struct {
	released bool
	err      error
}

// startRollback counts a rollback (beginUndo) and runs it (run, retried
// within the retry window), and delivers what it found on the channel it
// returns (buffered) once it is done. inAcquire says the caller is an
// acquire, counted among the Client's goroutines: the rollback then runs
// in the background even once Close has begun (Close waits for it), so
// that Close ends the acquire at once; elsewhere a closed Client runs it
// on the caller's goroutine.
func (m *Mutex) startRollback(inAcquire bool, run func(context.Context) (bool, error)) <-chan undone {
	m.beginUndo()
	return m.runRollback(inAcquire, run)
}

// runRollback is startRollback for a rollback counted already.
func (m *Mutex) runRollback(inAcquire bool, run func(context.Context) (bool, error)) <-chan undone {
	done := make(chan undone, 1)
	undo := func() {
		defer m.endUndo()
		released, err := run(context.Background())
		done <- undone{released, err}
	}
	if !m.c.track() {
		if !inAcquire {
			undo() // closed: do it now rather than not at all
			return done
		}
		m.c.wg.Add(1) // the acquire's own count keeps Close waiting meanwhile
	}
	go func() {
		defer m.c.wg.Done()
		undo()
	}()
	return done
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
	case <-m.c.done:
		return ErrClosed
	}
}
