package lock

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/luagen/luagen/runtime"
)

// WithReplicas' values are checked: a negative n, a timeout under 1 ms or
// over a third of the lease (of a handoff's grant too) is ErrBadOption;
// n = 0 is off whatever the timeout; TryLock's grace grows by timeout.
func TestWithReplicasValidation(t *testing.T) {
	for _, tc := range []struct {
		name string
		opts []Option
		ok   bool
	}{
		{"off", []Option{WithReplicas(0, 0)}, true},
		{"one, 500 ms", []Option{WithReplicas(1, 500*time.Millisecond)}, true},
		{"negative", []Option{WithReplicas(-1, time.Second)}, false},
		{"no timeout", []Option{WithReplicas(1, 0)}, false},
		{"a third of the grant lease", []Option{WithReplicas(1, time.Second)}, true},
		{"over a third of the grant lease", []Option{WithReplicas(1, 1100*time.Millisecond)}, false}, // QueueTTL 3 s
		{"over a third of an explicit lease", []Option{WithLease(time.Second), WithReplicas(1, 400*time.Millisecond)}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := defaultConfig()
			c.apply(tc.opts)
			err := c.validate()
			if tc.ok {
				require.NoError(t, err)
			} else {
				require.ErrorIs(t, err, ErrBadOption)
			}
		})
	}
	c := defaultConfig()
	c.apply([]Option{WithReplicas(1, 200*time.Millisecond)})
	assert.Equal(t, WaitGrace+200*time.Millisecond, c.grace())
}

// plainExecutor is an Executor that cannot send WAIT.
type plainExecutor struct{}

func (plainExecutor) EvalSha(context.Context, *runtime.Script, []string, []string) (runtime.Value, error) {
	return runtime.Value{}, errors.New("not sent")
}
func (plainExecutor) Eval(context.Context, *runtime.Script, []string, []string) (runtime.Value, error) {
	return runtime.Value{}, errors.New("not sent")
}
func (plainExecutor) Load(context.Context, *runtime.Script) error { return nil }

// New refuses WithReplicas on an executor that cannot send WAIT after a
// script on its connection, rather than run without the check.
func TestWithReplicasNeedsAReplicaWaiter(t *testing.T) {
	c, err := NewClient(nil, WithExecutor(plainExecutor{}))
	require.NoError(t, err)
	defer c.Close()
	_, err = New(c, "x", WithReplicas(1, time.Second))
	require.ErrorIs(t, err, ErrBadOption)
	assert.Contains(t, err.Error(), "runtime.ReplicaWaiter")
	_, err = New(c, "x")
	require.NoError(t, err)
}

// A ReplicaError says how many replicas acknowledged, and matches
// ErrNotReplicated and the WAIT failure it carries.
func TestReplicaErrorText(t *testing.T) {
	e := &ReplicaError{Want: 2, Acked: 1, Timeout: 300 * time.Millisecond}
	assert.Equal(t, "lock: 1 of 2 replicas acknowledged the hold within 300ms", e.Error())
	assert.ErrorIs(t, e, ErrNotReplicated)
	cause := errors.New("ERR WAIT cannot be used with replica instances")
	e = &ReplicaError{Want: 1, Err: cause}
	assert.ErrorIs(t, e, cause)
	assert.ErrorIs(t, e, ErrNotReplicated)
	assert.True(t, retryable(e), "a failed WAIT is asked again")
	assert.False(t, retryable(&ReplicaError{Want: 1}), "too few acknowledgements is an answer")
	assert.True(t, mayHaveRun(e), "the script ran: roll it back")
}
