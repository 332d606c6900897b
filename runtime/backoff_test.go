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
			b := backoff(n)
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
		b := backoff(n)
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
