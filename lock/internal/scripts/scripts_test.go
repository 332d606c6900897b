package scripts_test

// Offline tests of the lock scripts on luatest, with a virtual clock: the
// queue's order and deadlines, handoffs and their messages, tombs, and the
// latches of the two calls that need one. The Mutex on a real
// redis-server is tested in package lock.

import (
	"context"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/luagen/luagen/lock/internal/scripts"
	"github.com/luagen/luagen/luatest"
)

var offlineNow = time.UnixMilli(1_700_000_000_123)

// k is the keys of lock "o" under prefix "lock:"; TestKeyLayout spells them.
var (
	k                             = scripts.LockKeysFor("lock:", "o")
	lk, fence, queue, waits, wake = k.Lock, k.Fence, k.Queue, k.Waits, k.Wake
)

const (
	lease    = 30 * time.Second
	queueTTL = 3 * time.Second
	grant    = 3 * time.Second
)

func offline(t *testing.T) (*luatest.Redis, *scripts.Scripts) {
	r := luatest.Start(t, luatest.WithTime(offlineNow))
	return r, scripts.New(r)
}

func acquire(t *testing.T, s *scripts.Scripts, owner string, attempt int64, latch ...string) scripts.AcquireResult {
	t.Helper()
	return acquireStarve(t, s, owner, attempt, 0, latch...)
}

// acquireStarve is acquire by a waiter with a starve bound (a polling
// waiter; 0: strict FIFO).
func acquireStarve(t *testing.T, s *scripts.Scripts, owner string, attempt int64, starve time.Duration, latch ...string) scripts.AcquireResult {
	t.Helper()
	res, err := s.Acquire(context.Background(),
		scripts.AcquireKeys{Lock: lk, Fence: fence, Queue: queue, Waits: waits, Tomb: k.Tomb(owner), Latch: latch},
		scripts.AcquireArgs{Owner: owner, Attempt: attempt, Lease: lease, FenceTTL: time.Hour, QueueTTL: queueTTL, GrantLease: grant, LatchTTL: 10 * time.Second, Starve: starve})
	require.NoError(t, err)
	return res
}

func release(s *scripts.Scripts, owner string, latch ...string) (scripts.ReleaseReply, error) {
	return s.Release(context.Background(),
		scripts.ReleaseKeys{Lock: lk, Fence: fence, Queue: queue, Waits: waits, Wake: wake, Latch: latch},
		scripts.ReleaseArgs{Owner: owner, FenceTTL: time.Hour, LatchTTL: 10 * time.Second})
}

func abandon(t *testing.T, s *scripts.Scripts, owner string, attempt int64) bool {
	t.Helper()
	gave, err := s.Abandon(context.Background(),
		scripts.AbandonKeys{Lock: lk, Fence: fence, Queue: queue, Waits: waits, Wake: wake, Tomb: k.Tomb(owner)},
		scripts.AbandonArgs{Owner: owner, Attempt: attempt, TombTTL: 10 * time.Second, FenceTTL: time.Hour})
	require.NoError(t, err)
	return gave
}

// The generated constructor lays the keys out as the package
// documentation of lock says: every key under one {name} hash tag.
func TestKeyLayout(t *testing.T) {
	k := scripts.LockKeysFor("app:", "order:42")
	assert.Equal(t, []string{"app:{order:42}", "app:{order:42}:fence", "app:{order:42}:queue", "app:{order:42}:waits", "app:{order:42}:wake:"},
		[]string{k.Lock, k.Fence, k.Queue, k.Waits, k.Wake})
	assert.Equal(t, "app:{order:42}:tomb:c1.7", k.Tomb("c1.7"))
	assert.Equal(t, "app:{order:42}:latch:c1.7.-3", k.Latch("c1.7", -3))
	assert.Equal(t, scripts.ForceUnlockKeys{Lock: k.Lock, Fence: k.Fence, Queue: k.Queue, Waits: k.Waits, Wake: k.Wake}, k.ForceUnlock())
	assert.Equal(t, scripts.RenewKeys{Lock: k.Lock}, k.Renew())
	assert.Equal(t, scripts.InspectKeys{Lock: k.Lock}, k.Inspect())
}

