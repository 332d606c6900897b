package runtime_test

import (
	"context"
	"errors"
	"io"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/redis/rueidis"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/luagen/luagen/internal/exectest"
	"github.com/luagen/luagen/redistest"
	"github.com/luagen/luagen/runtime"
	"github.com/luagen/luagen/runtime/goredis"
)

// flakyExecutor fails EvalSha with errs[i] on call i, then answers 1.
type flakyExecutor struct {
	errs  []error
	calls int
}

func (f *flakyExecutor) EvalSha(context.Context, *runtime.Script, []string, []string) (runtime.Value, error) {
	f.calls++
	if f.calls <= len(f.errs) {
		return runtime.Value{}, f.errs[f.calls-1]
	}
	return runtime.IntValue(1), nil
}

func (f *flakyExecutor) Eval(ctx context.Context, s *runtime.Script, k, a []string) (runtime.Value, error) {
	return f.EvalSha(ctx, s, k, a)
}

func (f *flakyExecutor) Load(context.Context, *runtime.Script) error { return nil }

func idempotent(body string) *runtime.Script {
	return runtime.NewScript(runtime.ScriptSpec{Name: "t.I", File: "i.lua", Body: body, Idempotent: true,
		Errors: []*runtime.CodeError{errOut}})
}

func TestIsTransient(t *testing.T) {
	for err, want := range map[error]bool{
		io.EOF: true,
		errors.New("dial tcp: connection refused"):                                          true,
		&runtime.ReplyError{Msg: "LOADING Redis is loading the dataset in memory"}:          true,
		&runtime.ReplyError{Msg: "BUSY Redis is busy running a script."}:                    true,
		&runtime.ReplyError{Msg: "TRYAGAIN Multiple keys request during rehashing"}:         true,
		&runtime.ReplyError{Msg: "CLUSTERDOWN The cluster is down"}:                         true,
		&runtime.ReplyError{Msg: "MASTERDOWN Link with MASTER is down"}:                     true,
		&runtime.ReplyError{Msg: "READONLY You can't write against a read only replica."}:   true,
		&runtime.ReplyError{Msg: "ERR LOADING Redis is loading"}:                            true,
		&runtime.ReplyError{Msg: "OOM command not allowed when used memory > 'maxmemory'."}: false,
		&runtime.ReplyError{Msg: "WRONGTYPE Operation against a key"}:                       false,
		&runtime.ReplyError{Msg: "NOSCRIPT No matching script"}:                             false,
		rueidis.ErrClosing:                   false,
		runtime.ErrClientClosed:              false,
		context.Canceled:                     false,
		context.DeadlineExceeded:             false,
		errOut:                               false,
		&runtime.CrossSlotError{Script: "x"}: false,
	} {
		assert.Equal(t, want, runtime.IsTransient(err), "%v", err)
	}
	assert.False(t, runtime.IsTransient(nil))
}

func TestIdempotentScriptIsRetriedAfterTransientFailures(t *testing.T) {
	f := &flakyExecutor{errs: []error{io.EOF, &runtime.ReplyError{Msg: "LOADING Redis is loading"}, errors.New("connection reset")}}
	v, err := idempotent("return 1").Exec(context.Background(), f, []string{"k"}, nil)
	require.NoError(t, err)
	assert.Equal(t, int64(1), v.Int)
	assert.Equal(t, 4, f.calls, "three failures, then the answer")
}

func TestNonIdempotentScriptIsNeverRetried(t *testing.T) {
	f := &flakyExecutor{errs: []error{io.EOF}}
	_, err := script("return 1").Exec(context.Background(), f, nil, nil)
	assert.Same(t, io.EOF, err, "the connection error is returned as it is")
	assert.Equal(t, 1, f.calls)
}

func TestIdempotentRetryStopsAtPermanentErrors(t *testing.T) {
	f := &flakyExecutor{errs: []error{io.EOF, &runtime.ReplyError{Msg: "WRONGTYPE Operation against a key"}}}
	_, err := idempotent("return 1").Exec(context.Background(), f, nil, nil)
	var re *runtime.ReplyError
	require.ErrorAs(t, err, &re)
	assert.Equal(t, "WRONGTYPE Operation against a key", re.Msg)
	assert.Equal(t, 2, f.calls)
}

func TestIdempotentRetryIsBounded(t *testing.T) {
	errs := make([]error, 100)
	for i := range errs {
		errs[i] = io.EOF
	}
	f := &flakyExecutor{errs: errs}
	start := time.Now()
	_, err := idempotent("return 1").Exec(context.Background(), f, nil, nil)
	assert.Same(t, io.EOF, err, "the last failure is returned")
	assert.Equal(t, runtime.RetryAttempts, f.calls)
	// 9 waits of RetryMinBackoff·2ⁿ⁻¹ capped at RetryMaxBackoff, each at
	// least half of that: at least 1.065 s (timers never fire early, so a
	// slow machine only adds to it). The upper bound, 2.13 s, is checked on
	// the schedule itself (TestBackoffBounds), not on the clock.
	assert.GreaterOrEqual(t, time.Since(start), 1065*time.Millisecond)
}

func TestIdempotentRetryStopsWithContext(t *testing.T) {
	errs := make([]error, 100)
	for i := range errs {
		errs[i] = io.EOF
	}
	f := &flakyExecutor{errs: errs}
	// The waits add up to at least 1.065 s, so the context ends before the
	// last try however slow the machine is; that a wait itself ends with
	// the context is TestSleepEndsWithContext's job.
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	_, err := idempotent("return 1").Exec(ctx, f, nil, nil)
	assert.Same(t, io.EOF, err)
	assert.Less(t, f.calls, runtime.RetryAttempts)
}

func TestIdempotentRetryKeepsDeclaredOutcomes(t *testing.T) {
	f := &flakyExecutor{errs: []error{io.EOF}}
	s := runtime.NewScript(runtime.ScriptSpec{Name: "t.I", File: "i.lua", Body: "return 1", Idempotent: true,
		Errors: []*runtime.CodeError{runtime.NewCodeError("t.I", "One", "1", "")}})
	_, err := s.Exec(context.Background(), f, nil, nil)
	var ce *runtime.CodeError
	require.ErrorAs(t, err, &ce, "the answer after a retry is classified like any other")
	assert.Equal(t, "One", ce.Name())
	assert.True(t, s.Idempotent())
	assert.False(t, script("return 1").Idempotent())
}

// A closed client never reopens, so an idempotent script is not retried
// against it: one try, the client's "closed" error back at once.
func TestClosedClientIsNotRetried(t *testing.T) {
	exectest.Run(t, func(t *testing.T, k exectest.Kind) {
		srv := redistest.Start(t)
		e := k.Single(t, srv)
		var closed error
		switch e := e.(type) {
		case *runtime.RueidisExecutor:
			e.Client().Close()
			closed = rueidis.ErrClosing
		case *goredis.Executor:
			require.NoError(t, e.Client().Close())
			closed = redis.ErrClosed
		}
		counting := &countingExecutor{Executor: e}
		_, err := idempotent("return 1").Exec(context.Background(), counting, []string{"k"}, nil)
		require.ErrorIs(t, err, closed)
		assert.False(t, runtime.IsTransient(err))
		assert.Equal(t, 1, counting.calls)
	})
}

type countingExecutor struct {
	runtime.Executor
	calls int
}

func (c *countingExecutor) EvalSha(ctx context.Context, s *runtime.Script, keys, args []string) (runtime.Value, error) {
	c.calls++
	return c.Executor.EvalSha(ctx, s, keys, args)
}
