package lock_test

import (
	"context"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/luagen/luagen/lock"
	"github.com/luagen/luagen/redistest"
	"github.com/luagen/luagen/runtime"
)

// TestCluster runs the lock on a 3+3 Redis Cluster: unlock notifications
// travel by sharded pub/sub, mutual exclusion and hand-off hold, and a
// holder keeps its lock across a coordinated failover of the lock's slot
// (or learns it lost it), never overlapping with another holder. One
// cluster serves every subtest; the failover comes last.
func TestCluster(t *testing.T) {
	cl := redistest.StartCluster(t)
	ctx := context.Background()

	t.Run("ShardedNotification", func(t *testing.T) {
		rc := cl.Client(t)
		holder := newMutex(t, newClient(t, cl.Client(t)), "c-handoff", lock.WithLease(time.Minute))
		_, err := holder.Lock(ctx)
		require.NoError(t, err)
		var ev events
		w := newMutex(t, newClient(t, rc), "c-handoff", lock.WithHook(ev.hook))
		result := make(chan error, 1)
		go func() {
			_, err := w.Lock(ctx)
			result <- err
		}()
		primary, _, err := cl.PrimaryOf(runtime.Slot(w.Key()))
		require.NoError(t, err)
		channel := wakeChannel(w)
		asleep(t, &ev, 2) // first, then once subscribed
		assert.Equal(t, "["+channel+" 1]", primary.Do(t, "PUBSUB", "SHARDNUMSUB", channel), "the waiter subscribes with SSUBSCRIBE on the slot's primary")
		assert.Equal(t, "["+channel+" 0]", primary.Do(t, "PUBSUB", "NUMSUB", channel), "not with SUBSCRIBE")
		require.NoError(t, holder.Unlock(ctx))
		select {
		case err := <-result:
			require.NoError(t, err)
		case <-time.After(10 * time.Second):
			t.Fatal("the waiter did not get the lock")
		}
		assert.Equal(t, lock.TriggerHandoff, ev.of(lock.EventAcquired)[0].Trigger, "handed over, woken by SPUBLISH")
		require.NoError(t, w.Unlock(ctx))
	})

	t.Run("MutualExclusion", func(t *testing.T) {
		const clients, goroutines, sections = 3, 8, 50
		const counter = "c-mx:{counter}"
		var occupancy, maxOccupancy atomic.Int64
		var wg sync.WaitGroup
		for range clients {
			rc := cl.Client(t)
			c := newClient(t, rc, lock.WithWatchdogLease(2*time.Second))
			for range goroutines {
				m := newMutex(t, c, "c-mx")
				wg.Go(func() {
					for range sections {
						if err := section(m, rc, counter, &occupancy, &maxOccupancy); err != nil {
							t.Errorf("section: %v", err)
							return
						}
					}
				})
			}
		}
		wg.Wait()
		assert.EqualValues(t, 1, maxOccupancy.Load())
		primary, _, err := cl.PrimaryOf(runtime.Slot(counter))
		require.NoError(t, err)
		assert.Equal(t, strconv.Itoa(clients*goroutines*sections), primary.Do(t, "GET", counter))
	})

	t.Run("Handoff", func(t *testing.T) {
		// a hands the lock to b, the first in the queue, and b to r on
		// another Client: FIFO, whatever the Client.
		local := newClient(t, cl.Client(t))
		var bev, rev events
		a := newMutex(t, local, "c-given")
		b := newMutex(t, local, "c-given", lock.WithHook(bev.hook))
		r := newMutex(t, newClient(t, cl.Client(t)), "c-given", lock.WithHook(rev.hook))
		_, err := a.Lock(ctx)
		require.NoError(t, err)
		token := a.Token()
		bResult := goLock(ctx, b, 0)
		asleep(t, &bev, 2)
		rResult := goLock(ctx, r, 0)
		asleep(t, &rev, 2)
		require.NoError(t, a.Unlock(ctx))
		require.NoError(t, await(t, bResult).err)
		require.Equal(t, lock.TriggerHandoff, bev.of(lock.EventAcquired)[0].Trigger)
		assert.Greater(t, b.Token(), token)
		assert.EqualValues(t, 1, holdCount(t, b))
		select {
		case res := <-rResult:
			t.Fatalf("the other Client got a lock b holds: %+v", res)
		case <-time.After(50 * time.Millisecond):
		}
		require.NoError(t, b.Unlock(ctx))
		require.NoError(t, await(t, rResult).err)
		assert.Equal(t, lock.TriggerHandoff, rev.of(lock.EventAcquired)[0].Trigger, "woken by SPUBLISH")
		assert.Greater(t, r.Token(), b.Token())
		require.NoError(t, r.Unlock(ctx))
	})

	t.Run("Failover", func(t *testing.T) {
		const lease = 3 * time.Second
		holder := newMutex(t, newClient(t, cl.Client(t), lock.WithWatchdogLease(lease)), "c-failover")
		held, err := holder.Lock(ctx)
		require.NoError(t, err)
		var lostAt atomic.Int64 // ns since start, 0 while held
		start := time.Now()
		context.AfterFunc(held, func() { lostAt.Store(int64(time.Since(start))) })

		var ev events
		// The waiter's fallback poll is far longer than the test, so that
		// only the wake message can hand it the lock in time: a poll that
		// fired between the release and the message would win the race
		// and hide whether the message came.
		// (A poll may be at most a third of the queue TTL and of the
		// lease a handoff grants, so both are long.)
		const poll = 20 * time.Second
		w := newMutex(t, newClient(t, cl.Client(t), lock.WithWatchdogLease(3*poll)), "c-failover", lock.WithHook(ev.hook),
			lock.WithWaitStrategy(lock.WaitStrategy{MinPoll: poll, QueueTTL: 3 * poll}))
		var acquiredAt atomic.Int64
		result := make(chan error, 1)
		go func() {
			_, err := w.Lock(ctx)
			acquiredAt.Store(int64(time.Since(start)))
			result <- err
		}()

		slot := runtime.Slot(holder.Key())
		oldPrimary, newPrimary, err := cl.Failover(slot, 30*time.Second)
		require.NoError(t, err)
		t.Logf("slot %d moved from %s to %s", slot, oldPrimary.Addr, newPrimary.Addr)
		time.Sleep(2 * lease) // renewals must now reach the new primary

		if lost := lostAt.Load(); lost != 0 {
			// Allowed on a busy machine: renewals did not get through
			// within the lease and the holder gave the hold up. Then it
			// gives the hold back on the new primary, which hands it to
			// the waiter by a wake message (its poll is far off), and never
			// before the holder gave up.
			t.Logf("the holder lost the lock at %v: %v", time.Duration(lost), context.Cause(held))
			require.ErrorIs(t, context.Cause(held), lock.ErrLost)
			select {
			case err := <-result:
				require.NoError(t, err)
			case <-time.After(2 * lease):
				t.Fatal("the waiter did not get the lock the holder gave back")
			}
			assert.GreaterOrEqual(t, acquiredAt.Load(), lost, "two holders at once")
			assert.Equal(t, lock.TriggerHandoff, ev.of(lock.EventAcquired)[0].Trigger, "handed over by the give-back, woken on the new primary")
			require.ErrorIs(t, holder.Unlock(ctx), lock.ErrNotHeld)
			require.NoError(t, w.Unlock(ctx))
			return
		}
		select {
		case <-result:
			t.Fatal("the waiter got the lock while the holder still held it")
		default:
		}
		n, err := holder.HoldCount(ctx)
		require.NoError(t, err)
		assert.EqualValues(t, 1, n, "the hold survived the failover")

		// The waiter is still subscribed within the slot's shard (on the
		// new primary, or on the old one, now its replica, which receives
		// the shard's messages too): the hand-off still goes by notification.
		channel := wakeChannel(w)
		subs := oldPrimary.Do(t, "PUBSUB", "SHARDNUMSUB", channel) + " " + newPrimary.Do(t, "PUBSUB", "SHARDNUMSUB", channel)
		t.Logf("SHARDNUMSUB on the old and the new primary: %s", subs)
		assert.Equal(t, 1, strings.Count(subs, channel+" 1]"), "one subscription, within the shard")
		// The waiter cannot hold the lock before the release is sent; it
		// may well hold it before Unlock returns (the server hands over
		// before it replies), by more than a millisecond on a busy machine.
		unlocking := time.Since(start)
		require.NoError(t, holder.Unlock(ctx))
		select {
		case err := <-result:
			require.NoError(t, err)
		case <-time.After(2 * lease):
			t.Fatal("the waiter did not get the lock")
		}
		assert.Greater(t, acquiredAt.Load(), int64(unlocking), "the waiter held the lock before the release was sent")
		assert.Equal(t, lock.TriggerHandoff, ev.of(lock.EventAcquired)[0].Trigger,
			"handed over and woken on the new primary, not by polling")
		require.NoError(t, w.Unlock(ctx))
	})
}
