package runtime_test

import (
	"context"
	"fmt"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/luagen/luagen/runtime"
)

// replies is a script whose ARGV[1] picks what it does, so one merged run
// can hold every kind of reply and error a script can produce.
var replies = runtime.NewScript(runtime.ScriptSpec{Name: "t.Replies", File: "replies.lua", Coalesce: 64, Body: `#!lua
local op, x = ARGV[1], ARGV[2]
if op == 'int' then return tonumber(x)
elseif op == 'nil' then return nil
elseif op == 'false' then return false
elseif op == 'true' then return true
elseif op == 'float' then return 3.7
elseif op == 'str' then return x
elseif op == 'arr' then return {1, 'a', {2, false, 3}, {ok = 'FINE'}, {err = 'NESTED e'}, nil, 5}
elseif op == 'status' then return {ok = 'FINE'}
elseif op == 'reterr' then return redis.error_reply(x)
elseif op == 'errtable' then return {err = x}
elseif op == 'raise' then error(x)
elseif op == 'raise0' then error(x, 0)
elseif op == 'raisetable' then error({err = x})
elseif op == 'deep' then
  local function g() error('deep ' .. x) end
  g()
elseif op == 'partial' then
  redis.call('SET', KEYS[1], 'not a number')
  return redis.call('INCR', KEYS[1])
elseif op == 'incr' then return redis.call('INCR', KEYS[1])
elseif op == 'keys' then return {#KEYS, #ARGV, KEYS[1] or false, ARGV[2] or false}
elseif op == 'arith' then return nil + x
end
return 'fell through'`})

// mergedCases are the calls of one merged run: every reply kind, returned
// error replies a client would take for the server's (marked on the wire,
// unmarked by the runtime), raised errors of every form, and a call that
// fails after a write, between calls that touch the same key.
var mergedCases = [][2][]string{
	{{"{t}a"}, {"incr"}},
	{{"{t}a"}, {"int", "42"}},
	{{"{t}a"}, {"nil"}},
	{{"{t}a"}, {"false"}},
	{{"{t}a"}, {"true"}},
	{{"{t}a"}, {"float"}},
	{{"{t}a"}, {"str", "hello"}},
	{{"{t}a"}, {"str", ""}},
	{{"{t}a"}, {"arr"}},
	{{"{t}a"}, {"status"}},
	{{"{t}a"}, {"reterr", "MY_CODE my text"}},
	{{"{t}a"}, {"reterr", "NOSCRIPT No matching script. Please use EVAL."}},
	{{"{t}a"}, {"reterr", "MOVED 1 127.0.0.1:1"}},
	{{"{t}a"}, {"reterr", "LUAGEN x"}},
	{{"{t}a"}, {"reterr", "a -READONLY b %2D"}},
	{{"{t}a"}, {"errtable", "ERR TRYAGAIN x"}},
	{{"{t}a"}, {"raise", "boom"}},
	{{"{t}a"}, {"raise0", "plain"}},
	{{"{t}a"}, {"raise", "two\r\nlines"}},
	{{"{t}a"}, {"raisetable", "OWN_CODE raised"}},
	{{"{t}a"}, {"deep", "inside"}},
	{{"{t}a"}, {"arith", "1"}},
	{{"{t}b"}, {"partial"}},
	{{"{t}a"}, {"incr"}},
	{{"{t}a", "{t}c"}, {"keys", "second"}},
	{{}, {"keys"}},
	{{"{t}a"}, {"other"}},
}

func describe(v runtime.Value, err error) string {
	if err != nil {
		return fmt.Sprintf("error %T %q", err, err.Error())
	}
	return v.String()
}

