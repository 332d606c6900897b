package runtime_test

import (
	"context"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/luagen/luagen/internal/exectest"
	"github.com/luagen/luagen/redistest"
	"github.com/luagen/luagen/runtime"
	"github.com/luagen/luagen/runtime/goredis"
)

// The cluster tests share one 3+3 cluster (starting one takes seconds);
// each test uses its own keys.
var cluster redistest.SharedCluster

func sharedCluster(t *testing.T) *redistest.Cluster { return cluster.Get(t) }

func TestMain(m *testing.M) {
	code := m.Run()
	cluster.Stop()
	os.Exit(code)
}

func TestPreloadLoadsEveryNodeReplicasIncluded(t *testing.T) {
	c := sharedCluster(t)
	exectest.Run(t, func(t *testing.T, k exectest.Kind) {
		e := k.Cluster(t, c)
		if r, ok := e.(*runtime.RueidisExecutor); ok {
			require.Len(t, r.Client().Nodes(), 6, "rueidis knows every primary and replica")
		}
		s := runtime.NewScript(runtime.ScriptSpec{Name: "t.Preload", File: "p.lua", Body: "#!lua\n-- preload test, " + k.Name + "\nreturn 1"})
		require.NoError(t, runtime.Preload(context.Background(), e, s))
		for _, n := range c.Nodes {
			assert.Equal(t, "[1]", n.Do(t, "SCRIPT", "EXISTS", s.SHA1()), "node %s (%s)", n.Addr, role(t, n))
		}
	})
}

// A replica promoted without the script (SCRIPT LOAD is not replicated,
// and this one's cache was flushed) answers NOSCRIPT; Exec falls back to
// EVAL and the caller never sees it.
func TestPromotedReplicaWithoutScriptFallsBackToEval(t *testing.T) {
	c := sharedCluster(t)
	exectest.Run(t, func(t *testing.T, k exectest.Kind) {
		e := k.Cluster(t, c)
		ctx := context.Background()
		key := "{failover-eval-" + strconv.FormatInt(time.Now().UnixNano(), 36) + "}:n"
		s := runtime.NewScript(runtime.ScriptSpec{Name: "t.Incr", File: "incr.lua", Body: "#!lua\nreturn redis.call('INCR', KEYS[1])"})
		require.NoError(t, runtime.Preload(ctx, e, s))
		v, err := s.Exec(ctx, e, []string{key}, nil)
		require.NoError(t, err)
		require.Equal(t, int64(1), v.Int)

		_, replica, err := c.PrimaryOf(runtime.Slot(key))
		require.NoError(t, err)
		replica.Do(t, "SCRIPT", "FLUSH")
		replica.Do(t, "CONFIG", "RESETSTAT")
		require.Equal(t, "[0]", replica.Do(t, "SCRIPT", "EXISTS", s.SHA1()))
		_, promoted, err := c.Failover(runtime.Slot(key), 30*time.Second)
		require.NoError(t, err)
		require.Equal(t, replica, promoted)

		v, err = s.Exec(ctx, e, []string{key}, nil)
		require.NoError(t, err, "no NOSCRIPT reaches the caller")
		assert.Equal(t, int64(2), v.Int, "the coordinated failover kept the first increment")
		stats := promoted.Do(t, "INFO", "commandstats")
		assert.Contains(t, stats, "cmdstat_evalsha:calls=1,", "EVALSHA reached the new primary once…")
		assert.Contains(t, stats, "cmdstat_eval:calls=1,", "…and EVAL once, after NOSCRIPT")
		assert.Equal(t, "[1]", promoted.Do(t, "SCRIPT", "EXISTS", s.SHA1()), "EVAL cached it there")
	})
}

