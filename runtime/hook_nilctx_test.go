package runtime_test

import (
	"context"
	"sync"
	"testing"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/luagen/luagen/luatest"
	"github.com/luagen/luagen/redistest"
	"github.com/luagen/luagen/runtime"
	"github.com/luagen/luagen/runtime/goredis"
	"github.com/luagen/luagen/runtime/luagenimpl"
)

// nilCtxHook is a faulty Hook: its CallStart returns a nil context. Its
// CallEnd counts the calls and the nil contexts it was given.
type nilCtxHook struct {
	mu        sync.Mutex
	ends, nil int
}

func (*nilCtxHook) CallStart(context.Context, runtime.CallStart) context.Context { return nil }

func (h *nilCtxHook) CallEnd(ctx context.Context, _ runtime.CallEnd) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.ends++
	if ctx == nil {
		h.nil++
	}
}

// TestHookNilContext: a hook whose CallStart returns nil does not break a
// call (issue 34): the call runs under the caller's ctx and CallEnd gets
// that ctx, for Exec (EVAL mode, the retry path of an idempotent script,
// Functions mode, through a Coalescer) and for a batch, on every executor.
func TestHookNilContext(t *testing.T) {
	ctx := context.Background()
	fn := runtime.NewScript(runtime.ScriptSpec{Name: "hn.Get", File: "lua/hn/get.lua", Body: "#!lua flags=no-writes\nreturn 7"})
	runtime.NewLibrary(runtime.LibrarySpec{Name: "hn", Scripts: []*runtime.Script{fn}})
	srv := redistest.Start(t)
	executors := map[string]func(h runtime.Hook) runtime.Executor{
		"rueidis": func(h runtime.Hook) runtime.Executor {
			return runtime.NewRueidisExecutor(srv.Client(t), runtime.WithHook(h))
		},
		"goredis": func(h runtime.Hook) runtime.Executor {
			c := redis.NewClient(&redis.Options{Addr: srv.Addr})
			t.Cleanup(func() { c.Close() })
			return goredis.NewExecutor(c, runtime.WithHook(h))
		},
		"luatest": func(h runtime.Hook) runtime.Executor { return hookedRedis{luatest.Start(t), h} },
		"coalescer": func(h runtime.Hook) runtime.Executor {
			return runtime.NewCoalescer(runtime.NewRueidisExecutor(srv.Client(t), runtime.WithHook(h)))
		},
	}
	for name, build := range executors {
		t.Run(name, func(t *testing.T) {
			h := &nilCtxHook{}
			e := build(h)
			v, err := hookOK.Exec(ctx, e, []string{"{a}k"}, nil)
			require.NoError(t, err)
			assert.Equal(t, int64(1), v.Int)
			_, err = hookIdem.Exec(ctx, e, []string{"{a}k"}, nil)
			require.NoError(t, err)
			v, err = fn.Exec(ctx, e, nil, nil)
			require.NoError(t, err)
			assert.Equal(t, int64(7), v.Int)

			var b runtime.Batch
			f1 := runtime.Queue(&b, e, hookOK, nil, nil, luagenimpl.Raw)
			f2 := runtime.Queue(&b, e, fn, nil, nil, luagenimpl.Raw)
			require.NoError(t, b.Send(ctx))
			v, err = f1.Result()
			require.NoError(t, err)
			assert.Equal(t, int64(1), v.Int)
			v, err = f2.Result()
			require.NoError(t, err)
			assert.Equal(t, int64(7), v.Int)

			h.mu.Lock()
			defer h.mu.Unlock()
			assert.Equal(t, 5, h.ends, "one CallEnd per call")
			assert.Zero(t, h.nil, "CallEnd got a nil context")
		})
	}
}
