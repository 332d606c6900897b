package noreply_test

import (
	"context"
	"errors"
	"strconv"
	"strings"
	"testing"

	"github.com/redis/rueidis"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/luagen/luagen/internal/exectest"
	"github.com/luagen/luagen/internal/noreply"
	"github.com/luagen/luagen/luatest"
	"github.com/luagen/luagen/redistest"
	"github.com/luagen/luagen/runtime"
)

// do runs one command against the keyspace the scripts run on and returns
// its reply as text: an integer in decimal, a string as it is, "(nil)",
// and an array as its elements joined with spaces.
type do func(t *testing.T, args ...string) string

func valueText(v runtime.Value) string {
	switch v.Kind {
	case runtime.KindInt:
		return strconv.FormatInt(v.Int, 10)
	case runtime.KindArray:
		var parts []string
		for _, e := range v.Array {
			parts = append(parts, valueText(e))
		}
		return strings.Join(parts, " ")
	case runtime.KindNil:
		return "(nil)"
	}
	return v.Str
}

// checkPark calls Park through the method and through a batch on a
// queue's keys (one hash tag, built by the caller as BullMQ's are) and
// checks every outcome and the keyspace it leaves: the reply is discarded,
// a job whose parent is gone fails with ErrMissingParent and changes
// nothing, a missing job is no error and changes nothing.
func checkPark(t *testing.T, s *noreply.Scripts, do do) {
	ctx := context.Background()
	keys := func(id string) noreply.ParkKeys {
		return noreply.ParkKeys{Wait: "bull:{q}:wait", Parked: "bull:{q}:parked", Job: "bull:{q}:" + id}
	}
	do(t, "RPUSH", "bull:{q}:wait", "1", "2", "3", "4")
	do(t, "HSET", "bull:{q}:1", "name", "plain")
	do(t, "HSET", "bull:{q}:2", "name", "child", "parentKey", "bull:{q}:1")
	do(t, "HSET", "bull:{q}:3", "name", "orphan", "parentKey", "bull:{q}:gone")
	do(t, "HSET", "bull:{q}:4", "name", "batched")

	// The reply (the wait list's length, 3) is discarded.
	require.NoError(t, s.Park(ctx, keys("1"), noreply.ParkArgs{ID: "1", At: 1_700_000_000_001}))
	// The parent key is read from the job and built from the queue's
	// prefix: luatest's default KEYS check takes it (bull:{q}...).
	require.NoError(t, s.Park(ctx, keys("2"), noreply.ParkArgs{ID: "2", At: 1_700_000_000_002}))

	err := s.Park(ctx, keys("3"), noreply.ParkArgs{ID: "3", At: 1_700_000_000_003})
	require.ErrorIs(t, err, noreply.ErrMissingParent)
	var ce *runtime.CodeError
	require.ErrorAs(t, err, &ce)
	assert.Equal(t, "-5", ce.Reply())
	// A missing job: the script returns nothing, a nil reply, no error.
	require.NoError(t, s.Park(ctx, keys("9"), noreply.ParkArgs{ID: "9", At: 1_700_000_000_009}))

	var b runtime.Batch
	ok := s.QueuePark(&b, keys("4"), noreply.ParkArgs{ID: "4", At: 1_700_000_000_004})
	orphan := s.QueuePark(&b, keys("3"), noreply.ParkArgs{ID: "3", At: 1_700_000_000_005})
	missing := s.QueuePark(&b, keys("8"), noreply.ParkArgs{ID: "8", At: 1_700_000_000_008})
	require.ErrorIs(t, b.Send(ctx), noreply.ErrMissingParent)
	assert.NoError(t, ok.Err())
	assert.ErrorIs(t, orphan.Err(), noreply.ErrMissingParent)
	assert.NoError(t, missing.Err())
	v, err := ok.Result()
	assert.NoError(t, err)
	assert.Equal(t, struct{}{}, v)

	assert.Equal(t, "3", do(t, "LRANGE", "bull:{q}:wait", "0", "-1"))
	assert.Equal(t, "1 2 4", do(t, "ZRANGE", "bull:{q}:parked", "0", "-1"))
	assert.Equal(t, "1", do(t, "ZCOUNT", "bull:{q}:parked", "1700000000004", "1700000000004"))
	for id, want := range map[string]string{"1": "parked", "2": "parked", "3": "(nil)", "4": "parked"} {
		assert.Equal(t, want, do(t, "HGET", "bull:{q}:"+id, "state"), "job %s", id)
	}
	assert.Equal(t, "0", do(t, "EXISTS", "bull:{q}:8", "bull:{q}:9"))
}

func TestParkLuatest(t *testing.T) {
	r := luatest.Start(t)
	checkPark(t, noreply.New(r), func(t *testing.T, args ...string) string {
		t.Helper()
		v, err := r.Do(args...)
		require.NoError(t, err, "%q", args)
		return valueText(v)
	})
}

func TestParkRedis(t *testing.T) {
	exectest.Run(t, func(t *testing.T, k exectest.Kind) {
		srv := redistest.Start(t)
		c := srv.Client(t)
		checkPark(t, noreply.New(k.Single(t, srv)), func(t *testing.T, args ...string) string {
			t.Helper()
			msg, err := c.Do(context.Background(), c.B().Arbitrary(args...).Build()).ToMessage()
			if rueidis.IsRedisNil(err) {
				return "(nil)"
			}
			require.NoError(t, err, "%q", args)
			return messageText(t, msg)
		})
	})
}

func messageText(t *testing.T, m rueidis.RedisMessage) string {
	if m.IsInt64() {
		n, _ := m.ToInt64()
		return strconv.FormatInt(n, 10)
	}
	if arr, err := m.ToArray(); err == nil {
		var parts []string
		for _, e := range arr {
			parts = append(parts, messageText(t, e))
		}
		return strings.Join(parts, " ")
	}
	s, err := m.ToString()
	require.NoError(t, err)
	return s
}

// The none method's contract on the plain error path: an error the script
// raises is not discarded.
func TestParkRaisedErrorIsNotDiscarded(t *testing.T) {
	r := luatest.Start(t)
	_, err := r.Do("SET", "bull:{q}:5", "not a hash")
	require.NoError(t, err)
	err = noreply.New(r).Park(context.Background(),
		noreply.ParkKeys{Wait: "bull:{q}:wait", Parked: "bull:{q}:parked", Job: "bull:{q}:5"}, noreply.ParkArgs{ID: "5", At: 1})
	var se *runtime.ScriptError
	require.ErrorAs(t, err, &se)
	assert.Equal(t, "internal/noreply/park.lua", se.File)
	assert.Equal(t, 14, se.Line)
	assert.Contains(t, se.Error(), "WRONGTYPE")
	assert.False(t, errors.Is(err, noreply.ErrMissingParent))
}