// A script without keys goes to one primary (the one serving its SHA1's
// slot): rueidis alone would send it to any node, and replicas refuse a
// script that may write.
func TestKeylessScriptRunsOnThePrimaryOfItsSHA1Slot(t *testing.T) {
	c := sharedCluster(t)
	ctx := context.Background()
	s := runtime.NewScript(runtime.ScriptSpec{Name: "t.Keyless", File: "k.lua", Body: "#!lua\n-- keyless\nreturn ARGV[1]"})
	want, _, err := c.PrimaryOf(runtime.Slot(s.SHA1()))
	require.NoError(t, err)
	resetStats := func() {
		for _, n := range c.Nodes {
			n.Do(t, "CONFIG", "RESETSTAT")
		}
	}
	// onlyOn asserts that calls of cmd reached want and no other node.
	onlyOn := func(cmd string, calls int) {
		t.Helper()
		for _, n := range c.Nodes {
			stats := n.Do(t, "INFO", "commandstats")
			if n == want {
				assert.Contains(t, stats, "cmdstat_"+cmd+":calls="+strconv.Itoa(calls)+",", "every call on %s", n.Addr)
			} else {
				assert.NotContains(t, stats, "cmdstat_"+cmd+":", "no call on %s (%s)", n.Addr, role(t, n))
			}
		}
	}

	exectest.Run(t, func(t *testing.T, k exectest.Kind) {
		e := k.Cluster(t, c)
		require.NoError(t, runtime.Preload(ctx, e, s))
		resetStats()

		// What the routing avoids: the same EVALSHA without a slot.
		switch e := e.(type) {
		case *runtime.RueidisExecutor:
			// rueidis sends it to any node; replicas refuse it.
			cl := e.Client()
			readonly := 0
			for range 40 {
				err := cl.Do(ctx, cl.B().Evalsha().Sha1(s.SHA1()).Numkeys(0).Arg("x").Build()).Error()
				if err != nil && strings.HasPrefix(err.Error(), "READONLY") {
					readonly++
				} else {
					require.NoError(t, err)
				}
			}
			assert.Positive(t, readonly, "without a slot, some calls reach a replica and are refused")
		case *goredis.Executor:
			// go-redis picks a random node and, on READONLY, another one.
			for range 40 {
				require.NoError(t, e.Client().EvalSha(ctx, s.SHA1(), nil, "x").Err())
			}
			reached := 0
			for _, n := range c.Nodes {
				if strings.Contains(n.Do(t, "INFO", "commandstats"), "cmdstat_evalsha:") {
					reached++
				}
			}
			assert.Greater(t, reached, 1, "without a slot, calls spread over the nodes")
		}
		resetStats()

		for range 40 {
			v, err := s.Exec(ctx, e, nil, []string{"x"})
			require.NoError(t, err)
			require.Equal(t, "x", v.Str)
		}
		onlyOn("evalsha", 40)

		// EVAL, after NOSCRIPT, goes to the same primary and caches the
		// script there.
		want.Do(t, "SCRIPT", "FLUSH")
		resetStats()
		v, err := s.Exec(ctx, e, nil, []string{"y"})
		require.NoError(t, err)
		require.Equal(t, "y", v.Str)
		onlyOn("evalsha", 1)
		onlyOn("eval", 1)
		assert.Equal(t, "[1]", want.Do(t, "SCRIPT", "EXISTS", s.SHA1()))
	})
}

func role(t *testing.T, n *redistest.Server) string {
	if strings.Contains(n.Do(t, "INFO", "replication"), "role:master") {
		return "primary"
	}
	return "replica"
}

// A script with flags=allow-cross-slot-keys and KEYS of two slots: rueidis'
// builder panics on it ("multi key command with different key slots are not
// allowed") and Redis Cluster would refuse it anyway, so the cluster
// executor returns a *CrossSlotError that says so, sending nothing.
func TestAllowCrossSlotKeysOnClusterIsAnError(t *testing.T) {
	c := sharedCluster(t)
	cl := c.Client(t)
	e := runtime.NewRueidisExecutor(cl)
	ctx := context.Background()
	s := runtime.NewScript(runtime.ScriptSpec{Name: "t.Cross", File: "cross.lua", AllowCrossSlot: true,
		Body: "#!lua flags=allow-cross-slot-keys\nreturn redis.call('MSET', KEYS[1], 'a', KEYS[2], 'b')"})
	keys := []string{"{cross-a}:k", "{cross-b}:k"}
	require.NotEqual(t, runtime.Slot(keys[0]), runtime.Slot(keys[1]))
	for _, call := range []func() error{
		func() error { _, err := s.Exec(ctx, e, keys, nil); return err },
		func() error { _, err := e.EvalSha(ctx, s, keys, nil); return err },
		func() error { _, err := e.Eval(ctx, s, keys, nil); return err },
	} {
		var cse *runtime.CrossSlotError
		err := call()
		require.ErrorAs(t, err, &cse)
		assert.True(t, cse.OnCluster)
		assert.ErrorIs(t, err, runtime.ErrCrossSlot)
		assert.Contains(t, err.Error(), "allow-cross-slot-keys does not lift this on a cluster")
	}

	// Redis Cluster itself: even on the node that serves both slots, the
	// server answers CROSSSLOT (cluster.c getNodeByQuery checks KEYS
	// before the script's flags are looked at).
	var a, b string
	for i := 0; a == "" || b == ""; i++ {
		k := "{same-node-" + strconv.Itoa(i) + "}:k"
		p, _, err := c.PrimaryOf(runtime.Slot(k))
		require.NoError(t, err)
		p0, _, err := c.PrimaryOf(runtime.Slot(keys[0]))
		require.NoError(t, err)
		if p == p0 && a == "" {
			a = k
		} else if p == p0 && runtime.Slot(k) != runtime.Slot(a) {
			b = k
		}
	}
	p, _, err := c.PrimaryOf(runtime.Slot(a))
	require.NoError(t, err)
	assert.Contains(t, p.Do(t, "EVAL", s.Body(), "2", a, b), "CROSSSLOT")
	assert.Equal(t, "<nil>", p.Do(t, "GET", a), "nothing ran")
}
