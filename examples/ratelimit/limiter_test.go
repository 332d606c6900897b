package ratelimit_test

// The limiters' contracts, each run on luatest, and on a redis-server and
// on a Redis Cluster through both the rueidis and the go-redis executor, with
// the same assertions: what the offline tests prove holds on the server,
// whichever client the service uses.

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"example.com/ratelimit"
)

func allowed(remaining int64) ratelimit.Decision {
	return ratelimit.Decision{Allowed: true, Remaining: remaining}
}

func refused(retryAfter time.Duration) ratelimit.Decision {
	return ratelimit.Decision{RetryAfter: retryAfter}
}

func TestSlidingWindow(t *testing.T) {
	for _, bk := range backends {
		t.Run(bk.name, func(t *testing.T) {
			b := bk.start(t)
			ctx := context.Background()
			w := ratelimit.NewSlidingWindow(b.exec, 3, 10*unit,
				ratelimit.WithClock(b.now), ratelimit.WithPrefix(t.Name()+":"))
			allow := func(subject, id string, want ratelimit.Decision) {
				t.Helper()
				d, err := w.Allow(ctx, subject, id)
				require.NoError(t, err)
				assert.Equal(t, want, d, "%s %s at t0+%v", subject, id, b.now().Sub(t0))
			}

			allow("u1", "a1", allowed(2))
			b.advance(unit)
			allow("u1", "a2", allowed(1))
			b.advance(unit)
			allow("u1", "a3", allowed(0))
			allow("u2", "b1", allowed(2)) // subjects do not share counts
			b.advance(unit)
			allow("u1", "a4", refused(7*unit)) // a1 leaves at t0+10u
			allow("u1", "a2", allowed(0))      // a retry of an admitted request: admitted, counted once

			b.advance(7 * unit) // t0+10u: the window (t0, t0+10u] no longer holds a1
			allow("u1", "a4", allowed(0))
			allow("u1", "a5", refused(unit)) // a2 (t0+1u) is now the oldest

			b.advance(20 * unit)
			allow("u1", "a6", allowed(2))
		})
	}
}

func TestTokenBucket(t *testing.T) {
	for _, bk := range backends {
		t.Run(bk.name, func(t *testing.T) {
			b := bk.start(t)
			ctx := context.Background()
			tb := ratelimit.NewTokenBucket(b.exec, 3, unit,
				ratelimit.WithClock(b.now), ratelimit.WithPrefix(t.Name()+":"))
			take := func(n int64, want ratelimit.Decision) {
				t.Helper()
				d, err := tb.Take(ctx, "u1", n)
				require.NoError(t, err)
				assert.Equal(t, want, d, "take %d at t0+%v", n, b.now().Sub(t0))
			}

			take(1, allowed(2))
			take(1, allowed(1))
			take(1, allowed(0))
			take(1, refused(unit))
			b.advance(unit)
			take(1, allowed(0))
			b.advance(unit * 5 / 2) // 2.5 tokens back
			take(3, ratelimit.Decision{Remaining: 2, RetryAfter: unit / 2})
			take(2, allowed(0))
			take(1, refused(unit/2))
			b.advance(100 * unit) // full, not more
			take(3, allowed(0))

			d, err := tb.Allow(ctx, "u2")
			require.NoError(t, err)
			assert.Equal(t, allowed(2), d, "u2 has a bucket of its own")
		})
	}
}