// A release hands the lock to the first waiter: one hold, the grant lease,
// a larger token, and one message on the heir's Client's channel only.
func TestReleaseHandsOverInOrder(t *testing.T) {
	r, s := offline(t)
	a := acquire(t, s, "A.1", 1)
	require.True(t, a.Acquired)
	assert.Equal(t, offlineNow.UnixMicro(), a.Token, "the first token is the server clock in µs")
	b := acquire(t, s, "B.1", 1)
	assert.False(t, b.Acquired)
	assert.Equal(t, lease, b.TTL, "a waiter learns the holder's lease")
	assert.Zero(t, b.Ahead, "and that it is next")
	c := acquire(t, s, "C.7", 1)
	assert.False(t, c.Acquired)
	assert.EqualValues(t, 1, c.Ahead, "one waiter ahead")
	assert.Equal(t, []string{"B.1", "C.7"}, r.List(queue))
	b = acquire(t, s, "B.1", 2)
	assert.False(t, b.Acquired, "a later attempt keeps its place")
	assert.Zero(t, b.Ahead)
	assert.Equal(t, []string{"B.1", "C.7"}, r.List(queue))

	r.Advance(time.Millisecond)
	left, err := release(s, "A.1")
	require.NoError(t, err)
	assert.EqualValues(t, 0, left)
	assert.Equal(t, map[string]string{"B.1": "1"}, r.HGetAll(lk))
	ttl, _ := r.PTTL(lk)
	assert.Equal(t, grant, ttl)
	token := a.Token + 1000
	ev := r.Events()
	require.Len(t, ev, 1)
	assert.Equal(t, wake+"B", ev[0].Channel)
	assert.Equal(t, "B.1 "+strconv.FormatInt(token, 10), ev[0].Message)
	assert.Equal(t, []string{"C.7"}, r.List(queue))

	// B learns of it by an attempt too (a lost message): the same hold and
	// token, the lease set in full.
	got := acquire(t, s, "B.1", 3)
	assert.Equal(t, scripts.AcquireResult{Acquired: true, HoldCount: 1, TTL: lease, Token: token}, got)
	ttl, _ = r.PTTL(lk)
	assert.Equal(t, lease, ttl)
	_, err = release(s, "B.1")
	require.NoError(t, err)
	assert.Equal(t, map[string]string{"C.7": "1"}, r.HGetAll(lk))
	_, err = release(s, "C.7")
	require.NoError(t, err)
	assert.False(t, r.Exists(lk))
	assert.Len(t, r.Events(), 2, "no message when nobody waits")
}

// A waiter whose place has expired is skipped; a newcomer cannot pass a
// live waiter even when the lock is free.
func TestDeadWaitersAreSkipped(t *testing.T) {
	r, s := offline(t)
	require.True(t, acquire(t, s, "A.1", 1).Acquired)
	require.False(t, acquire(t, s, "DEAD.1", 1).Acquired)
	r.Advance(2 * time.Second)
	require.False(t, acquire(t, s, "B.1", 1).Acquired)
	r.Advance(queueTTL - time.Second) // DEAD's place is over, B's is not
	_, err := release(s, "A.1")
	require.NoError(t, err)
	assert.Equal(t, map[string]string{"B.1": "1"}, r.HGetAll(lk))
	assert.Empty(t, r.List(queue))

	// The lock expires with B's grant; C queued behind nobody takes it,
	// but not while a live waiter is ahead.
	r.Advance(500 * time.Millisecond)
	require.False(t, acquire(t, s, "C.1", 1).Acquired)
	r.Advance(grant - 499*time.Millisecond) // B's grant is over, C's place is not
	assert.False(t, r.Exists(lk))
	res := acquire(t, s, "D.1", 1)
	assert.False(t, res.Acquired, "C is ahead")
	assert.Equal(t, -2*time.Millisecond, res.TTL)
	assert.True(t, acquire(t, s, "C.1", 2).Acquired)
}

