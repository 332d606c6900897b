package runtime_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/redis/rueidis"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/luagen/luagen/internal/exectest"
	"github.com/luagen/luagen/redistest"
	"github.com/luagen/luagen/runtime"
)

// A replica down at boot never holds Preload or a library load: on a 3+3
// cluster with one replica stopped, both return long before their ctx
// ends, and every live node has the script and the library. SCRIPT LOAD
// reports the down node (a replica runs EVALSHA_RO from its own script
// cache); a library load, and so a Functions-mode Preload, succeeds on both
// executors, as replicas get libraries by replication (issue 34: rueidis
// failed with "connection refused"). Before, rueidis retried SCRIPT LOAD
// on the dead replica until ctx ended (forever with context.Background()). A closed client fails at
// once too. No goroutine of ours is left behind.
func TestPreloadWithNodeDown(t *testing.T) {
	opt := goleak.IgnoreCurrent()
	c := redistest.StartCluster(t)
	var down *redistest.Server
	for _, n := range c.Nodes {
		if role(t, n) == "replica" {
			down = n
			break
		}
	}
	require.NotNil(t, down)
	exectest.Run(t, func(t *testing.T, k exectest.Kind) {
		e := k.Cluster(t, c)
		s := runtime.NewScript(runtime.ScriptSpec{Name: "pf.One", File: "one.lua", Body: "return 1 -- " + k.Name})
		b := newBuild("pf"+k.Name, "A")
		require.NoError(t, runtime.Preload(context.Background(), e, b.which)) // every node known and up
		if k.Name == exectest.Rueidis.Name {
			down.Stop()
		}
		// ctx is only a safety net: a hang fails the test instead of
		// blocking it.
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		onlyDown := func(err error) {
			t.Helper()
			require.NoError(t, ctx.Err(), "returned before its ctx ended")
			if err == nil { // go-redis skips a node it knows is down
				return
			}
			for _, line := range strings.Split(err.Error(), "\n") {
				assert.Contains(t, line, down.Addr, "only the down node fails")
			}
		}
		onlyDown(runtime.Preload(ctx, e, s))
		// A library goes to the primaries, and from them to the
		// replicas by replication: a replica down fails no load.
		require.NoError(t, b.lib.Load(ctx, e))
		b2 := newBuild("pf"+k.Name, "B")
		require.NoError(t, runtime.Preload(ctx, e, b2.which, b2.peek))
		require.NoError(t, ctx.Err(), "returned before its ctx ended")
		for _, n := range c.Nodes {
			if n == down {
				continue
			}
			assert.Equal(t, "[1]", n.Do(t, "SCRIPT", "EXISTS", s.SHA1()), "%s has the script", n.Addr)
			for _, lib := range []*runtime.Library{b.lib, b2.lib} {
				assert.Eventually(t, func() bool {
					return strings.Contains(n.Do(t, "FUNCTION", "LIST", "LIBRARYNAME", lib.Name()), lib.Name())
				}, 20*time.Second, 20*time.Millisecond, "%s has library %s", n.Addr, lib.Name())
			}
		}
	})
	t.Run("closed", func(t *testing.T) {
		client, err := rueidis.NewClient(rueidis.ClientOption{InitAddress: c.Addrs()[:1]})
		require.NoError(t, err)
		e := runtime.NewRueidisExecutor(client)
		client.Close()
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		s := runtime.NewScript(runtime.ScriptSpec{Name: "pf.Closed", File: "closed.lua", Body: "return 2"})
		err = runtime.Preload(ctx, e, s)
		require.Error(t, err)
		assert.True(t, errors.Is(err, rueidis.ErrClosing), "%v", err)
		require.NoError(t, ctx.Err(), "Preload returned before its ctx ended")
		assert.False(t, runtime.IsTransient(err))
	})
	verifyNoLeaks(t, opt)
}
