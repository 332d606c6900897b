package runtime_test

import (
	"context"
	"errors"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/luagen/luagen/internal/exectest"
	"github.com/luagen/luagen/luatest"
	"github.com/luagen/luagen/redistest"
	"github.com/luagen/luagen/runtime"
	"github.com/luagen/luagen/runtime/goredis"
	"github.com/luagen/luagen/runtime/luagenimpl"
)

// One failure, one error type, whatever the executor: keys of two slots
// (and on a cluster, a script with flags=allow-cross-slot-keys too, which
// go-redis passed to the server and got a bare CROSSSLOT reply for), a
// cancelled ctx and a closed client, singly and in a batch.
func TestSameErrorsOnEveryExecutor(t *testing.T) {
	type row struct {
		name    string
		cluster bool
		// open returns an executor and a function that closes its client.
		open func(t *testing.T) (runtime.Executor, func())
	}
	rows := []row{{"luatest", false, func(t *testing.T) (runtime.Executor, func()) {
		r := luatest.Start(t)
		return r, r.Close
	}}}
	for _, k := range exectest.Kinds {
		rows = append(rows,
			row{k.Name, false, func(t *testing.T) (runtime.Executor, func()) {
				return closable(k.Single(t, redistest.Start(t)))
			}},
			row{k.Name + " cluster", true, func(t *testing.T) (runtime.Executor, func()) {
				return closable(k.Cluster(t, sharedCluster(t)))
			}})
	}
	plain := runtime.NewScript(runtime.ScriptSpec{Name: "se.Set", File: "set.lua",
		Body: "#!lua\nredis.call('SET', KEYS[1], 'a') return redis.call('SET', KEYS[2], 'b')"})
	anySlot := runtime.NewScript(runtime.ScriptSpec{Name: "se.AnySlot", File: "any.lua", AllowCrossSlot: true,
		Body: "#!lua flags=allow-cross-slot-keys\nreturn #KEYS"})
	for i, r := range rows {
		t.Run(r.name, func(t *testing.T) {
			ctx := context.Background()
			e, closeClient := r.open(t)
			keys := []string{"{se-a-" + strconv.Itoa(i) + "}", "{se-b-" + strconv.Itoa(i) + "}"}
			require.NotEqual(t, runtime.Slot(keys[0]), runtime.Slot(keys[1]))
			both := func(s *runtime.Script, c context.Context) []error {
				_, err := s.Exec(c, e, keys, nil)
				var b runtime.Batch
				f := runtime.Queue(&b, e, s, keys, nil, luagenimpl.Raw)
				_ = b.Send(c)
				return []error{err, f.Err()}
			}
			for _, err := range both(plain, ctx) {
				var cse *runtime.CrossSlotError
				require.ErrorAs(t, err, &cse)
				assert.ErrorIs(t, err, runtime.ErrCrossSlot)
				assert.False(t, cse.OnCluster)
			}
			for _, err := range both(anySlot, ctx) {
				if !r.cluster {
					assert.NoError(t, err, "one node runs keys of any slot")
					continue
				}
				var cse *runtime.CrossSlotError
				require.ErrorAs(t, err, &cse)
				assert.True(t, cse.OnCluster)
				assert.ErrorIs(t, err, runtime.ErrCrossSlot)
			}
			cancelled, cancel := context.WithCancel(ctx)
			cancel()
			for _, err := range both(anySlot, cancelled) {
				if r.cluster {
					continue // refused before anything is sent: CROSSSLOT above
				}
				assert.ErrorIs(t, err, context.Canceled)
			}
			one := []string{keys[0]}
			_, err := plain.Exec(cancelled, e, one, nil)
			assert.ErrorIs(t, err, context.Canceled)

			// A client of its own, which met no cancelled call: rueidis
			// re-dials a connection a cancelled call closed, and a Close
			// racing that dial can leave a working connection behind.
			e, closeClient = r.open(t)
			_, err = anySlot.Exec(ctx, e, one, nil)
			require.NoError(t, err)
			closeClient()
			// rueidis' cluster client closes its connections in
			// goroutines of its own: a call right after Close may still
			// be served, or fail dialling.
			var errs []error
			require.Eventually(t, func() bool {
				_, err := anySlot.Exec(ctx, e, one, nil)
				var b runtime.Batch
				f := runtime.Queue(&b, e, anySlot, one, nil, luagenimpl.Raw)
				_ = b.Send(ctx)
				errs = []error{err, f.Err()}
				return errors.Is(err, runtime.ErrClientClosed) && errors.Is(f.Err(), runtime.ErrClientClosed)
			}, 10*time.Second, 10*time.Millisecond, "calls on a closed client")
			for _, err := range errs {
				assert.False(t, runtime.IsTransient(err))
			}
		})
	}
}

// closable returns e with a function that closes its client.
func closable(e runtime.Executor) (runtime.Executor, func()) {
	switch x := e.(type) {
	case *runtime.RueidisExecutor:
		return e, x.Client().Close
	case *goredis.Executor:
		return e, func() { x.Client().(interface{ Close() error }).Close() } //nolint:errcheck
	}
	panic("closable: unknown executor")
}
