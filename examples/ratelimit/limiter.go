package ratelimit

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/luagen/luagen/runtime"
)

// Decision is the answer to one request.
type Decision struct {
	// Allowed reports whether the request may go ahead.
	Allowed bool
	// Remaining is how many more requests (tokens, for a TokenBucket) would
	// be allowed right now, after this one.
	Remaining int64
	// RetryAfter is, when the request was refused, how long until it would
	// be allowed (a lower bound when other callers get there first); 0 when
	// it was allowed.
	RetryAfter time.Duration
}

// Option configures a SlidingWindow or a TokenBucket.
type Option func(*config)

type config struct {
	prefix string
	now    func() time.Time
}

func newConfig(opts []Option) config {
	c := config{prefix: "ratelimit:", now: time.Now}
	for _, o := range opts {
		o(&c)
	}
	return c
}

// WithPrefix sets the prefix of every key (default "ratelimit:"). A
// SlidingWindow keeps subject s in the sorted set prefix+"window:"+s, a
// TokenBucket in the string prefix+"bucket:"+s; give limiters that must not
// share counts different prefixes.
func WithPrefix(p string) Option { return func(c *config) { c.prefix = p } }

// WithClock sets the clock the limiter sends as "now" (default time.Now).
// Tests pass a virtual clock, such as luatest's Redis.Now.
func WithClock(now func() time.Time) Option { return func(c *config) { c.now = now } }

// SlidingWindow admits at most limit requests per subject in any span of
// window: a request is refused while limit requests were admitted in the
// window that ends now. It runs allow.lua ([Scripts.Allow]).
type SlidingWindow struct {
	scripts *Scripts
	limit   int64
	window  time.Duration
	cfg     config
}

// NewSlidingWindow returns a limiter of limit requests per window that runs
// on e: runtime.NewRueidisExecutor(client) in production, a luatest.Redis in tests.
// Window is sent in whole milliseconds. A limit below 1 or a window below
// 1 ms is refused by every Allow with [ErrInvalidWindow].
func NewSlidingWindow(e runtime.Executor, limit int64, window time.Duration, opts ...Option) *SlidingWindow {
	return &SlidingWindow{scripts: New(e), limit: limit, window: window, cfg: newConfig(opts)}
}

// Allow decides whether subject may make the request id. The id must be
// unique per request and reused by its retries: a request already admitted
// is answered "allowed" again without being counted twice, so Allow is
// retried after connection errors by itself (see [runtime.Script.Exec]).
// Errors: [ErrInvalidWindow] for an empty id or an invalid limit or window,
// else what the executor returns (connection errors, *runtime.ReplyError).
func (w *SlidingWindow) Allow(ctx context.Context, subject, id string) (Decision, error) {
	r, err := w.scripts.Allow(ctx, AllowKeys{Window: w.cfg.prefix + "window:" + subject},
		AllowArgs{Now: w.cfg.now(), Span: w.window, Limit: w.limit, ID: id})
	return Decision(r), invalid(err, ErrInvalidWindow)
}

// TokenBucket lets each subject make bursts of up to burst requests, with
// one token coming back every interval: a steady rate of 1/interval. It
// runs take.lua ([Scripts.Take]).
type TokenBucket struct {
	scripts  *Scripts
	burst    int64
	interval time.Duration
	cfg      config
}

// NewTokenBucket returns a limiter whose buckets hold burst tokens and gain
// one every interval, running on e: runtime.NewRueidisExecutor(client) in production, a
// luatest.Redis in tests. Interval is sent in whole milliseconds. A burst
// below 1 or above 10^8, an interval below 1 ms or above a day, or
// interval × burst above 10^15 ms is
// refused by every Take with [ErrInvalidBucket].
func NewTokenBucket(e runtime.Executor, burst int64, interval time.Duration, opts ...Option) *TokenBucket {
	return &TokenBucket{scripts: New(e), burst: burst, interval: interval, cfg: newConfig(opts)}
}

// Allow is Take(ctx, subject, 1).
func (b *TokenBucket) Allow(ctx context.Context, subject string) (Decision, error) {
	return b.Take(ctx, subject, 1)
}

// Take takes n tokens from subject's bucket, or none when fewer than n are
// there. It is not idempotent, so it is never retried after a lost reply
// (which may or may not have taken the tokens). Errors: [ErrInvalidBucket]
// when n is below 1 or above burst, [ErrCorruptBucket] when the key holds
// something else, else what the executor returns.
func (b *TokenBucket) Take(ctx context.Context, subject string, n int64) (Decision, error) {
	r, err := b.scripts.Take(ctx, TakeKeys{Bucket: b.cfg.prefix + "bucket:" + subject},
		TakeArgs{Now: b.cfg.now(), Interval: b.interval, Burst: b.burst, Cost: n})
	return Decision(r), invalid(err, ErrInvalidBucket)
}

// invalid makes an argument the generated method refused before sending
// (a *runtime.BadArgError: outside an ---@arg range, or beyond what the
// script's arithmetic holds exactly) match the limiter's own sentinel too,
// so that callers test one error whichever side refused it.
func invalid(err, sentinel error) error {
	if errors.Is(err, runtime.ErrBadArg) {
		return fmt.Errorf("%w: %w", sentinel, err)
	}
	return err
}
