package lock_test

// Behaviours of the acquire path that its rewrite into acquire.go (3b0d21c)
// must keep, found by comparing it with the functions it replaced.

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/luagen/luagen/lock"
	"github.com/luagen/luagen/redistest"
	"github.com/luagen/luagen/runtime"
)

// A Lock whose attempt's reply comes late (less than half the lease left
// on this process' clock) asks the server for the hold's PTTL once more.
// When Close has begun meanwhile, that question is not sent (a closed
// Client sends nothing but rollbacks): Lock fails with ErrClosed and the
// attempt is rolled back, as it always did (Mutex.inspect refuses on a
// closed Client). It must not return a hold on a closed Client.
func TestLateAcquireReplyAfterCloseIsErrClosed(t *testing.T) {
	srv := redistest.Start(t)
	rc := srv.Client(t)
	fx := newFaultExecutor(rc)
	const lease = 400 * time.Millisecond
	c, err := lock.NewClient(rc, lock.WithExecutor(fx), lock.WithWatchdogLease(lease))
	require.NoError(t, err)
	defer c.Close()
	m := newMutex(t, c, "late-after-close")

	reached, open := fx.hold("scripts.Acquire", gateAfter)
	type result struct {
		held context.Context
		err  error
	}
	done := make(chan result, 1)
	go func() {
		held, err := m.Lock(context.Background()) // no deadline: the call runs on this goroutine
		done <- result{held, err}
	}()
	<-reached // the attempt ran on the server and took the lock; its reply is held
	closed := make(chan struct{})
	go func() { c.Close(); close(closed) }() // waits for the Lock
	for {                                    // Close has begun once New refuses
		if _, err := lock.New(c, "probe"); errors.Is(err, lock.ErrClosed) {
			break
		}
		time.Sleep(time.Millisecond)
	}
	time.Sleep(lease * 6 / 10) // the reply is late: under half the lease left
	open()
	r := <-done
	<-closed

	require.ErrorIs(t, r.err, lock.ErrClosed)
	assert.Error(t, r.held.Err(), "no hold")
	assert.Zero(t, fx.count("scripts.Inspect"), "no Inspect sent after Close")
	assert.Equal(t, "0", srv.Do(t, "EXISTS", "lock:{late-after-close}"), "the attempt was rolled back")
}

// A TryLock one of whose attempts got the server's answer (another owner
// held the lock) and a later attempt took the lock, but too late to count
// it without asking the server for its PTTL: when that question gets no
// answer (the retry window runs out), the server stopped answering, which
// is ErrNoAnswer, not a busy lock, even though TryLock's wait is over by
// then. Only the attempt's own call ending past the wait (TryLock's bound)
// is TryLock's timeout.
func TestTryLockLateHoldWhosePTTLGetsNoAnswerIsErrNoAnswer(t *testing.T) {
	srv := redistest.Start(t)
	holder := newMutex(t, newClient(t, srv.Client(t)), "late-pttl")
	_, err := holder.Lock(context.Background())
	require.NoError(t, err)

	rc := srv.Client(t)
	fx := newFaultExecutor(rc)
	type gated struct {
		reached <-chan struct{}
		open    func()
	}
	gates := make(chan gated, 1)
	var ev events
	refused := 0
	hook := func(e lock.Event) {
		ev.hook(e)
		if e.Kind == lock.EventRefused {
			if refused++; refused == 1 { // gate the next attempt before it is sent
				reached, open := fx.hold("scripts.Acquire", gateBefore)
				gates <- gated{reached, open}
			}
		}
	}
	const lease = time.Second
	m := newMutex(t, newClient(t, rc, lock.WithExecutor(fx), lock.WithWatchdogLease(lease),
		lock.WithRetryWindow(2*time.Second),
		lock.WithWaitStrategy(lock.WaitStrategy{PollOnly: true, Grace: 20 * time.Second}),
		lock.WithHook(hook)), "late-pttl")

	type result struct {
		ok  bool
		err error
	}
	done := make(chan result, 1)
	go func() {
		_, ok, err := m.TryLock(context.Background(), 300*time.Millisecond)
		done <- result{ok, err}
	}()
	g := <-gates
	<-g.reached // the second attempt, not sent yet
	require.NoError(t, holder.Unlock(context.Background()))
	fx.inject("scripts.Inspect", stallFirst) // the PTTL question gets no answer
	time.Sleep(lease * 6 / 10)               // the second attempt's reply is late
	g.open()
	r := <-done

	assert.False(t, r.ok)
	assert.ErrorIs(t, r.err, lock.ErrNoAnswer, "no answer to the PTTL question: not a busy lock")
	assert.Equal(t, 1, fx.count("scripts.Inspect"))
	assert.Len(t, ev.of(lock.EventTimedOut), 0)
	assert.Len(t, ev.of(lock.EventAcquireFailed), 1)
}

// stalledWait is a runtime.ReplicaWaiter whose WAIT never answers: it runs
// the script on the executor it wraps, then reports WAIT failed with the
// call's context error once that context ends.
type stalledWait struct{ runtime.Executor }

func (e stalledWait) EvalShaWait(ctx context.Context, s *runtime.Script, keys, args []string, w *runtime.Wait) (runtime.Value, error) {
	v, err := e.EvalSha(ctx, s, keys, args)
	if runtime.IsNoScript(err) {
		v, err = e.Eval(ctx, s, keys, args)
	}
	if err == nil {
		<-ctx.Done()
		w.Err = ctx.Err()
	}
	return v, err
}

func (e stalledWait) EvalWait(ctx context.Context, s *runtime.Script, keys, args []string, w *runtime.Wait) (runtime.Value, error) {
	v, err := e.Eval(ctx, s, keys, args)
	if err == nil {
		<-ctx.Done()
		w.Err = ctx.Err()
	}
	return v, err
}

// A TryLock whose only attempt took the lock but whose WAIT got no answer
// until the attempt's retry window ran out, past the wait (its grace not
// yet over): the attempt's call ended with a deadline past the wait, which
// is TryLock's bound, and no attempt got an answer, so TryLock reports
// ErrNoAnswer (the attempt rolled back), as before 3b0d21c, not the
// *ReplicaError its WAIT's failure was wrapped in.
func TestTryLockWaitStalledPastTheWaitIsErrNoAnswer(t *testing.T) {
	srv := redistest.Start(t)
	exec := stalledWait{runtime.NewRueidisExecutor(srv.Client(t))}
	m := newMutex(t, newExecClient(t, exec), "stalled-wait",
		lock.WithReplicas(1, 10*time.Millisecond),
		lock.WithRetryWindow(400*time.Millisecond),
		lock.WithWaitStrategy(lock.WaitStrategy{Grace: 10 * time.Second}))

	_, ok, err := m.TryLock(context.Background(), 100*time.Millisecond)
	assert.False(t, ok)
	assert.ErrorIs(t, err, lock.ErrNoAnswer)
	var ra *lock.ReplicaError
	assert.False(t, errors.As(err, &ra), "not a *ReplicaError: %v", err)
	assert.Equal(t, "0", srv.Do(t, "EXISTS", "lock:{stalled-wait}"), "the attempt was rolled back")
}
