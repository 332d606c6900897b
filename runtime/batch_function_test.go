package runtime_test

import (
	"context"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/luagen/luagen/internal/exectest"
	"github.com/luagen/luagen/runtime"
	"github.com/luagen/luagen/runtime/luagenimpl"
)

// pipeFunctions is an executor that runs functions and pipelines
// (rueidis, go-redis).
type pipeFunctions interface {
	runtime.FunctionExecutor
	runtime.Pipeliner
}

// pipeCounting counts pipelines, the commands they carry and library
// loads, passing everything on.
type pipeCounting struct {
	pipeFunctions
	pipelines, loads int
	fcalls, evals    int // commands pipelined as FCALL, as EVALSHA or EVAL
}

func (c *pipeCounting) Pipeline(ctx context.Context, calls []*runtime.PipelineCall) {
	c.pipelines++
	for _, call := range calls {
		if call.FCall {
			c.fcalls++
		} else {
			c.evals++
		}
	}
	c.pipeFunctions.Pipeline(ctx, calls)
}

func (c *pipeCounting) LoadLibrary(ctx context.Context, l *runtime.Library) error {
	c.loads++
	return c.pipeFunctions.LoadLibrary(ctx, l)
}

// A batch of a library's scripts goes as FCALL in one pipeline; the calls
// the server answers "Function not found" (never loaded, FUNCTION FLUSH
// between queuing and sending) load the library once and go again in one
// more pipeline; a function that returns that text itself runs once; and
// luatest, which has no pipeline, gives the same results call by call.
func TestBatchFunctions(t *testing.T) {
	for _, row := range executors {
		t.Run(row.name, func(t *testing.T) {
			ctx := context.Background()
			e, do := row.open(t)
			pc, pipelined := e.(pipeFunctions)
			var exec runtime.Executor = e
			var c *pipeCounting
			if pipelined {
				c = &pipeCounting{pipeFunctions: pc}
				exec = c
			}
			incr, get, _, fake := libScripts("batch " + row.name)
			lib := runtime.NewLibrary(runtime.LibrarySpec{Name: "blib", Scripts: []*runtime.Script{incr, get, fake}})

			send := func(flush bool) (sums []int64, got string, fakeErr error) {
				t.Helper()
				var b runtime.Batch
				var fs []*runtime.Future[runtime.Value]
				for i := range 5 {
					fs = append(fs, runtime.Queue(&b, exec, incr, []string{"{b}" + strconv.Itoa(i)}, []string{"2"}, luagenimpl.Raw))
				}
				g := runtime.Queue(&b, exec, get, []string{"{b}0"}, nil, luagenimpl.Raw)
				f := runtime.Queue(&b, exec, fake, []string{"{b}fake"}, []string{"Function not found"}, luagenimpl.Raw)
				if flush {
					assert.Equal(t, "OK", do("FUNCTION", "FLUSH"))
				}
				err := b.Send(ctx)
				require.Error(t, err, "the fake call fails")
				for _, fu := range fs {
					v, err := fu.Result()
					require.NoError(t, err)
					sums = append(sums, v.Int)
				}
				v, err := g.Result()
				require.NoError(t, err)
				return sums, v.Array[0].Str, f.Err()
			}

			// Never loaded: one pipeline of FCALLs, one load, one more
			// pipeline of every call again (none ran).
			sums, got, fakeErr := send(false)
			assert.Equal(t, []int64{2, 2, 2, 2, 2}, sums)
			assert.Equal(t, "2", got)
			var re *runtime.ReplyError
			require.ErrorAs(t, fakeErr, &re)
			assert.Equal(t, "Function not found", re.Msg, "the function's own reply, unmarked")
			assert.Equal(t, "1", do("GET", "{b}fake"), "the fake function ran once")
			if pipelined {
				assert.Equal(t, 2, c.pipelines)
				assert.Equal(t, 1, c.loads)
				assert.Equal(t, 14, c.fcalls)
				assert.Equal(t, 0, c.evals, "no EVALSHA in function mode")
			}

			// Loaded: one pipeline, no load.
			sums, _, _ = send(false)
			assert.Equal(t, []int64{4, 4, 4, 4, 4}, sums)
			assert.Equal(t, "2", do("GET", "{b}fake"))
			if pipelined {
				assert.Equal(t, 3, c.pipelines)
				assert.Equal(t, 1, c.loads)
			}

			// FUNCTION FLUSH after queuing: loaded again, each call once.
			sums, got, _ = send(true)
			assert.Equal(t, []int64{6, 6, 6, 6, 6}, sums)
			assert.Equal(t, "6", got)
			assert.Equal(t, "3", do("GET", "{b}fake"))
			if pipelined {
				assert.Equal(t, 5, c.pipelines)
				assert.Equal(t, 2, c.loads)
				assert.Equal(t, 0, c.evals)
				stats := do("INFO", "commandstats")
				assert.NotContains(t, stats, "cmdstat_evalsha")
				assert.NotContains(t, stats, "cmdstat_eval:")
			}
			assert.Equal(t, lib.Hash(), do("FCALL_RO", lib.Name()+"_version", "0"), "the library is on the server")

			// A script in no library shares the batch: after SCRIPT FLUSH
			// and FUNCTION FLUSH its EVAL and the reloaded FCALL go in
			// one more pipeline together.
			plain := runtime.NewScript(runtime.ScriptSpec{Name: "t.Plain", File: "plain.lua", Body: "#!lua\nreturn redis.call('INCR', KEYS[1])"})
			do("SCRIPT", "FLUSH")
			do("FUNCTION", "FLUSH")
			var b runtime.Batch
			p := runtime.Queue(&b, exec, plain, []string{"{b}plain"}, nil, luagenimpl.Raw)
			f := runtime.Queue(&b, exec, incr, []string{"{b}0"}, []string{"1"}, luagenimpl.Raw)
			require.NoError(t, b.Send(ctx))
			v, err := p.Result()
			require.NoError(t, err)
			assert.Equal(t, runtime.IntValue(1), v)
			v, err = f.Result()
			require.NoError(t, err)
			assert.Equal(t, runtime.IntValue(7), v)
			if pipelined {
				assert.Equal(t, 7, c.pipelines)
				assert.Equal(t, 3, c.loads)
				assert.Equal(t, 2, c.evals, "EVALSHA, then EVAL")
			}
		})
	}
}