// TestMergedRunRepliesAsAlone: every call of a merged run gets the reply
// it gets when sent alone, byte for byte (values, returned and raised
// errors with their line and the script's own SHA1), on every executor, and
// the keys end up the same (a raised error keeps the call's writes).
func TestMergedRunRepliesAsAlone(t *testing.T) {
	ctx := context.Background()
	for _, row := range executors {
		t.Run(row.name, func(t *testing.T) {
			e, do := row.open(t)
			require.NoError(t, e.Load(ctx, replies))
			var alone []string
			for _, c := range mergedCases {
				v, err := e.EvalSha(ctx, replies, c[0], c[1])
				alone = append(alone, describe(v, err))
			}
			keysAlone := []string{do("GET", "{t}a"), do("GET", "{t}b")}
			do("FLUSHALL")

			c := runtime.Coalesce(e)
			vs, errs, ran := runtime.MergedRun(ctx, c, replies, time.Second, mergedCases)
			for i := range mergedCases {
				assert.True(t, ran[i])
				assert.Equal(t, alone[i], describe(vs[i], errs[i]), "call %d %v", i, mergedCases[i])
			}
			assert.Equal(t, keysAlone, []string{do("GET", "{t}a"), do("GET", "{t}b")})
			// Exec classifies a merged call's raised error as for a call alone.
			var se *runtime.ScriptError
			_, err := replies.Exec(ctx, c, []string{"{t}a"}, []string{"raise", "x"})
			require.ErrorAs(t, err, &se)
			assert.Equal(t, 13, se.Line)
		})
	}
}

// TestMergedRunBudget: a run that has used its time budget starts no more
// calls; the Coalescer sends those in later runs, in their order, and every
// caller gets its own reply.
func TestMergedRunBudget(t *testing.T) {
	ctx := context.Background()
	for _, row := range executors {
		t.Run(row.name, func(t *testing.T) {
			e, _ := row.open(t)
			c := runtime.Coalesce(e)
			calls := [][2][]string{{{"{t}n"}, {"incr"}}, {{"{t}n"}, {"incr"}}, {{"{t}n"}, {"incr"}}}
			vs, errs, ran := runtime.MergedRun(ctx, c, replies, 0, calls)
			assert.Equal(t, []bool{true, false, false}, ran)
			assert.NoError(t, errs[0])
			assert.Equal(t, runtime.IntValue(1), vs[0])

			// Through the queue, a zero budget runs one call per run, in order.
			got, _ := queued(t, e, 0, "{t}q", 6, func(e runtime.Executor, i int) (runtime.Value, error) {
				return replies.Exec(ctx, e, []string{"{t}q"}, []string{"incr"})
			})
			for i, r := range got {
				assert.Equal(t, "(integer) "+strconv.Itoa(i+1), r)
			}
		})
	}
}

// gate holds the first EvalSha of a plain script until released, so that
// calls arriving meanwhile queue behind it.
type gate struct {
	runtime.Executor
	once    sync.Once
	release chan struct{}
	mu      sync.Mutex
	sent    []string // script names, in send order
}

func (g *gate) EvalSha(ctx context.Context, s *runtime.Script, keys, args []string) (runtime.Value, error) {
	g.mu.Lock()
	g.sent = append(g.sent, s.Name())
	g.mu.Unlock()
	first := false
	g.once.Do(func() { first = true })
	if first {
		<-g.release
	}
	return g.Executor.EvalSha(ctx, s, keys, args)
}

// queued makes n calls through a Coalescer over a gate over e, with the
// run budget of budget: the first call is held in flight until the other
// n-1 wait in the Coalescer's queue, one after another in index order (all
// on key's slot); it returns every call's reply by index and the scripts
// sent, in order.
func queued(t *testing.T, e runtime.Executor, budget time.Duration, key string, n int, call func(e runtime.Executor, i int) (runtime.Value, error)) (got, sent []string) {
	t.Helper()
	g := &gate{Executor: e, release: make(chan struct{})}
	c := runtime.Coalesce(g)
	runtime.SetBudget(c, budget)
	got = make([]string, n)
	var wg sync.WaitGroup
	start := func(i int) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			v, err := call(c, i)
			got[i] = describe(v, err)
		}()
	}
	start(0)
	require.Eventually(t, func() bool { g.mu.Lock(); defer g.mu.Unlock(); return len(g.sent) == 1 }, 10*time.Second, time.Millisecond)
	for i := 1; i < n; i++ {
		start(i)
		require.Eventually(t, func() bool { return runtime.Waiting(c, replies, key) == i }, 10*time.Second, time.Millisecond)
	}
	close(g.release)
	wg.Wait()
	return got, g.sent
}
