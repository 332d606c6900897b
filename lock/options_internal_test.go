package lock

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The default MinPoll (5 ms) gives way to a third of a short lease or
// queue TTL, so a waiter never sleeps past its place in the queue or the
// lease a handoff grants it; an explicit MinPoll longer than that is
// refused instead.
func TestPollStaysWithinTheQueueTTLAndGrantLease(t *testing.T) {
	for _, tc := range []struct {
		name string
		opts []Option
		want time.Duration
	}{
		{"default", nil, time.Second},
		{"10 ms lease", []Option{WithLease(10 * time.Millisecond)}, 10 * time.Millisecond / 3},
		{"3 ms queue TTL", []Option{WithWaitStrategy(WaitStrategy{QueueTTL: 3 * time.Millisecond})}, time.Millisecond},
		{"explicit MinPoll", []Option{WithLease(30 * time.Millisecond), WithWaitStrategy(WaitStrategy{MinPoll: 7 * time.Millisecond})}, 10 * time.Millisecond},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := defaultConfig()
			c.apply(tc.opts)
			require.NoError(t, c.validate())
			assert.Equal(t, tc.want, c.poll(-1), "no holder TTL: the longest sleep")
			assert.LessOrEqual(t, c.poll(time.Microsecond), c.mostPoll(), "a tiny holder TTL: the shortest sleep")
			assert.LessOrEqual(t, c.minPoll(), c.mostPoll())
		})
	}
}
