package scripts_test

// The lock scripts share one ARGV layout (a value sits at the same index
// in every script that takes it) and helpers under lua/lock/lib that read
// it. These tests give every argument a value no other one has, so that an
// argument sent where a script or helper does not read it shows up as a
// wrong TTL, reply or command, and check that an error inside a helper
// names the helper's own file and line.

import (
	"context"
	"errors"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/luagen/luagen/lock/internal/scripts"
	"github.com/luagen/luagen/luatest"
	"github.com/luagen/luagen/runtime"
)

// ttlOf is key's remaining lifetime; the virtual clock stands still, so
// it is the TTL a script set, exactly.
func ttlOf(t *testing.T, r *luatest.Redis, key string) time.Duration {
	t.Helper()
	ttl, ok := r.PTTL(key)
	require.True(t, ok, "%s exists", key)
	return ttl
}

func TestArgsReachTheirScripts(t *testing.T) {
	ctx := context.Background()
	r, s := offline(t)
	acq := func(owner string, attempt int64, latch ...string) scripts.AcquireResult {
		t.Helper()
		res, err := s.Acquire(ctx,
			scripts.AcquireKeys{Lock: lk, Fence: fence, Queue: queue, Waits: waits, Tomb: k.Tomb(owner), Latch: latch},
			scripts.AcquireArgs{Owner: owner, Lease: 31 * time.Second, LatchTTL: 7 * time.Second, FenceTTL: 13 * time.Second,
				Attempt: attempt, QueueTTL: 3 * time.Second, GrantLease: 2 * time.Second})
		require.NoError(t, err)
		return res
	}

	// Acquire: lease, fence TTL; the reentrant form's latch TTL.
	require.True(t, acq("A.1", 1).Acquired)
	assert.Equal(t, 31*time.Second, ttlOf(t, r, lk), "lease")
	assert.Equal(t, 13*time.Second, ttlOf(t, r, fence), "fenceTTL")
	l1 := k.Latch("A.1", 1)
	require.EqualValues(t, 2, acq("A.1", 2, l1).HoldCount)
	assert.Equal(t, 7*time.Second, ttlOf(t, r, l1), "latchTTL")

	// A refused attempt queues for queueTTL and asks for grantLease.
	require.False(t, acq("B.1", 1).Acquired)
	require.False(t, acq("C.1", 1).Acquired)
	require.False(t, acq("D.1", 1).Acquired)
	assert.Equal(t, 3*time.Second, ttlOf(t, r, queue), "queueTTL")
	deadline := offlineNow.Add(3 * time.Second).UnixMilli()
	assert.Equal(t, strings.Fields("B.1 C.1 D.1"), r.List(queue))
	assert.Equal(t, map[string]string{"B.1": strconv.FormatInt(deadline, 10) + " 2000", "C.1": strconv.FormatInt(deadline, 10) + " 2000", "D.1": strconv.FormatInt(deadline, 10) + " 2000"},
		r.HGetAll(waits), "deadline = now + queueTTL, then grantLease")

	// A tomb at or above attempt stops it.
	r.Set(k.Tomb("E.1"), "4")
	assert.False(t, acq("E.1", 4).Acquired, "attempt 4 under tomb 4")
	assert.Equal(t, strings.Fields("B.1 C.1 D.1"), r.List(queue), "and does not queue")

	// Release: latch TTL while holds remain; the handoff's fence TTL and
	// sharded.
	rel := func(owner string, sharded bool, latch ...string) scripts.ReleaseReply {
		t.Helper()
		left, err := s.Release(ctx,
			scripts.ReleaseKeys{Lock: lk, Fence: fence, Queue: queue, Waits: waits, Wake: wake, Latch: latch},
			scripts.ReleaseArgs{Owner: owner, Sharded: sharded, LatchTTL: 9 * time.Second, FenceTTL: 17 * time.Second})
		require.NoError(t, err)
		return left
	}
	l2 := k.Latch("A.1", 2)
	require.EqualValues(t, 1, rel("A.1", false, l2))
	assert.Equal(t, 9*time.Second, ttlOf(t, r, l2), "latchTTL")
	require.EqualValues(t, 0, rel("A.1", true))
	assert.Equal(t, map[string]string{"B.1": "1"}, r.HGetAll(lk))
	assert.Equal(t, 2*time.Second, ttlOf(t, r, lk), "the grant lease B asked for")
	assert.Equal(t, 17*time.Second, ttlOf(t, r, fence), "fenceTTL")
	require.Len(t, r.Events(), 1)
	assert.Equal(t, "SPUBLISH", r.Events()[0].Command, "sharded")

	// Abandon: attempt, tomb TTL; the handoff's fence TTL and sharded.
	gave, err := s.Abandon(ctx,
		scripts.AbandonKeys{Lock: lk, Fence: fence, Queue: queue, Waits: waits, Wake: wake, Tomb: k.Tomb("B.1")},
		scripts.AbandonArgs{Owner: "B.1", Sharded: false, TombTTL: 5 * time.Second, FenceTTL: 19 * time.Second, Attempt: 6})
	require.NoError(t, err)
	assert.True(t, gave)
	tomb, _ := r.Get(k.Tomb("B.1"))
	assert.Equal(t, "6", tomb, "attempt")
	assert.Equal(t, 5*time.Second, ttlOf(t, r, k.Tomb("B.1")), "tombTTL")
	assert.Equal(t, map[string]string{"C.1": "1"}, r.HGetAll(lk))
	assert.Equal(t, 19*time.Second, ttlOf(t, r, fence), "fenceTTL")
	require.Len(t, r.Events(), 2)
	assert.Equal(t, "PUBLISH", r.Events()[1].Command, "not sharded")

	// ForceUnlock: the handoff's fence TTL and sharded.
	deleted, err := s.ForceUnlock(ctx, k.ForceUnlock(), scripts.ForceUnlockArgs{FenceTTL: 23 * time.Second, Sharded: true})
	require.NoError(t, err)
	assert.True(t, deleted)
	assert.Equal(t, map[string]string{"D.1": "1"}, r.HGetAll(lk))
	assert.Equal(t, 23*time.Second, ttlOf(t, r, fence), "fenceTTL")
	require.Len(t, r.Events(), 3)
	assert.Equal(t, "SPUBLISH", r.Events()[2].Command, "sharded")

	// Renew and Inspect: owner and lease.
	ok, err := s.Renew(ctx, k.Renew(), scripts.RenewArgs{Owner: "D.1", Lease: 29 * time.Second})
	require.NoError(t, err)
	assert.True(t, ok)
	in, err := s.Inspect(ctx, k.Inspect(), scripts.InspectArgs{Owner: "D.1"})
	require.NoError(t, err)
	assert.Equal(t, scripts.Inspection{HoldCount: 1, Holders: 1, TTL: 29 * time.Second}, in)
}

