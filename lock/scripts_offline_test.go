package lock_test

// Offline tests of the lock scripts' edge cases on luatest: a
// virtual clock for leases, latches and the fence TTL, the call log for
// "nothing was written", and published messages as events. The behaviour
// of the Mutex on a real redis-server is in lock_test.go.

import (
	"context"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/luagen/luagen/lock"
	"github.com/luagen/luagen/luatest"
	"github.com/luagen/luagen/runtime"
)

var (
	offlineNow = time.UnixMilli(1_700_000_000_123)
	nowMicros  = offlineNow.UnixMicro()
)

const (
	lk      = "lock:{o}"
	fence   = "lock:{o}:fence"
	channel = "lock:{o}:unlock"
	lease   = 30 * time.Second
	latchTT = 10 * time.Second
	fenceTT = time.Hour
)

func offline(t *testing.T) (*luatest.Redis, *lock.Scripts) {
	r := luatest.New(t, luatest.WithTime(offlineNow))
	return r, lock.NewScripts(r)
}

func acquire(t *testing.T, s *lock.Scripts, owner, latch string, acks ...string) lock.AcquireResult {
	t.Helper()
	res, err := s.Acquire(context.Background(),
		lock.AcquireKeys{Lock: lk, Fence: fence, Latch: "lock:{o}:latch:" + latch, Acks: acks},
		lock.AcquireArgs{Owner: owner, Lease: lease, LatchTTL: latchTT, FenceTTL: fenceTT})
	require.NoError(t, err)
	return res
}

func release(s *lock.Scripts, owner, latch string, sharded bool) (lock.ReleaseReply, error) {
	return s.Release(context.Background(),
		lock.ReleaseKeys{Lock: lk, Channel: channel, Latch: "lock:{o}:latch:" + latch},
		lock.ReleaseArgs{Owner: owner, LatchTTL: latchTT, Sharded: sharded})
}

func ttl(t *testing.T, r *luatest.Redis, key string) time.Duration {
	t.Helper()
	d, ok := r.PTTL(key)
	require.True(t, ok, "%s exists", key)
	return d
}

func TestOfflineAcquireFirstReentrantRefused(t *testing.T) {
	r, s := offline(t)
	res := acquire(t, s, "a", "a.1")
	assert.Equal(t, lock.AcquireResult{Acquired: true, HoldCount: 1, Token: nowMicros}, res,
		"the first token is the server clock in µs")
	assert.Equal(t, map[string]string{"a": "1"}, r.HGetAll(lk))
	assert.Equal(t, lease, ttl(t, r, lk))
	v, _ := r.Get(fence)
	assert.Equal(t, strconv.FormatInt(nowMicros, 10), v)
	assert.Equal(t, fenceTT, ttl(t, r, fence))
	v, _ = r.Get("lock:{o}:latch:a.1")
	assert.Equal(t, "1 "+strconv.FormatInt(nowMicros, 10), v)
	assert.Equal(t, latchTT, ttl(t, r, "lock:{o}:latch:a.1"))

	r.Advance(10 * time.Second)
	res = acquire(t, s, "a", "a.2", "lock:{o}:latch:a.1")
	assert.Equal(t, lock.AcquireResult{Acquired: true, HoldCount: 2}, res, "reentrant: no new token")
	assert.Equal(t, lease, ttl(t, r, lk), "the lease is set from now again")
	assert.False(t, r.Exists("lock:{o}:latch:a.1"), "acked latch deleted")

	r.ResetCalls()
	res = acquire(t, s, "b", "b.1")
	assert.Equal(t, lock.AcquireResult{TTL: lease}, res, "refused with the holder's TTL")
	assert.Equal(t, []string{"GET lock:{o}:latch:b.1", "HEXISTS lock:{o} b", "EXISTS lock:{o}", "PTTL lock:{o}"},
		r.CommandLines(), "a refused attempt writes nothing")
}

func TestOfflineAcquireRetryReturnsFirstAnswer(t *testing.T) {
	r, s := offline(t)
	first := acquire(t, s, "a", "a.1")
	r.Advance(time.Second)
	again := acquire(t, s, "a", "a.1") // the same call, retried after a lost reply
	assert.Equal(t, first, again)
	assert.Equal(t, map[string]string{"a": "1"}, r.HGetAll(lk), "counted once")

	r.MustDo("DEL", lk) // the hold is gone meanwhile: the retry must not claim it
	again = acquire(t, s, "a", "a.1")
	assert.False(t, again.Acquired)
	assert.False(t, r.Exists(lk))
}

