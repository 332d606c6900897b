package runtime

import (
	"context"
	"errors"
	"math/rand/v2"
	"time"

	"github.com/redis/rueidis"
)

// Retries of idempotent scripts.
//
// A script that may have run must not be sent again blindly: after a lost
// reply a second deduct would take the units twice. A script whose header
// says ---@idempotent (for example a deduct that records its order id
// atomically with the decrement and answers a repeated order id with the
// first outcome) can be sent again safely, and [Script.Exec] does so after a
// [IsTransient] failure, up to [RetryAttempts] times, waiting between tries
// (jittered, doubling from [RetryMinBackoff] up to [RetryMaxBackoff]) and
// never past the caller's context. The retry lives here, not in generated
// code or in the Executor, so every executor (rueidis, the offline fake, a
// fault injector) gets the same policy and the generated wrapper holds no
// logic.
const (
	// RetryAttempts is how many times Exec sends an idempotent script
	// before it returns a transient failure: 1 try and 9 retries with at
	// most 2.13 s of waiting in all, enough for a redis-server to restart
	// and load its AOF or for a cluster to finish a failover.
	RetryAttempts = 10
	// RetryMinBackoff is the wait before the first retry.
	RetryMinBackoff = 10 * time.Millisecond
	// RetryMaxBackoff caps the wait between two tries.
	RetryMaxBackoff = 500 * time.Millisecond
)

// ErrClientClosed matches, with errors.Is, the error an [Executor] returns
// once its client was closed by the application: a closed client never
// reopens, so [IsTransient] reports false and an idempotent script is not
// retried against it. Executors wrap their client's own error (go-redis'
// redis.ErrClosed, rueidis.ErrClosing, luatest after Close) so that it
// matches too, and so one errors.Is check serves every executor.
var ErrClientClosed = errors.New("client closed")

// transientCodes are error replies that mean the server did not run the
// script and may well run it shortly:
//
//   - LOADING: a restarted server is still loading its AOF or RDB;
//   - BUSY: another script is running past busy-reply-threshold;
//   - TRYAGAIN: a multi-key command during slot migration (cluster spec);
//   - CLUSTERDOWN: the cluster lost a shard and has not failed over yet;
//   - MASTERDOWN: a replica's link to its primary is down;
//   - READONLY: the node was demoted to a replica (sentinel failover) and
//     the client has not learned the new primary yet; scripts with a
//     shebang are refused before they run (Redis 7 scriptPrepareForRun).
var transientCodes = map[string]bool{
	"LOADING": true, "BUSY": true, "TRYAGAIN": true, "CLUSTERDOWN": true,
	"MASTERDOWN": true, "READONLY": true,
}

// IsTransient reports whether err, returned by an [Executor] or by
// [Script.Exec], is a failure worth retrying for an idempotent script: a
// connection error (refused, reset, closed, timed out at the client; the
// script may or may not have run) or one of the error replies above (the
// script did not run). Context cancellation and expiry, every other error
// reply, a closed client (rueidis.ErrClosing or [ErrClientClosed]: it will
// not reopen), and runtime's own verdicts ([*CodeError], [*CrossSlotError],
// [*DecodeError], [*ScriptError]) are not transient. No error of function
// libraries reaches it from a call: a library that is missing, removed by
// another build's load or cannot be loaded makes the call load it again
// or run the script with EVALSHA/EVAL (see [Library]), so a retry loop
// keyed on IsTransient never waits on a library.
func IsTransient(err error) bool {
	if err == nil || errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) ||
		errors.Is(err, rueidis.ErrClosing) || errors.Is(err, ErrClientClosed) {
		return false
	}
	var (
		re *ReplyError
		ce *CodeError
		cs *CrossSlotError
		de *DecodeError
	)
	switch {
	case errors.As(err, &ce), errors.As(err, &cs), errors.As(err, &de):
		return false
	case errors.As(err, &re): // also a *ScriptError's reply
		return transientCodes[re.Code()]
	}
	return true
}

// backoff is the wait before retry n (1-based): lo·2ⁿ⁻¹ capped at hi, of
// which the upper half is random so that callers who failed together (buyers
// after a failover) do not all come back together.
func backoff(n int, lo, hi time.Duration) time.Duration {
	d := hi
	if n < 16 {
		d = min(lo<<(n-1), hi)
	}
	return d/2 + rand.N(d/2+1)
}

// sleep waits d or until ctx ends, and reports whether the full d passed.
func sleep(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-ctx.Done():
		return false
	}
}

// RetryPolicy says how [Retry] spaces and bounds the tries of a call.
type RetryPolicy struct {
	// Attempts caps the tries in all; 0 means no cap but Window and ctx.
	Attempts int
	// Window bounds the whole retry, counted on the monotonic clock from
	// the first try: every try runs under a context that ends then, so a
	// try stuck on a dead or stalled server cannot overrun it either.
	// 0 means no bound but Attempts and ctx.
	Window time.Duration
	// MinBackoff is the wait before the first retry; it doubles up to
	// MaxBackoff, the upper half of each wait drawn at random. Zero values
	// mean RetryMinBackoff and RetryMaxBackoff.
	MinBackoff, MaxBackoff time.Duration
	// Retryable says whether a failure is worth another try; nil means
	// [IsTransient].
	Retryable func(error) bool
}

// Retry runs call until it succeeds, fails in a way p.Retryable rejects,
// ctx ends, or p's attempts or window are spent, and returns the last
// error. It is the one retry loop of the module: [Script.Exec] retries
// idempotent scripts with its policy (RetryAttempts tries), and package
// lock retries its latch-guarded scripts within a time window.
func Retry(ctx context.Context, p RetryPolicy, call func(context.Context) error) error {
	if p.Window > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, p.Window)
		defer cancel()
	}
	retryable := p.Retryable
	if retryable == nil {
		retryable = IsTransient
	}
	lo, hi := p.backoffs()
	for n := 1; ; n++ {
		err := call(ctx)
		if err == nil || ctx.Err() != nil || !retryable(err) || (p.Attempts > 0 && n >= p.Attempts) {
			return err
		}
		if !sleep(ctx, backoff(n, lo, hi)) {
			return err
		}
	}
}

// backoffs returns p's first wait and its cap, zero values replaced by the
// defaults: MinBackoff 0 is RetryMinBackoff; a MaxBackoff below the first
// wait (0 included) is RetryMaxBackoff, or the first wait when that is
// larger.
func (p RetryPolicy) backoffs() (lo, hi time.Duration) {
	lo, hi = p.MinBackoff, p.MaxBackoff
	if lo <= 0 {
		lo = RetryMinBackoff
	}
	if hi < lo {
		hi = max(lo, RetryMaxBackoff)
	}
	return lo, hi
}
