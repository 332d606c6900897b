package lock

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/luagen/luagen/runtime"
)

// WithReplicas counts a hold only once at least n replicas acknowledged
// its write within timeout: every acquire (first, reentrant, the claim of
// a handoff) and every renewal is followed by WAIT n timeout on the
// connection that ran the script, in the same round trip (see the package
// documentation, "Failover"; Redisson: checkLockSyncedSlaves). An acquire
// fewer acknowledged is rolled back, and Lock or TryLock then fails with a
// *ReplicaError; a renewal fewer acknowledged is a failed renewal
// (EventRenewFailed), and the hold ends with ErrLost when no acknowledged
// renewal comes before the lease of the last one runs out.
//
// n = 0 (the default) turns it off. timeout is sent as whole milliseconds,
// between 1 ms and a third of the lease and of a handoff's grant lease.
// TryLock's bound becomes wait + WaitStrategy.Grace + timeout, plus, when
// the replicas fell short, the rollback's round trip (at most the retry
// window against a server that stops answering). An attempt whose WAIT has
// not answered by then (Redis may answer 1/hz = 100 ms late) is rolled back
// at once, a *ReplicaError when that gave back a hold. The executor must
// implement runtime.ReplicaWaiter, as the Client's rueidis client and
// runtime/goredis do (with go-redis keep timeout below its ReadTimeout);
// New fails with ErrBadOption otherwise.
func WithReplicas(n int, timeout time.Duration) Option {
	return func(c *config) { c.replicas, c.replicaTimeout = n, timeout }
}

// ErrNotReplicated is matched by every *ReplicaError.
var ErrNotReplicated = errors.New("lock: not acknowledged by enough replicas")

// ReplicaError is the error (wrapped with the lock's name; find it with
// errors.As) of a Lock or TryLock whose hold fewer replicas acknowledged
// than WithReplicas asks for. The acquire was rolled back before Lock or
// TryLock returned: nothing of it is held at that moment (a reentrant
// acquire's extra hold was given back; the holds before it remain). It
// matches ErrNotReplicated, and Err when set.
type ReplicaError struct {
	Want    int           // n of WithReplicas
	Acked   int           // WAIT's reply: replicas that had the write when it returned; 0 when Err is set, and when WAIT had not answered by TryLock's bound
	Timeout time.Duration // timeout of WithReplicas: how long WAIT waited at most
	// Err is why WAIT failed, when it did: an error reply (a node
	// demoted to a replica answers "ERR WAIT cannot be used with replica
	// instances") or a lost connection. nil when WAIT answered.
	Err error
}

func (e *ReplicaError) Error() string {
	if e.Err != nil {
		return fmt.Sprintf("lock: WAIT for %d replicas failed: %v", e.Want, e.Err)
	}
	return fmt.Sprintf("lock: %d of %d replicas acknowledged the hold within %v", e.Acked, e.Want, e.Timeout)
}

// Unwrap returns ErrNotReplicated and Err.
func (e *ReplicaError) Unwrap() []error {
	if e.Err == nil {
		return []error{ErrNotReplicated}
	}
	return []error{ErrNotReplicated, e.Err}
}

// waitKey is the context key under which a call carries the WAIT that
// ackExecutor sends after its script.
type waitKey struct{}

// ackExecutor runs a script as the executor it wraps does, followed by
// WAIT when the call's context carries a *runtime.Wait (askAcks): only the
// calls that write a hold ask, so releases, rollbacks and queries cost
// nothing more.
type ackExecutor struct{ runtime.ReplicaWaiter }

func (e ackExecutor) EvalSha(ctx context.Context, s *runtime.Script, keys, args []string) (runtime.Value, error) {
	if w, ok := ctx.Value(waitKey{}).(*runtime.Wait); ok {
		return e.EvalShaWait(ctx, s, keys, args, w)
	}
	return e.ReplicaWaiter.EvalSha(ctx, s, keys, args)
}

func (e ackExecutor) Eval(ctx context.Context, s *runtime.Script, keys, args []string) (runtime.Value, error) {
	if w, ok := ctx.Value(waitKey{}).(*runtime.Wait); ok {
		return e.EvalWait(ctx, s, keys, args, w)
	}
	return e.ReplicaWaiter.Eval(ctx, s, keys, args)
}

// Unwrap returns the executor ackExecutor wraps, which answers for what
// ackExecutor does not implement itself: its Hook, its server address,
// whether it keeps call arguments (runtime's capability lookup).
func (e ackExecutor) Unwrap() runtime.Executor { return e.ReplicaWaiter }

// withReplicas wraps exec for WithReplicas, or returns it as it is when
// the option is off.
func withReplicas(cfg *config, exec runtime.Executor) (runtime.Executor, error) {
	if cfg.replicas == 0 {
		return exec, nil
	}
	rw, ok := exec.(runtime.ReplicaWaiter)
	if !ok {
		return nil, optionError("WithReplicas needs an executor that sends WAIT (runtime.ReplicaWaiter), got %T", exec)
	}
	return ackExecutor{rw}, nil
}

// short returns the *ReplicaError of a WAIT that fell short or failed,
// nil when enough replicas acknowledged (or none were asked for). It is
// only meaningful after a script that wrote: WAIT after a call that wrote
// nothing answers for the connection's earlier writes.
func (m *Mutex) short(w *runtime.Wait) *ReplicaError {
	if w == nil || (w.Err == nil && w.Acked >= w.Replicas) {
		return nil
	}
	return &ReplicaError{Want: m.cfg.replicas, Acked: int(w.Acked), Timeout: m.cfg.replicaTimeout, Err: w.Err}
}