func TestOfflineAbandon(t *testing.T) {
	ctx := context.Background()
	r, s := offline(t)
	abandon := func(latch string) bool {
		t.Helper()
		ok, err := s.Abandon(ctx, lock.AbandonKeys{Lock: lk, Channel: channel, Latch: "lock:{o}:latch:" + latch},
			lock.AbandonArgs{Owner: "a", LatchTTL: latchTT})
		require.NoError(t, err)
		return ok
	}

	// Abandoned before it ran: the late acquire does nothing.
	assert.False(t, abandon("a.1"))
	v, _ := r.Get("lock:{o}:latch:a.1")
	assert.Equal(t, "X", v)
	assert.False(t, acquire(t, s, "a", "a.1").Acquired)
	assert.False(t, r.Exists(lk), "no hold taken by the late acquire")

	// Abandoned after it ran: the hold is given back and waiters notified.
	acquire(t, s, "a", "a.2")
	assert.True(t, abandon("a.2"))
	assert.False(t, r.Exists(lk))
	assert.Equal(t, []luatest.Event{{Command: "PUBLISH", Channel: channel, Message: "abandoned"}}, r.Events())
	assert.False(t, abandon("a.2"), "twice is once")

	// An abandoned reentrant acquire gives back one hold of two.
	acquire(t, s, "a", "a.3")
	acquire(t, s, "a", "a.4")
	assert.True(t, abandon("a.4"))
	assert.Equal(t, map[string]string{"a": "1"}, r.HGetAll(lk))
}

func TestOfflineRelease(t *testing.T) {
	r, s := offline(t)
	acquire(t, s, "a", "a.1")
	acquire(t, s, "a", "a.2")
	r.Advance(5 * time.Second)

	left, err := release(s, "a", "a.3", false)
	require.NoError(t, err)
	assert.EqualValues(t, 1, left)
	assert.Equal(t, lease-5*time.Second, ttl(t, r, lk), "a partial release leaves the lease alone")
	assert.Empty(t, r.Events())
	left, err = release(s, "a", "a.3", false) // retried after a lost reply
	require.NoError(t, err)
	assert.EqualValues(t, 1, left, "the first answer, not a second release")
	assert.Equal(t, map[string]string{"a": "1"}, r.HGetAll(lk))

	r.ResetCalls()
	_, err = release(s, "b", "b.1", false)
	require.ErrorIs(t, err, lock.ErrNotHeld)
	assert.Equal(t, []string{"GET lock:{o}:latch:b.1", "HEXISTS lock:{o} b"}, r.CommandLines(), "a non-owner writes nothing")

	left, err = release(s, "a", "a.4", true)
	require.NoError(t, err)
	assert.Equal(t, lock.ReleaseReleased, left)
	assert.False(t, r.Exists(lk))
	assert.Equal(t, []luatest.Event{{Command: "SPUBLISH", Channel: channel, Message: "released"}}, r.Events())
	left, err = release(s, "a", "a.4", true)
	require.NoError(t, err)
	assert.Equal(t, lock.ReleaseReleased, left, "a retried last release still says released")
	assert.Len(t, r.Events(), 1, "and does not notify twice")
}

func TestOfflineFencingTokens(t *testing.T) {
	r, s := offline(t)
	var tokens []int64
	take := func(owner string) {
		res := acquire(t, s, owner, owner)
		require.True(t, res.Acquired)
		tokens = append(tokens, res.Token)
		_, err := release(s, owner, owner+".r", false)
		require.NoError(t, err)
	}
	take("a") // the clock: nowMicros
	take("b") // same instant: last + 1
	r.Advance(fenceTT + time.Second)
	take("c") // the counter expired: the clock again, later than any token
	r.MustDo("SET", fence, strconv.FormatInt(nowMicros+10*3_600_000_000, 10))
	take("d") // the clock stepped back behind the counter: last + 1
	assert.Equal(t, []int64{nowMicros, nowMicros + 1, nowMicros + (fenceTT + time.Second).Microseconds(), nowMicros + 10*3_600_000_000 + 1}, tokens)
}

