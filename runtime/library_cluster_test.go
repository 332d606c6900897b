package runtime_test

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/luagen/luagen/internal/exectest"
	"github.com/luagen/luagen/runtime"
)

// On the 3+3 cluster: Preload loads the library on the primaries and
// replication brings it to the replicas; calls on every shard and keyless
// calls work; a primary whose functions were flushed gets the library again
// on first use; and after a failover the promoted replica, which received
// the library by replication, runs the call with no error and no reload.
func TestLibraryOnCluster(t *testing.T) {
	c := sharedCluster(t)
	exectest.Run(t, func(t *testing.T, k exectest.Kind) {
		ctx := context.Background()
		e := k.Cluster(t, c)
		incr, get, boom, fake := libScripts("cluster " + k.Name)
		keyless := runtime.NewScript(runtime.ScriptSpec{Name: "lib.Echo", File: "lua/lib/echo.lua", Body: "#!lua\nreturn ARGV[1]"})
		lib := runtime.NewLibrary(runtime.LibrarySpec{Name: "lib", Scripts: []*runtime.Script{incr, get, boom, fake, keyless}})
		t.Cleanup(func() {
			for _, n := range c.Nodes {
				if role(t, n) == "primary" {
					n.Do(t, "FUNCTION", "DELETE", lib.Name())
				}
			}
		})
		require.NoError(t, runtime.Preload(ctx, e, lib.Scripts()...))
		for _, n := range c.Nodes {
			require.Eventually(t, func() bool {
				return strings.Contains(n.Do(t, "FUNCTION", "LIST", "LIBRARYNAME", lib.Name()), lib.Name())
			}, 20*time.Second, 50*time.Millisecond, "node %s (%s) has the library", n.Addr, role(t, n))
		}

		prefix := "{lib-" + k.Name + "-" + strconv.FormatInt(time.Now().UnixNano(), 36)
		for i := range 12 {
			key := fmt.Sprintf("%s-%d}:n", prefix, i)
			v, err := incr.Exec(ctx, e, []string{key}, []string{"3"})
			require.NoError(t, err)
			assert.Equal(t, int64(3), v.Int)
			v, err = get.Exec(ctx, e, []string{key}, nil)
			require.NoError(t, err)
			assert.Equal(t, "3", v.Array[0].Str)
		}
		for range 10 {
			v, err := keyless.Exec(ctx, e, nil, []string{"hi"})
			require.NoError(t, err, "a keyless call goes to a primary")
			assert.Equal(t, "hi", v.Str)
		}

		// FUNCTION FLUSH on the key's primary (and so its replica).
		key := prefix + "-flush}:n"
		primary, _, err := c.PrimaryOf(runtime.Slot(key))
		require.NoError(t, err)
		primary.Do(t, "FUNCTION", "FLUSH")
		v, err := incr.Exec(ctx, e, []string{key}, []string{"1"})
		require.NoError(t, err, "Function not found never reaches the caller")
		assert.Equal(t, int64(1), v.Int)

		// Failover: the replica has the library by replication.
		key = prefix + "-failover}:n"
		_, err = incr.Exec(ctx, e, []string{key}, []string{"1"})
		require.NoError(t, err)
		_, replica, err := c.PrimaryOf(runtime.Slot(key))
		require.NoError(t, err)
		require.Eventually(t, func() bool {
			return strings.Contains(replica.Do(t, "FUNCTION", "LIST", "LIBRARYNAME", lib.Name()), lib.Name())
		}, 20*time.Second, 50*time.Millisecond)
		replica.Do(t, "CONFIG", "RESETSTAT")
		_, promoted, err := c.Failover(runtime.Slot(key), 30*time.Second)
		require.NoError(t, err)
		require.Equal(t, replica, promoted)
		var last runtime.Value
		require.Eventually(t, func() bool {
			// The client may still route to the old primary, which now
			// answers MOVED (followed by the client) or, for a moment,
			// a connection error: retried here, never a missing function.
			v, err := incr.Exec(ctx, e, []string{key}, []string{"1"})
			require.False(t, runtime.IsFunctionNotFound(err))
			last = v
			return err == nil
		}, 20*time.Second, 50*time.Millisecond)
		assert.Equal(t, int64(2), last.Int)
		stats := promoted.Do(t, "INFO", "commandstats")
		assert.Contains(t, stats, "cmdstat_fcall:calls=1,", "one FCALL reached the promoted replica")
		assert.NotContains(t, stats, "cmdstat_function|load", "no reload was needed")
	})
}