// On the 3+3 cluster, a batch of FCALLs over every primary and keyless
// calls survives a FUNCTION FLUSH of every primary between queuing and
// sending: no "Function not found" reaches a Future, and every call ran
// once.
func TestBatchFunctionsOnCluster(t *testing.T) {
	c := sharedCluster(t)
	exectest.Run(t, func(t *testing.T, k exectest.Kind) {
		ctx := context.Background()
		e := k.Cluster(t, c)
		incr, _, _, _ := libScripts("batch cluster " + k.Name)
		keyless := runtime.NewScript(runtime.ScriptSpec{Name: "blib.Echo", File: "lua/lib/echo.lua", Body: "#!lua\nreturn ARGV[1]"})
		lib := runtime.NewLibrary(runtime.LibrarySpec{Name: "blib_" + k.Name, Scripts: []*runtime.Script{incr, keyless}})
		primaries := func() (ps []string) {
			for _, n := range c.Nodes {
				if role(t, n) == "primary" {
					ps = append(ps, n.Addr)
					n.Do(t, "FUNCTION", "DELETE", lib.Name())
				}
			}
			return ps
		}
		t.Cleanup(func() { primaries() })
		require.NoError(t, lib.Load(ctx, e))

		prefix := "{fb-" + k.Name + "-" + strconv.FormatInt(time.Now().UnixNano(), 36)
		var b runtime.Batch
		var incrs []*runtime.Future[runtime.Value]
		for i := range 30 {
			incrs = append(incrs, runtime.Queue(&b, e, incr, []string{prefix + "-" + strconv.Itoa(i) + "}:n"}, []string{"1"}, luagenimpl.Raw))
		}
		echo := runtime.Queue(&b, e, keyless, nil, []string{"hi"}, luagenimpl.Raw)
		assert.Len(t, primaries(), 3, "the library is gone from every primary")
		require.NoError(t, b.Send(ctx))
		for i, f := range incrs {
			v, err := f.Result()
			require.NoError(t, err, i)
			assert.Equal(t, runtime.IntValue(1), v, "call %d ran once", i)
		}
		v, err := echo.Result()
		require.NoError(t, err)
		assert.Equal(t, "hi", v.Str)
		loaded := 0
		for _, n := range c.Nodes {
			if role(t, n) == "primary" && strings.Contains(n.Do(t, "FUNCTION", "LIST", "LIBRARYNAME", lib.Name()), incr.FunctionName()) {
				loaded++
			}
		}
		assert.Equal(t, 3, loaded, "every primary has the library again")
	})
}
