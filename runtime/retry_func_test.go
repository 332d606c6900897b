package runtime_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/luagen/luagen/runtime"
)

// Unit tests of runtime.Retry itself, with waits of microseconds (or ones
// that a context must end): what is asserted is how many tries run and
// which error comes back, never how long anything took. The schedule of
// the waits is checked arithmetically in TestRetryPolicyBackoffs.

// fast is a policy whose waits are a few µs.
var fast = runtime.RetryPolicy{MinBackoff: time.Microsecond, MaxBackoff: 4 * time.Microsecond}

// failing returns a call that fails with the errors of errs in turn, then
// succeeds, and counts its tries.
func failing(errs ...error) (func(context.Context) error, *int) {
	n := new(int)
	return func(context.Context) error {
		*n++
		if *n <= len(errs) {
			return errs[*n-1]
		}
		return nil
	}, n
}

func TestRetryUntilSuccess(t *testing.T) {
	call, n := failing(io.EOF, &runtime.ReplyError{Msg: "LOADING Redis is loading"}, errors.New("connection reset"))
	require.NoError(t, runtime.Retry(context.Background(), fast, call))
	assert.Equal(t, 4, *n, "three transient failures, then success")

	call, n = failing()
	require.NoError(t, runtime.Retry(context.Background(), fast, call))
	assert.Equal(t, 1, *n, "a success is not repeated")
}

func TestRetryAttemptsReturnTheLastError(t *testing.T) {
	errs := make([]error, 10)
	for i := range errs {
		errs[i] = fmt.Errorf("try %d: %w", i+1, io.ErrUnexpectedEOF)
	}
	p := fast
	p.Attempts = 4
	call, n := failing(errs...)
	err := runtime.Retry(context.Background(), p, call)
	assert.Same(t, errs[3], err, "the fourth and last try's error")
	assert.Equal(t, 4, *n)
}

func TestRetryStopsAtErrorsNotWorthRetrying(t *testing.T) {
	// The default is runtime.IsTransient: an error reply other than the
	// transient codes, a script's own error and ctx's errors end it.
	for _, stop := range []error{
		&runtime.ReplyError{Msg: "WRONGTYPE Operation against a key"},
		&runtime.ScriptError{Script: "t.S", Err: &runtime.ReplyError{Msg: "ERR boom"}},
		runtime.ErrClientClosed,
		context.Canceled,
	} {
		call, n := failing(io.EOF, stop, nil)
		err := runtime.Retry(context.Background(), fast, call)
		assert.Same(t, stop, err)
		assert.Equal(t, 2, *n, "%v: one retry after io.EOF, none after it", stop)
	}

	// A policy's own Retryable replaces IsTransient.
	errAgain, errFinal := errors.New("again"), errors.New("final")
	p := fast
	p.Retryable = func(err error) bool { return err == errAgain }
	call, n := failing(errAgain, errAgain, errFinal)
	assert.Same(t, errFinal, runtime.Retry(context.Background(), p, call))
	assert.Equal(t, 3, *n)
	call, n = failing(io.EOF)
	assert.Same(t, io.EOF, runtime.Retry(context.Background(), p, call), "io.EOF is not retried under this policy")
	assert.Equal(t, 1, *n)
}

func TestRetryNeverOutlivesTheContext(t *testing.T) {
	// A try that ends the context: no other try follows.
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	tries := 0
	err := runtime.Retry(ctx, fast, func(context.Context) error {
		if tries++; tries == 2 {
			cancel()
		}
		return io.EOF
	})
	assert.Same(t, io.EOF, err, "the last failure, not ctx's error")
	assert.Equal(t, 2, tries)

	// A context that ends during an hour-long wait ends the wait: were it
	// ignored, the test would hang until go test's timeout.
	ctx, cancel = context.WithCancel(context.Background())
	defer cancel()
	slow := runtime.RetryPolicy{MinBackoff: time.Hour}
	var calls atomic.Int32
	err = runtime.Retry(ctx, slow, func(context.Context) error {
		calls.Add(1)
		time.AfterFunc(time.Millisecond, cancel)
		return io.EOF
	})
	assert.Same(t, io.EOF, err)
	assert.EqualValues(t, 1, calls.Load())

	// An ended context still gets its one try: the call decides what an
	// ended context means (the executors refuse to send).
	call, n := failing(io.EOF)
	assert.Same(t, io.EOF, runtime.Retry(ctx, fast, call))
	assert.Equal(t, 1, *n)
}

func TestRetryWindowBoundsEveryTry(t *testing.T) {
	// Every try runs under a context that ends with the window, so a try
	// stuck on a server that never answers ends with it too.
	p := runtime.RetryPolicy{Window: 20 * time.Millisecond}
	parent := context.Background()
	tries := 0
	err := runtime.Retry(parent, p, func(ctx context.Context) error {
		tries++
		_, ok := ctx.Deadline()
		assert.True(t, ok, "the try's context has the window's deadline")
		<-ctx.Done()
		return ctx.Err()
	})
	assert.ErrorIs(t, err, context.DeadlineExceeded)
	assert.Equal(t, 1, tries)
	assert.NoError(t, parent.Err())

	// Without Attempts the window alone ends a string of failures; the
	// last failure is returned.
	p = fast
	p.Window = 20 * time.Millisecond
	var calls atomic.Int32
	err = runtime.Retry(parent, p, func(ctx context.Context) error {
		calls.Add(1)
		return io.EOF
	})
	assert.Same(t, io.EOF, err)
	assert.Positive(t, calls.Load())
}
