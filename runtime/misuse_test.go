package runtime_test

import (
	"context"
	"strconv"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/redis/rueidis"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/luagen/luagen/internal/exectest"
	"github.com/luagen/luagen/runtime"
	"github.com/luagen/luagen/runtime/goredis"
)

// uncomparable is an executor whose dynamic type cannot be compared (a
// struct with a slice field), as a user's wrapper may well be.
type uncomparable struct {
	runtime.Executor
	tags []string
}

// int64Reply decodes an integer reply.
func int64Reply(v runtime.Value) (int64, error) { return v.Int, nil }

// misuseScripts are a plain script and one a Coalescer merges.
func misuseScripts() (plain, merged *runtime.Script) {
	plain = runtime.NewScript(runtime.ScriptSpec{Name: "m.Incr", File: "incr.lua", Body: "#!lua\nreturn redis.call('INCR', KEYS[1])"})
	merged = runtime.NewScript(runtime.ScriptSpec{Name: "m.Merged", File: "merged.lua", CoalesceLimit: 8,
		Body: "#!lua\nreturn redis.call('INCR', KEYS[1])"})
	return plain, merged
}

// Misuse that compiles neither hangs nor panics, on every executor: a
// batch whose executor cannot be compared (Send used to spin a CPU
// forever) or is nil (likewise), and a nil ctx to a call, a coalesced
// call, a batch (on a cluster, go-redis used to panic in a goroutine of
// its own and kill the process), Preload and the loads. Each gets a
// typed error and nothing is sent; goroutines are all accounted for.
func TestMisuseNeitherHangsNorPanics(t *testing.T) {
	opt := goleak.IgnoreCurrent()
	type row struct {
		name string
		open func(t *testing.T) runtime.Executor
	}
	rows := []row{{"luatest", func(t *testing.T) runtime.Executor { e, _ := executors[2].open(t); return e }}}
	for _, k := range []exectest.Kind{exectest.Rueidis, exectest.GoRedis} {
		rows = append(rows,
			row{k.Name, func(t *testing.T) runtime.Executor {
				e, _ := executors[map[string]int{"rueidis": 0, "goredis": 1}[k.Name]].open(t)
				return e
			}},
			row{k.Name + " cluster", func(t *testing.T) runtime.Executor { return k.Cluster(t, sharedCluster(t)) }})
	}
	for _, r := range rows {
		t.Run(r.name, func(t *testing.T) {
			ctx := context.Background()
			e := r.open(t)
			plain, merged := misuseScripts()
			// A key of its own per run: the cluster is shared (and kept
			// across -count runs).
			key := "{misuse-" + r.name + "-" + strconv.FormatInt(time.Now().UnixNano(), 36) + "}n"

			// A batch on an executor that is not comparable, beside one
			// that is and a nil one.
			var b runtime.Batch
			u := uncomparable{Executor: e, tags: []string{"x"}}
			f1 := runtime.Queue(&b, u, plain, []string{key}, nil, int64Reply)
			f2 := runtime.Queue(&b, e, plain, []string{key}, nil, int64Reply)
			fNil := runtime.Queue(&b, nil, plain, []string{key}, nil, int64Reply)
			f3 := runtime.Queue(&b, u, plain, []string{key}, nil, int64Reply)
			require.ErrorIs(t, b.Send(ctx), runtime.ErrNilExecutor)
			var got []int64
			for _, f := range []*runtime.Future[int64]{f1, f2, f3} {
				n, err := f.Result()
				require.NoError(t, err)
				got = append(got, n)
			}
			assert.ElementsMatch(t, []int64{1, 2, 3}, got, "each call ran once")
			assert.ErrorIs(t, fNil.Err(), runtime.ErrNilExecutor)

			// A nil ctx, everywhere.
			var nilCtx context.Context
			_, err := plain.Exec(nilCtx, e, []string{key}, nil)
			assert.ErrorIs(t, err, runtime.ErrNilContext)
			_, err = merged.Exec(nilCtx, runtime.NewCoalescer(e), []string{key}, nil)
			assert.ErrorIs(t, err, runtime.ErrNilContext)
			var nb runtime.Batch
			nf := runtime.Queue(&nb, e, plain, []string{key}, nil, int64Reply)
			assert.ErrorIs(t, nb.Send(nilCtx), runtime.ErrNilContext)
			assert.ErrorIs(t, nf.Err(), runtime.ErrNilContext)
			assert.ErrorIs(t, runtime.Preload(nilCtx, e, plain), runtime.ErrNilContext)
			assert.ErrorIs(t, plain.Load(nilCtx, e), runtime.ErrNilContext)
			lib := newBuild("misuse", r.name)
			assert.ErrorIs(t, lib.lib.Load(nilCtx, e), runtime.ErrNilContext)
			_, err = lib.which.Exec(nilCtx, e, []string{key}, nil)
			assert.ErrorIs(t, err, runtime.ErrNilContext)

			// A nil executor: a zero generated Scripts calls with one.
			_, err = plain.Exec(ctx, nil, []string{key}, nil)
			assert.ErrorIs(t, err, runtime.ErrNilExecutor)
			assert.ErrorIs(t, runtime.Preload(ctx, nil, plain), runtime.ErrNilExecutor)
			// A nil *RueidisExecutor in a non-nil Executor: the same
			// error, not a nil dereference.
			var nilRueidis *runtime.RueidisExecutor
			_, err = plain.Exec(ctx, nilRueidis, []string{key}, nil)
			assert.ErrorIs(t, err, runtime.ErrNilExecutor)

			v, err := plain.Exec(ctx, e, []string{key}, nil)
			require.NoError(t, err)
			assert.Equal(t, int64(4), v.Int, "none of the refused calls ran")
		})
	}
	verifyNoLeaks(t, opt)
}

// verifyNoLeaks checks that no goroutine started since opt was taken is
// left, but rueidis' own: a cluster client sleeps out a topology refresh
// it scheduled (after a node failed, or at start-up) even past Close.
func verifyNoLeaks(t *testing.T, opt goleak.Option) {
	t.Helper()
	goleak.VerifyNone(t, opt, goleak.IgnoreAnyFunction("github.com/redis/rueidis.(*call).DelayDo.func1"),
		goleak.IgnoreAnyFunction("github.com/redis/rueidis.(*clusterClient)._refresh.func2"))
}

// Constructors given nil fail at once, naming what was nil, instead of a
// nil-pointer panic deep in the first call.
func TestConstructorsRefuseNil(t *testing.T) {
	assert.PanicsWithValue(t, "runtime.NewRueidisExecutor: the rueidis.Client is nil", func() { runtime.NewRueidisExecutor(nil) })
	assert.PanicsWithValue(t, "runtime.NewCoalescer: the Executor is nil", func() { runtime.NewCoalescer(nil) })
	assert.PanicsWithValue(t, "runtime.NewCoalescer: the Executor is a nil *runtime.RueidisExecutor",
		func() { runtime.NewCoalescer((*runtime.RueidisExecutor)(nil)) })
	assert.PanicsWithValue(t, "goredis.NewExecutor: the redis.UniversalClient is nil (<nil>)", func() { goredis.NewExecutor(nil) })
	assert.PanicsWithValue(t, "goredis.NewExecutor: the redis.UniversalClient is nil (*redis.ClusterClient)",
		func() { goredis.NewExecutor((*redis.ClusterClient)(nil)) })
	var c rueidis.Client
	assert.Panics(t, func() { runtime.NewRueidisExecutor(c) })
}