// An error raised inside lib/handoff.lua names that file and the line of
// the failing call, not a line of the combined body, in each script that
// includes it.
func TestHandoffErrorNamesItsLine(t *testing.T) {
	src, err := os.ReadFile("../../../lua/lock/lib/handoff.lua")
	require.NoError(t, err)
	line := 0
	for i, l := range strings.Split(string(src), "\n") {
		if strings.Contains(l, "redis.call('PUBLISH'") {
			line = i + 1
		}
	}
	require.NotZero(t, line)

	for _, name := range []string{"Release", "Abandon", "ForceUnlock"} {
		t.Run(name, func(t *testing.T) {
			ctx := context.Background()
			r, s := offline(t)
			require.True(t, acquire(t, s, "A.1", 1).Acquired)
			require.False(t, acquire(t, s, "B.1", 1).Acquired)
			r.FailCommand("PUBLISH", "ERR publish refused")
			switch name {
			case "Release":
				_, err = release(s, "A.1")
			case "Abandon":
				_, err = s.Abandon(ctx,
					scripts.AbandonKeys{Lock: lk, Fence: fence, Queue: queue, Waits: waits, Wake: wake, Tomb: k.Tomb("A.1")},
					scripts.AbandonArgs{Owner: "A.1", TombTTL: time.Second, FenceTTL: time.Hour, Attempt: 1})
			case "ForceUnlock":
				_, err = s.ForceUnlock(ctx, k.ForceUnlock(), scripts.ForceUnlockArgs{FenceTTL: time.Hour})
			}
			var se *runtime.ScriptError
			require.True(t, errors.As(err, &se), "a ScriptError: %v", err)
			assert.Equal(t, "lua/lock/lib/handoff.lua", se.File)
			assert.Equal(t, line, se.Line)
		})
	}
}