func TestOfflineRenewForceInspect(t *testing.T) {
	ctx := context.Background()
	r, s := offline(t)
	acquire(t, s, "a", "a.1")
	r.Advance(20 * time.Second)
	ok, err := s.Renew(ctx, lock.RenewKeys{Lock: lk}, lock.RenewArgs{Owner: "a", Lease: lease})
	require.NoError(t, err)
	assert.True(t, ok)
	assert.Equal(t, lease, ttl(t, r, lk), "renewed from now, not from the old deadline")
	ok, err = s.Renew(ctx, lock.RenewKeys{Lock: lk}, lock.RenewArgs{Owner: "b", Lease: lease})
	require.NoError(t, err)
	assert.False(t, ok, "not the owner")

	in, err := s.Inspect(ctx, lock.InspectKeys{Lock: lk}, lock.InspectArgs{Owner: "a"})
	require.NoError(t, err)
	assert.Equal(t, lock.Inspection{HoldCount: 1, Holders: 1, TTL: lease}, in)

	deleted, err := s.ForceUnlock(ctx, lock.ForceUnlockKeys{Lock: lk, Channel: channel}, lock.ForceUnlockArgs{})
	require.NoError(t, err)
	assert.True(t, deleted)
	assert.Equal(t, []luatest.Event{{Command: "PUBLISH", Channel: channel, Message: "forced"}}, r.Events())
	ok, err = s.Renew(ctx, lock.RenewKeys{Lock: lk}, lock.RenewArgs{Owner: "a", Lease: lease})
	require.NoError(t, err)
	assert.False(t, ok, "a renewal never resurrects a lost lock")
	assert.False(t, r.Exists(lk))
	in, err = s.Inspect(ctx, lock.InspectKeys{Lock: lk}, lock.InspectArgs{Owner: "a"})
	require.NoError(t, err)
	assert.Equal(t, lock.Inspection{TTL: -2 * time.Millisecond}, in)
}

// The scripts read before they write: a key of the wrong type fails the
// call before it takes a hold, so an error reply means nothing happened.
func TestOfflineErrorsComeBeforeWrites(t *testing.T) {
	r, s := offline(t)
	r.MustDo("HSET", fence, "f", "v") // a fence of the wrong type
	_, err := s.Acquire(context.Background(), lock.AcquireKeys{Lock: lk, Fence: fence, Latch: "lock:{o}:latch:1"},
		lock.AcquireArgs{Owner: "a", Lease: lease, LatchTTL: latchTT, FenceTTL: fenceTT})
	var se *runtime.ScriptError
	require.ErrorAs(t, err, &se)
	assert.Equal(t, "lua/lock/acquire.lua", se.File)
	assert.False(t, r.Exists(lk), "no hold was taken")
	assert.False(t, r.Exists("lock:{o}:latch:1"))
}

// A Mutex on luatest: a reply lost after Release ran is retried under the
// same latch and releases one hold, not two.
func TestOfflineMutexLostReply(t *testing.T) {
	r := luatest.New(t, luatest.WithTime(offlineNow))
	c := newClient(t, nil, lock.WithExecutor(r))
	m := newMutex(t, c, "o")
	ctx := context.Background()
	for range 2 {
		_, err := m.Lock(ctx)
		require.NoError(t, err)
	}
	r.LoseReply()
	require.NoError(t, m.Unlock(ctx))
	assert.Equal(t, map[string]string{m.Owner(): "1"}, r.HGetAll(lk))
	r.LoseReply()
	_, err := m.Lock(ctx)
	require.NoError(t, err)
	assert.Equal(t, map[string]string{m.Owner(): "2"}, r.HGetAll(lk), "the retried acquire counted once")
	require.NoError(t, m.Unlock(ctx))
	require.NoError(t, m.Unlock(ctx))
	assert.False(t, r.Exists(lk))
}

func handoff(t *testing.T, s *lock.Scripts, owner, heir, latch, heirLatch string) lock.HandoffResult {
	t.Helper()
	res, err := s.Handoff(context.Background(),
		lock.HandoffKeys{Lock: lk, Fence: fence, Channel: channel, Latch: "lock:{o}:latch:" + latch, HeirLatch: "lock:{o}:latch:" + heirLatch},
		lock.HandoffArgs{Owner: owner, Heir: heir, HeirLease: 2 * lease, LatchTTL: latchTT, HeirLatchTTL: 2 * latchTT, FenceTTL: fenceTT})
	require.NoError(t, err)
	return res
}

