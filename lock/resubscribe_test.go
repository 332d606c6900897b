package lock_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/redis/rueidis"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/luagen/luagen/lock"
	"github.com/luagen/luagen/redistest"
)

// When the connection under a Client's wake subscription breaks, the
// Client subscribes again (runtime.Retry's backoff), lets its waiters
// attempt once more, and the next handoff's message reaches the waiter.
// The waiter's fallback poll is a minute away, so a waiter woken by
// anything but the subscription would fail the test.
func TestWaiterResubscribesAfterBrokenConnection(t *testing.T) {
	srv := redistest.Start(t)
	ctx := context.Background()
	holder := newMutex(t, newClient(t, srv.Client(t)), "resub", lock.WithLease(time.Minute))
	_, err := holder.Lock(ctx)
	require.NoError(t, err)

	rc, err := rueidis.NewClient(rueidis.ClientOption{InitAddress: []string{srv.Addr}, DisableCache: true, ClientName: "resub-waiter"})
	require.NoError(t, err)
	t.Cleanup(rc.Close)
	var ev events
	w := newMutex(t, newClient(t, rc), "resub", lock.WithHook(ev.hook),
		lock.WithWatchdogLease(3*time.Minute), lock.WithWaitStrategy(lock.WaitStrategy{QueueTTL: 3 * time.Minute}))
	channel := wakeChannel(w)
	wctx, cancel := context.WithTimeout(ctx, 50*time.Second)
	defer cancel()
	r := goLock(wctx, w, 0)
	asleep(t, &ev, 2) // first, subscribed
	require.Equal(t, "["+channel+" 1]", srv.Do(t, "PUBSUB", "NUMSUB", channel))

	// Break every connection of the waiter's Redis client.
	killed := 0
	for _, line := range strings.Split(srv.Do(t, "CLIENT", "LIST"), "\n") {
		if !strings.Contains(line, " name=resub-waiter ") {
			continue
		}
		id, _, _ := strings.Cut(strings.TrimPrefix(line, "id="), " ")
		require.Equal(t, "1", srv.Do(t, "CLIENT", "KILL", "ID", id))
		killed++
	}
	require.Positive(t, killed, "the waiter's connections are listed")

	// Resubscribed: the channel has a subscriber again, and the waiter
	// attempted once more (a handoff may have been missed meanwhile).
	require.Eventually(t, func() bool {
		return srv.Do(t, "PUBSUB", "NUMSUB", channel) == "["+channel+" 1]" && len(ev.of(lock.EventAttempt)) >= 3
	}, 20*time.Second, 10*time.Millisecond)
	for _, a := range ev.of(lock.EventAttempt)[2:] {
		assert.Equal(t, lock.TriggerNotified, a.Trigger, "woken by the resubscription, not a poll")
	}

	// The release hands the lock over and its message wakes the waiter
	// (TriggerHandoff); should the release overtake the attempt above,
	// that attempt finds the lock handed to it (TriggerNotified). Either
	// way no poll was needed.
	require.NoError(t, holder.Unlock(ctx))
	res := <-r
	require.NoError(t, res.err, "the waiter got the lock before the poll a minute away")
	acq := ev.of(lock.EventAcquired)
	require.Len(t, acq, 1)
	assert.Contains(t, []lock.Trigger{lock.TriggerHandoff, lock.TriggerNotified}, acq[0].Trigger)
	require.NoError(t, w.Unlock(ctx))
}
