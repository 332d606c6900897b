package runtime

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
)

// TestBackoffBounds checks the retry schedule arithmetically rather than
// by timing Exec: each wait lies in the upper half of
// RetryMinBackoff·2ⁿ⁻¹ capped at RetryMaxBackoff, so the RetryAttempts-1
// waits add up to between 1.065 s and 2.13 s, the bound RetryAttempts
// documents.
func TestBackoffBounds(t *testing.T) {
	var lo, hi time.Duration
	for n := 1; n < RetryAttempts; n++ {
		d := min(RetryMinBackoff<<(n-1), RetryMaxBackoff)
		seen := map[time.Duration]bool{}
		for range 200 {
			b := backoff(n, RetryMinBackoff, RetryMaxBackoff)
			assert.GreaterOrEqual(t, b, d/2, "retry %d", n)
			assert.LessOrEqual(t, b, d, "retry %d", n)
			seen[b] = true
		}
		assert.Greater(t, len(seen), 1, "retry %d: jittered", n)
		lo, hi = lo+d/2, hi+d
	}
	assert.Equal(t, 1065*time.Millisecond, lo)
	assert.Equal(t, 2130*time.Millisecond, hi)
	for _, n := range []int{16, 64, 1 << 20} {
		b := backoff(n, RetryMinBackoff, RetryMaxBackoff)
		assert.True(t, b >= RetryMaxBackoff/2 && b <= RetryMaxBackoff, "retry %d waits %v: capped, no overflow", n, b)
	}
}

// TestSleepEndsWithContext: a wait never outlives the caller's context.
// Were the context ignored, the hour-long sleep would hang the test until
// go test's timeout; nothing here depends on the machine's speed.
func TestSleepEndsWithContext(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	assert.False(t, sleep(ctx, time.Hour), "an ended context ends the wait at once")

	ctx, cancel = context.WithCancel(context.Background())
	go func() { time.Sleep(10 * time.Millisecond); cancel() }()
	assert.False(t, sleep(ctx, time.Hour), "a context ending mid-wait ends it")

	assert.True(t, sleep(context.Background(), time.Millisecond), "a full wait reports true")
}

// TestRetryPolicyBackoffs: Retry's schedule for a policy of its own, and
// the defaults its zero values stand for. Arithmetic only, no clock.
func TestRetryPolicyBackoffs(t *testing.T) {
	lo, hi := 3*time.Millisecond, 20*time.Millisecond
	for n, want := range map[int]time.Duration{1: 3 * time.Millisecond, 2: 6 * time.Millisecond, 3: 12 * time.Millisecond, 4: hi, 5: hi, 100: hi} {
		for range 50 {
			b := backoff(n, lo, hi)
			assert.True(t, b >= want/2 && b <= want, "retry %d waits %v, want %v to %v", n, b, want/2, want)
		}
	}
	for _, tc := range []struct {
		p      RetryPolicy
		lo, hi time.Duration
	}{
		{RetryPolicy{}, RetryMinBackoff, RetryMaxBackoff},
		{RetryPolicy{MinBackoff: time.Millisecond}, time.Millisecond, RetryMaxBackoff},
		{RetryPolicy{MaxBackoff: time.Second}, RetryMinBackoff, time.Second},
		{RetryPolicy{MinBackoff: time.Second}, time.Second, time.Second},
		{RetryPolicy{MinBackoff: 5 * time.Millisecond, MaxBackoff: 7 * time.Millisecond}, 5 * time.Millisecond, 7 * time.Millisecond},
		{execRetry, RetryMinBackoff, RetryMaxBackoff},
	} {
		lo, hi := tc.p.backoffs()
		assert.Equal(t, [2]time.Duration{tc.lo, tc.hi}, [2]time.Duration{lo, hi}, "%+v", tc.p)
	}
	assert.Equal(t, RetryAttempts, execRetry.Attempts, "Exec tries an idempotent script RetryAttempts times")
	assert.Zero(t, execRetry.Window, "Exec is bounded by ctx alone")
}