// Polling waiters (a starve bound in their entry) follow sync.Mutex: in
// normal mode, while the head has waited less than its bound, a release
// frees the lock (no handoff, no message) and anyone takes it, a newcomer
// or a waiter further back (which then leaves the queue); once the head
// has waited past its bound, releases hand the lock over in queue order
// and newcomers are refused (starvation mode), until the head is a waiter
// that has not waited that long.
func TestPollingWaitersNormalAndStarvation(t *testing.T) {
	const starve = 20 * time.Millisecond
	r, s := offline(t)
	require.True(t, acquireStarve(t, s, "A.1", 1, starve).Acquired)
	require.False(t, acquireStarve(t, s, "B.1", 1, starve).Acquired)
	r.Advance(time.Millisecond)
	require.False(t, acquireStarve(t, s, "C.1", 1, starve).Acquired)
	assert.Equal(t, []string{"B.1", "C.1"}, r.List(queue))
	assert.Equal(t, map[string]string{
		"B.1": "1700000003123 3000 1700000000123 20",
		"C.1": "1700000003124 3000 1700000000124 20",
	}, r.HGetAll(waits), "deadline, grant lease, since, starve bound (server ms)")

	// Normal mode: the release frees the lock; the releaser takes it again.
	r.Advance(time.Millisecond)
	_, err := release(s, "A.1")
	require.NoError(t, err)
	assert.False(t, r.Exists(lk), "not handed to B, who has waited 2 ms")
	assert.Empty(t, r.Events(), "nobody is told")
	require.True(t, acquireStarve(t, s, "A.1", 2, starve).Acquired, "the releaser takes it again")
	r.Advance(time.Millisecond)
	require.False(t, acquireStarve(t, s, "B.1", 2, starve).Acquired, "B keeps its place")
	_, err = release(s, "A.1")
	require.NoError(t, err)
	// A waiter further back takes it, and leaves the queue.
	require.True(t, acquireStarve(t, s, "C.1", 2, starve).Acquired)
	assert.Equal(t, []string{"B.1"}, r.List(queue))
	assert.NotContains(t, r.HGetAll(waits), "C.1")
	_, err = release(s, "C.1")
	require.NoError(t, err)

	// Starvation mode: B has waited past its bound (its attempts renew
	// its place, not its since).
	r.Advance(starve)
	assert.False(t, acquireStarve(t, s, "D.1", 1, starve).Acquired, "a newcomer is refused: B has waited past its bound")
	require.True(t, acquireStarve(t, s, "B.1", 3, starve).Acquired, "B takes the free lock")
	assert.Equal(t, []string{"D.1"}, r.List(queue))
	r.Advance(starve)
	_, err = release(s, "B.1")
	require.NoError(t, err)
	assert.Equal(t, map[string]string{"D.1": "1"}, r.HGetAll(lk), "handed to D, who has waited past its bound")
	assert.Len(t, r.Events(), 1, "and told so")
	assert.Empty(t, r.List(queue))

	// A strict waiter (woken by messages) is handed the lock at once.
	_, err = release(s, "D.1")
	require.NoError(t, err)
	require.True(t, acquire(t, s, "G.1", 1).Acquired)
	require.False(t, acquire(t, s, "H.1", 1).Acquired)
	_, err = release(s, "G.1")
	require.NoError(t, err)
	assert.Equal(t, map[string]string{"H.1": "1"}, r.HGetAll(lk))
}

// Abandon raises the tomb: the abandoned attempt and earlier ones do
// nothing when they arrive late; the owner leaves the queue, and a lock
// handed to it goes to the next waiter.
func TestAbandon(t *testing.T) {
	r, s := offline(t)
	assert.False(t, abandon(t, s, "A.1", 4), "nothing held")
	res := acquire(t, s, "A.1", 4)
	assert.False(t, res.Acquired, "the abandoned attempt arrives late")
	assert.False(t, r.Exists(lk))
	assert.True(t, acquire(t, s, "A.1", 5).Acquired, "a later attempt works")

	require.False(t, acquire(t, s, "B.1", 1).Acquired)
	require.False(t, acquire(t, s, "C.1", 1).Acquired)
	_, err := release(s, "A.1") // to B
	require.NoError(t, err)
	assert.True(t, abandon(t, s, "B.1", 1), "B gave up as the lock came: given back")
	assert.Equal(t, map[string]string{"C.1": "1"}, r.HGetAll(lk), "and handed on")
	assert.Len(t, r.Events(), 2)

	require.False(t, acquire(t, s, "D.1", 1).Acquired)
	assert.False(t, abandon(t, s, "D.1", 1))
	assert.Empty(t, r.List(queue))
	assert.Empty(t, r.HGetAll(waits))
}

// Only the reentrant acquire and the release that leaves holds write a
// latch; a retry under it returns the first answer.
func TestLatches(t *testing.T) {
	r, s := offline(t)
	require.True(t, acquire(t, s, "A.1", 1).Acquired)
	assert.ElementsMatch(t, []string{lk, fence}, r.Keys(), "a first acquire writes no latch")
	l1 := k.Latch("A.1", 1)
	assert.Equal(t, scripts.AcquireResult{Acquired: true, HoldCount: 2, TTL: lease}, acquire(t, s, "A.1", 2, l1))
	r.Advance(time.Second)
	assert.Equal(t, scripts.AcquireResult{Acquired: true, HoldCount: 2, TTL: lease - time.Second}, acquire(t, s, "A.1", 2, l1),
		"a retry: the first answer, with the lease left now")
	assert.Equal(t, map[string]string{"A.1": "2"}, r.HGetAll(lk))
	l2 := k.Latch("A.1", 2)
	left, err := release(s, "A.1", l2)
	require.NoError(t, err)
	assert.EqualValues(t, 1, left)
	left, err = release(s, "A.1", l2)
	require.NoError(t, err)
	assert.EqualValues(t, 1, left, "a retry")
	left, err = release(s, "A.1")
	require.NoError(t, err)
	assert.EqualValues(t, 0, left)
	_, err = release(s, "A.1")
	assert.ErrorIs(t, err, scripts.ErrNotHeld)
}