// The last hold goes straight to the heir: count 1, the heir's lease, a
// new fencing token, the grant in the heir's latch, no unlock message.
func TestOfflineHandoffGrants(t *testing.T) {
	r, s := offline(t)
	first := acquire(t, s, "a", "a.1")
	r.Advance(time.Second)
	res := handoff(t, s, "a", "b", "a.2", "b.1")
	want := first.Token + 1 // max(last + 1, the clock): the clock is 1 s on, in µs
	want = max(want, nowMicros+time.Second.Microseconds())
	assert.Equal(t, lock.HandoffResult{Held: true, Left: 0, Token: want}, res)
	assert.Equal(t, map[string]string{"b": "1"}, r.HGetAll(lk), "the heir holds one hold; the releaser none")
	assert.Equal(t, 2*lease, ttl(t, r, lk), "the heir's lease")
	v, _ := r.Get(fence)
	assert.Equal(t, strconv.FormatInt(want, 10), v)
	v, _ = r.Get("lock:{o}:latch:b.1")
	assert.Equal(t, strconv.FormatInt(want, 10), v, "the grant, as the heir's Acquire answer: one hold, this token")
	assert.Equal(t, 2*latchTT, ttl(t, r, "lock:{o}:latch:b.1"))
	assert.False(t, r.Exists("lock:{o}:latch:a.2"), "a grant is recorded once, in the heir's latch")
	assert.Empty(t, r.Events(), "no unlock message: the lock was never free")

	// The retry after a lost reply returns the first answer, grant included.
	r.Advance(time.Second)
	assert.Equal(t, res, handoff(t, s, "a", "b", "a.2", "b.1"))
	assert.Equal(t, map[string]string{"b": "1"}, r.HGetAll(lk))

	// The heir settles its grant with its latch: an Acquire under it
	// answers the grant (sealed or not) and counts no second hold.
	got := acquire(t, s, "b", "b.1")
	assert.Equal(t, lock.AcquireResult{Acquired: true, HoldCount: 1, Token: want}, got)
	assert.Equal(t, map[string]string{"b": "1"}, r.HGetAll(lk))
}

func TestOfflineHandoffEdges(t *testing.T) {
	r, s := offline(t)
	// Not held: nothing changes, nothing is written.
	r.ResetCalls()
	assert.Equal(t, lock.HandoffResult{}, handoff(t, s, "a", "b", "a.1", "b.1"))
	assert.Equal(t, []string{"GET lock:{o}:latch:a.1", "GET lock:{o}:latch:b.1", "HGET lock:{o} a"}, r.CommandLines())
	assert.False(t, r.Exists("lock:{o}:latch:b.1"))

	// Reentrant: one of two holds is given back, the heir gets nothing.
	acquire(t, s, "a", "a.2")
	acquire(t, s, "a", "a.3")
	assert.Equal(t, lock.HandoffResult{Held: true, Left: 1}, handoff(t, s, "a", "b", "a.4", "b.2"))
	assert.Equal(t, map[string]string{"a": "1"}, r.HGetAll(lk))
	assert.False(t, r.Exists("lock:{o}:latch:b.2"))
	assert.Equal(t, lock.HandoffResult{Held: true, Left: 1}, handoff(t, s, "a", "b", "a.4", "b.2"), "its retry")
	assert.Equal(t, map[string]string{"a": "1"}, r.HGetAll(lk))

	// The heir gave up (its latch exists): a plain release that notifies.
	r.MustDo("SET", "lock:{o}:latch:b.3", "X")
	assert.Equal(t, lock.HandoffResult{Held: true}, handoff(t, s, "a", "b", "a.5", "b.3"))
	assert.False(t, r.Exists(lk))
	assert.Equal(t, []luatest.Event{{Command: "PUBLISH", Channel: channel, Message: "released"}}, r.Events())
	v, _ := r.Get("lock:{o}:latch:b.3")
	assert.Equal(t, "X", v, "untouched")
}

// A heir whose release outcome is unknown settles it with a sealed
// Acquire under the grant's latch. Refused, the seal stops a Handoff that
// arrives late from granting; an Abandon gives a grant back.
func TestOfflineSealedAcquireAndAbandonedGrant(t *testing.T) {
	ctx := context.Background()
	r, s := offline(t)
	acquire(t, s, "a", "a.1")
	sealed, err := s.Acquire(ctx, lock.AcquireKeys{Lock: lk, Fence: fence, Latch: "lock:{o}:latch:b.1"},
		lock.AcquireArgs{Owner: "b", Lease: lease, LatchTTL: latchTT, FenceTTL: fenceTT, Seal: true})
	require.NoError(t, err)
	assert.Equal(t, lock.AcquireResult{TTL: lease}, sealed)
	v, _ := r.Get("lock:{o}:latch:b.1")
	assert.Equal(t, "X", v)
	assert.Equal(t, latchTT, ttl(t, r, "lock:{o}:latch:b.1"))
	res := handoff(t, s, "a", "b", "a.2", "b.1") // the late Handoff
	assert.Equal(t, lock.HandoffResult{Held: true}, res, "released, not granted")
	assert.False(t, r.Exists(lk))

	// A grant whose heir has left is given back by Abandon with its latch.
	acquire(t, s, "a", "a.3")
	require.NotZero(t, handoff(t, s, "a", "b", "a.4", "b.2").Token)
	ok, err := s.Abandon(ctx, lock.AbandonKeys{Lock: lk, Channel: channel, Latch: "lock:{o}:latch:b.2"},
		lock.AbandonArgs{Owner: "b", LatchTTL: latchTT})
	require.NoError(t, err)
	assert.True(t, ok)
	assert.False(t, r.Exists(lk), "the lock is free again")
}