func TestInvalidArguments(t *testing.T) {
	for _, bk := range backends {
		t.Run(bk.name, func(t *testing.T) {
			b := bk.start(t)
			ctx := context.Background()
			prefix := ratelimit.WithPrefix(t.Name() + ":")
			clock := ratelimit.WithClock(b.now)

			for _, w := range []*ratelimit.SlidingWindow{
				ratelimit.NewSlidingWindow(b.exec, 0, time.Second, clock, prefix),
				ratelimit.NewSlidingWindow(b.exec, 10, 0, clock, prefix),
				ratelimit.NewSlidingWindow(b.exec, 10, 999*time.Microsecond, clock, prefix), // 0 whole ms
				ratelimit.NewSlidingWindow(b.exec, 10, time.Second, ratelimit.WithClock(func() time.Time { return time.Time{} }), prefix),
			} {
				_, err := w.Allow(ctx, "u1", "r1")
				assert.ErrorIs(t, err, ratelimit.ErrInvalidWindow)
			}
			_, err := ratelimit.NewSlidingWindow(b.exec, 10, time.Second, clock, prefix).Allow(ctx, "u1", "")
			assert.ErrorIs(t, err, ratelimit.ErrInvalidWindow, "an empty request id")
			assert.ErrorContains(t, err, "id must not be empty")

			tb := ratelimit.NewTokenBucket(b.exec, 3, time.Second, clock, prefix)
			for _, n := range []int64{0, -1, 4} {
				_, err := tb.Take(ctx, "u1", n)
				assert.ErrorIs(t, err, ratelimit.ErrInvalidBucket, "take %d of 3", n)
			}
			_, err = ratelimit.NewTokenBucket(b.exec, 0, time.Second, clock, prefix).Allow(ctx, "u1")
			assert.ErrorIs(t, err, ratelimit.ErrInvalidBucket, "burst 0")
			_, err = ratelimit.NewTokenBucket(b.exec, 1e9, 1e7*time.Millisecond, clock, prefix).Allow(ctx, "u1")
			assert.ErrorIs(t, err, ratelimit.ErrInvalidBucket, "a bucket 10^16 ms deep")

			b.do("SET", t.Name()+":bucket:u9", "soon")
			_, err = tb.Allow(ctx, "u9")
			assert.ErrorIs(t, err, ratelimit.ErrCorruptBucket)
			assert.ErrorContains(t, err, `bucket holds "soon"`)
		})
	}
}

// TestConcurrentCallers races many callers for one subject's limit: the
// check and the update run as one script, so exactly limit of them win.
func TestConcurrentCallers(t *testing.T) {
	const subjects, callers, limit = 4, 24, 10
	for _, bk := range backends {
		t.Run(bk.name, func(t *testing.T) {
			b := bk.start(t)
			ctx := context.Background()
			opts := []ratelimit.Option{ratelimit.WithClock(b.now), ratelimit.WithPrefix(t.Name() + ":")}
			w := ratelimit.NewSlidingWindow(b.exec, limit, 10*unit, opts...)
			tb := ratelimit.NewTokenBucket(b.exec, limit, unit, opts...)

			type outcome struct {
				subject, limiter string
				d                ratelimit.Decision
				err              error
			}
			out := make(chan outcome, 2*subjects*callers)
			var wg sync.WaitGroup
			for s := range subjects {
				subject := fmt.Sprintf("user:%d", s) // spread over the cluster's shards
				for c := range callers {
					wg.Go(func() {
						d, err := w.Allow(ctx, subject, fmt.Sprintf("req-%d", c))
						out <- outcome{subject, "window", d, err}
					})
					wg.Go(func() {
						d, err := tb.Allow(ctx, subject)
						out <- outcome{subject, "bucket", d, err}
					})
				}
			}
			wg.Wait()
			close(out)

			remaining := map[string][]bool{} // subject/limiter → which Remaining values were answered
			for o := range out {
				require.NoError(t, o.err)
				k := o.subject + "/" + o.limiter
				if remaining[k] == nil {
					remaining[k] = make([]bool, limit)
				}
				if o.d.Allowed {
					require.False(t, remaining[k][o.d.Remaining], "%s: remaining %d answered twice", k, o.d.Remaining)
					remaining[k][o.d.Remaining] = true
				} else {
					assert.Positive(t, o.d.RetryAfter, k)
				}
			}
			require.Len(t, remaining, 2*subjects)
			for k, seen := range remaining {
				for n, ok := range seen {
					assert.True(t, ok, "%s: no caller was answered remaining %d", k, n)
				}
			}
		})
	}
}
