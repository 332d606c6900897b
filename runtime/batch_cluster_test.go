package runtime_test

import (
	"context"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/luagen/luagen/internal/exectest"
	"github.com/luagen/luagen/runtime"
	"github.com/luagen/luagen/runtime/luagenimpl"
)

// On a cluster, a batch mixes calls with keys on every primary, keyless
// calls (routed to their SHA1's primary, never a replica), and a script
// with flags=allow-cross-slot-keys given keys of two slots, which the
// cluster refuses and which must fail alone. Every node forgot the scripts
// first: the calls fall back to EVAL where they run.
func TestBatchOnClusterRoutesEveryCall(t *testing.T) {
	c := sharedCluster(t)
	exectest.Run(t, func(t *testing.T, ex exectest.Kind) {
		e := ex.Cluster(t, c)
		ctx := context.Background()
		incr := runtime.NewScript(runtime.ScriptSpec{Name: "t.Incr", File: "incr.lua", Body: "#!lua\nreturn redis.call('INCR', KEYS[1])"})
		keyless := runtime.NewScript(runtime.ScriptSpec{Name: "t.Keyless", File: "keyless.lua", Body: "#!lua\nreturn 7"})
		anySlot := runtime.NewScript(runtime.ScriptSpec{Name: "t.Any", File: "any.lua", Body: "#!lua flags=allow-cross-slot-keys\nreturn 1", AllowCrossSlot: true})
		prefix := "batch-" + ex.Name + strconv.FormatInt(time.Now().UnixNano(), 36)
		var b runtime.Batch
		var incrs []*runtime.Future[runtime.Value]
		var keys []string
		for i := range 30 {
			k := prefix + strconv.Itoa(i)
			keys = append(keys, k)
			incrs = append(incrs, runtime.Queue(&b, e, incr, []string{k}, nil, luagenimpl.Raw))
		}
		// The primaries that run these calls forget every script.
		for _, k := range append(keys, keyless.SHA1()) {
			p, _, err := c.PrimaryOf(runtime.Slot(k))
			require.NoError(t, err)
			p.Do(t, "SCRIPT", "FLUSH")
		}
		var nows []*runtime.Future[runtime.Value]
		for range 3 {
			nows = append(nows, runtime.Queue(&b, e, keyless, nil, nil, luagenimpl.Raw))
		}
		cross := runtime.Queue(&b, e, anySlot, []string{"{a}x", "{b}y"}, nil, luagenimpl.Raw)
		require.Error(t, b.Send(ctx))
		for i, f := range incrs {
			v, err := f.Result()
			require.NoError(t, err, keys[i])
			assert.Equal(t, runtime.IntValue(1), v)
		}
		for _, f := range nows {
			v, err := f.Result()
			require.NoError(t, err)
			assert.Equal(t, runtime.IntValue(7), v)
		}
		require.Error(t, cross.Err(), "Redis Cluster refuses KEYS of two slots in one call")
	})
}
