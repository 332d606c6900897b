package lock

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/luagen/luagen/redistest"
	"github.com/luagen/luagen/runtime"
)

// afterExecutor runs scripts on the executor it wraps and calls after with
// each script's name once its reply is in, before the caller sees it.
type afterExecutor struct {
	runtime.Executor
	after func(script string)
}

func (e afterExecutor) EvalSha(ctx context.Context, s *runtime.Script, keys, args []string) (runtime.Value, error) {
	v, err := e.Executor.EvalSha(ctx, s, keys, args)
	if runtime.IsNoScript(err) {
		v, err = e.Executor.Eval(ctx, s, keys, args)
	}
	e.after(s.Name())
	return v, err
}

// A waiter whose wake subscription is new waits for it to be confirmed
// before its next attempt (TriggerSubscribed), so that a handoff published
// after that attempt is heard. A nudge (0 on the wake channel: some
// subscription of the Client was restored, it goes to every waiter of the
// Client) that comes meanwhile does not cut that wait short: it is taken
// after the settled attempt (TriggerNotified), as it always was.
func TestNudgeWhileSubscribingWaitsForTheSubscription(t *testing.T) {
	srv := redistest.Start(t)
	hc, err := NewClient(srv.Client(t))
	require.NoError(t, err)
	t.Cleanup(hc.Close)
	holder, err := New(hc, "nudge-settle")
	require.NoError(t, err)
	_, err = holder.Lock(context.Background())
	require.NoError(t, err)

	rc := srv.Client(t)
	var (
		m        *Mutex
		once     sync.Once
		mu       sync.Mutex
		attempts []Event
	)
	exec := afterExecutor{Executor: runtime.NewRueidisExecutor(rc), after: func(script string) {
		if script == "scripts.Acquire" {
			once.Do(func() { m.c.nudge() }) // after the first attempt, before its refusal is seen
		}
	}}
	c, err := NewClient(rc, WithExecutor(exec), WithHook(func(e Event) {
		if e.Kind == EventAttempt {
			mu.Lock()
			attempts = append(attempts, e)
			mu.Unlock()
		}
	}))
	require.NoError(t, err)
	t.Cleanup(c.Close)
	m, err = New(c, "nudge-settle")
	require.NoError(t, err)

	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	held := make(chan error, 1)
	go func() {
		_, err := m.Lock(ctx)
		held <- err
	}()
	require.Eventually(t, func() bool {
		mu.Lock()
		defer mu.Unlock()
		return len(attempts) >= 2
	}, 10*time.Second, time.Millisecond)
	require.NoError(t, holder.Unlock(context.Background()))
	require.NoError(t, <-held)
	require.NoError(t, m.Unlock(context.Background()))

	mu.Lock()
	defer mu.Unlock()
	assert.Equal(t, TriggerFirst, attempts[0].Trigger)
	assert.Equal(t, TriggerSubscribed, attempts[1].Trigger, "the second attempt waits for the new subscription: %v", attempts)
}
