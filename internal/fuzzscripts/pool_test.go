package fuzzscripts_test

import (
	"context"
	goruntime "runtime"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/redis/rueidis"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/luagen/luagen/internal/exectest"
	"github.com/luagen/luagen/internal/fuzzscripts"
	"github.com/luagen/luagen/luatest"
	"github.com/luagen/luagen/redistest"
	"github.com/luagen/luagen/runtime"
)

// TestRecycledCallBuffers tries to break luagenimpl.CallPool's promise: a
// generated method reuses its call buffer only when nothing can read it any
// more. What Keep stored and answered must stay as sent while later calls,
// serial and concurrent, reuse the buffers with other numbers — on luatest
// (which keeps ARGV in its keyspace and could answer with the very same
// strings) and on a real server through both executors (rueidis pipelines
// concurrent calls onto one connection).
func TestRecycledCallBuffers(t *testing.T) {
	at := time.UnixMilli(1_700_000_000_123)
	check := func(t *testing.T, s *fuzzscripts.Scripts, get func(key string) string) {
		ctx := context.Background()
		first, err := s.Keep(ctx, fuzzscripts.KeepKeys{Kept: "{p}first"}, fuzzscripts.KeepArgs{N: 1111111, At: at})
		require.NoError(t, err)
		var wg sync.WaitGroup
		for g := range 8 {
			wg.Go(func() {
				for i := range 100 {
					n := int64(9_000_000 + 1000*g + i)
					key := "{p}g" + strconv.Itoa(g)
					got, err := s.Keep(ctx, fuzzscripts.KeepKeys{Kept: key}, fuzzscripts.KeepArgs{N: n, At: at.Add(time.Duration(n))})
					if !assert.NoError(t, err) || !assert.Equal(t, []string{strconv.FormatInt(n, 10), strconv.FormatInt(at.Add(time.Duration(n)).UnixMilli(), 10)}, got) {
						return
					}
				}
			})
		}
		wg.Wait()
		assert.Equal(t, []string{"1111111", "1700000000123"}, first, "the first reply changed after its buffer was reused")
		assert.Equal(t, "1111111 1700000000123", get("{p}first"), "the stored value changed after its buffer was reused")
	}
	t.Run("luatest", func(t *testing.T) {
		r := luatest.Start(t)
		check(t, fuzzscripts.New(r), func(key string) string {
			v, ok := r.Get(key)
			require.True(t, ok, key)
			return v
		})
	})
	exectest.Run(t, func(t *testing.T, k exectest.Kind) {
		srv := redistest.Start(t)
		check(t, fuzzscripts.New(k.Single(t, srv)), func(key string) string { return srv.Do(t, "GET", key) })
	})
}

// TestWarmCallAllocatesAsRawRueidis: a warm generated method with a fixed
// number of keys and args allocates no more than raw rueidis Lua.Exec
// sending the same script with the same strings (and, with the
// call buffer recycled, nothing of its own).
func TestWarmCallAllocatesAsRawRueidis(t *testing.T) {
	srv := redistest.Start(t)
	c := srv.Client(t)
	ctx := context.Background()
	s := fuzzscripts.New(runtime.NewRueidisExecutor(c))
	lua := rueidis.NewLuaScript(fuzzscripts.TallyScript().Source())
	at := time.Now().Add(time.Hour)
	keys, args := fuzzscripts.TallyKeys{Counter: "tally"}, fuzzscripts.TallyArgs{N: 12345, At: at}
	rawKeys, rawArgs := []string{"tally"}, []string{"12345", strconv.FormatInt(at.UnixMilli(), 10)}
	for range 100 { // warm both: the client's buffers, the script cache, the pool
		_, err := s.Tally(ctx, keys, args)
		require.NoError(t, err)
		require.NoError(t, lua.Exec(ctx, c, rawKeys, rawArgs).Error())
	}
	raw := allocsPerCall(t, 2000, func() error { return lua.Exec(ctx, c, rawKeys, rawArgs).Error() })
	wrapped := allocsPerCall(t, 2000, func() error {
		_, err := s.Tally(ctx, keys, args)
		return err
	})
	// Without the pool the wrapper paid one allocation more per call; under
	// the race detector sync.Pool drops a quarter of its buffers.
	slack := 0.05
	if raceEnabled {
		slack = 0.5
	}
	assert.LessOrEqual(t, wrapped, raw+slack, "allocations per call: wrapper %.2f, raw rueidis %.2f", wrapped, raw)
}

// allocsPerCall is the heap allocations per call of f over n calls, every
// goroutine's included (runtime.MemStats.Mallocs; rueidis' own goroutines
// allocate nothing on a warm connection), as a fraction: testing.AllocsPerRun
// rounds down.
func allocsPerCall(t *testing.T, n int, f func() error) float64 {
	t.Helper()
	var before, after goruntime.MemStats
	goruntime.ReadMemStats(&before)
	for range n {
		if err := f(); err != nil {
			t.Fatal(err)
		}
	}
	goruntime.ReadMemStats(&after)
	return float64(after.Mallocs-before.Mallocs) / float64(n)
}
