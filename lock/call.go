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
		err := m.retry(ctx, 0, func(ctx context.Context) (err error) {
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
	err := m.retry(ctx, 0, func(ctx context.Context) (err error) {
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
	m.rollback(true, false, m.abandonCall(seq))
}

// abandonCall is the rollback of attempt seq: the Abandon script, which
// reports whether it gave back a hold of the owner.
func (m *Mutex) abandonCall(seq int64) func(context.Context) (bool, error) {
	return func(ctx context.Context) (released bool, err error) {
		err = m.retry(ctx, 0, func(ctx context.Context) (err error) {
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

// rollback runs run, a rollback retried within the retry window, and
// delivers what it found on the channel it returns (buffered). Until it is
// done the Mutex's next Lock waits for it (waitUndo), so that it cannot
// count a hold that is about to be given back; counted says the caller
// counted it already (giveUpLocked). inAcquire says the caller is an
// acquire, counted among the Client's goroutines: the rollback then runs
// in the background even once Close has begun (Close waits for it), so
// that Close ends the acquire at once; elsewhere a closed Client runs it
// on the caller's goroutine.
func (m *Mutex) rollback(inAcquire, counted bool, run func(context.Context) (bool, error)) <-chan undone {
	if !counted {
		m.mu.Lock()
		m.beginUndoLocked()
		m.mu.Unlock()
	}
	done := make(chan undone, 1)
	undo := func() {
		released, err := run(context.Background())
		m.mu.Lock()
		if m.undo--; m.undo == 0 {
			close(m.undone)
		}
		m.mu.Unlock()
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

// retry runs call until it succeeds, fails in a way a retry cannot fix,
// ctx ends, or window (0: the retry window) is over, counted from the
// first send on the monotonic clock: every try runs under a context that
// ends with the window, so a server that does not answer cannot hold a
// call longer. When the window ends a try in flight, the error is the
// last transport error of an earlier try, if any, rather than the
// deadline: it says why the server gave no answer. Only scripts that are
// safe to repeat go through it.
func (m *Mutex) retry(ctx context.Context, window time.Duration, call func(context.Context) error) error {
	p := retryPolicy
	if p.Window = window; window == 0 {
		p.Window = m.cfg.retryWindow
	}
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
	// A hold whose WAIT failed is asked for again (see Mutex.send); one
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

// beginUndoLocked counts one more rollback the next Lock must wait for;
// m.mu is held.
func (m *Mutex) beginUndoLocked() {
	if m.undo == 0 {
		m.undone = make(chan struct{})
	}
	m.undo++
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
