package ratelimit_test

// What only luatest can show: the exact commands each script sends, keys
// expiring on the virtual clock, and a reply lost after the script ran.

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/luagen/luagen/luatest"

	"example.com/ratelimit"
)

func TestSlidingWindowCommandsAndExpiry(t *testing.T) {
	r := luatest.Start(t, luatest.WithTime(t0))
	ctx := context.Background()
	w := ratelimit.NewSlidingWindow(r, 2, time.Second, ratelimit.WithClock(r.Now))
	const key = "ratelimit:window:u1"

	_, err := w.Allow(ctx, "u1", "r1")
	require.NoError(t, err)
	assert.Equal(t, []string{
		"ZREMRANGEBYSCORE ratelimit:window:u1 -inf 1699999999000",
		"ZCARD ratelimit:window:u1",
		"ZSCORE ratelimit:window:u1 r1",
		"ZADD ratelimit:window:u1 1700000000000 r1",
		"PEXPIRE ratelimit:window:u1 1000",
	}, r.CommandLines())

	r.Advance(400 * time.Millisecond)
	_, err = w.Allow(ctx, "u1", "r2")
	require.NoError(t, err)
	r.ResetCalls()
	d, err := w.Allow(ctx, "u1", "r3")
	require.NoError(t, err)
	assert.Equal(t, refused(600*time.Millisecond), d)
	assert.Equal(t, []string{
		"ZREMRANGEBYSCORE ratelimit:window:u1 -inf 1699999999400",
		"ZCARD ratelimit:window:u1",
		"ZSCORE ratelimit:window:u1 r3",
		"ZRANGE ratelimit:window:u1 0 0 WITHSCORES",
	}, r.CommandLines(), "a refusal writes nothing")
	assert.Equal(t, map[string]float64{"r1": 1_700_000_000_000, "r2": 1_700_000_000_400}, r.ZScores(key))

	pttl, ok := r.PTTL(key)
	require.True(t, ok)
	assert.Equal(t, time.Second, pttl, "the key lives one window past the last admission")
	r.Advance(time.Second) // Redis drops a key once the clock is past its expiry time
	assert.True(t, r.Exists(key))
	r.Advance(time.Millisecond)
	assert.False(t, r.Exists(key), "an idle subject leaves nothing behind")
}

func TestTokenBucketCommandsAndExpiry(t *testing.T) {
	r := luatest.Start(t, luatest.WithTime(t0))
	ctx := context.Background()
	tb := ratelimit.NewTokenBucket(r, 5, 200*time.Millisecond, ratelimit.WithClock(r.Now))
	const key = "ratelimit:bucket:u1"

	d, err := tb.Take(ctx, "u1", 2)
	require.NoError(t, err)
	assert.Equal(t, allowed(3), d)
	assert.Equal(t, []string{
		"GET ratelimit:bucket:u1",
		"SET ratelimit:bucket:u1 1700000000400 PX 400",
	}, r.CommandLines(), "the bucket is full again 2 × 200 ms from now")

	r.ResetCalls()
	d, err = tb.Take(ctx, "u1", 4)
	require.NoError(t, err)
	assert.Equal(t, ratelimit.Decision{Remaining: 3, RetryAfter: 200 * time.Millisecond}, d)
	assert.Equal(t, []string{"GET ratelimit:bucket:u1"}, r.CommandLines(), "a refusal takes nothing")

	r.Advance(400 * time.Millisecond)
	assert.True(t, r.Exists(key))
	r.Advance(time.Millisecond)
	assert.False(t, r.Exists(key), "a full bucket is no key at all")
}

// TestLostReply: allow.lua is declared idempotent, so runtime retries it
// after a reply is lost and the retry finds the request already admitted;
// take.lua is not, so the error reaches the caller and nothing is resent.
func TestLostReply(t *testing.T) {
	r := luatest.Start(t, luatest.WithTime(t0))
	ctx := context.Background()

	w := ratelimit.NewSlidingWindow(r, 2, time.Second, ratelimit.WithClock(r.Now))
	r.LoseReply()
	d, err := w.Allow(ctx, "u1", "r1")
	require.NoError(t, err)
	assert.Equal(t, allowed(1), d, "the retry's answer: r1 admitted once")
	assert.Len(t, r.ZScores("ratelimit:window:u1"), 1)
	assert.Equal(t, []string{
		"ZREMRANGEBYSCORE ratelimit:window:u1 -inf 1699999999000",
		"ZCARD ratelimit:window:u1",
		"ZSCORE ratelimit:window:u1 r1",
		"ZADD ratelimit:window:u1 1700000000000 r1",
		"PEXPIRE ratelimit:window:u1 1000",
		"ZREMRANGEBYSCORE ratelimit:window:u1 -inf 1699999999000", // the retry
		"ZCARD ratelimit:window:u1",
		"ZSCORE ratelimit:window:u1 r1",
	}, r.CommandLines())

	r.ResetCalls()
	tb := ratelimit.NewTokenBucket(r, 5, time.Second, ratelimit.WithClock(r.Now))
	r.LoseReply()
	_, err = tb.Take(ctx, "u1", 2)
	require.ErrorIs(t, err, luatest.ErrReplyLost)
	assert.Equal(t, []string{
		"GET ratelimit:bucket:u1",
		"SET ratelimit:bucket:u1 1700000002000 PX 2000",
	}, r.CommandLines(), "ran once, not retried: the tokens are gone")
}
