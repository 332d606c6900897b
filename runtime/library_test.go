package runtime_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/luagen/luagen/runtime"
)

// libScripts returns fresh scripts for one library (a script belongs to one
// library at most). salt changes their text, and so the version.
func libScripts(salt string) (incr, get, boom, fake *runtime.Script) {
	incr = runtime.NewScript(runtime.ScriptSpec{Name: "lib.Incr", File: "lua/lib/incr.lua", Body: "#!lua\n" +
		"--- Incr adds ARGV[1] to 'KEYS[1]'\\ and returns the sum.\n" +
		"---@script Incr\n" +
		"return redis.call('INCRBY', KEYS[1], ARGV[1]) -- " + salt + "\n"})
	get = runtime.NewScript(runtime.ScriptSpec{Name: "lib.Get", File: "lua/lib/get.lua", ReadOnly: true,
		Body: "#!lua flags=no-writes,allow-stale\nreturn {redis.call('GET', KEYS[1]), #ARGV, ...}"})
	boom = runtime.NewScript(runtime.ScriptSpec{Name: "lib.Boom", File: "lua/lib/boom.lua",
		Body: "local x = 1\n\nerror('boom ' .. ARGV[1])\n"})
	fake = runtime.NewScript(runtime.ScriptSpec{Name: "lib.Fake", File: "lua/lib/fake.lua",
		Body: "#!lua\nredis.call('INCR', KEYS[1])\nreturn redis.error_reply(ARGV[1])"})
	return
}

func TestLibraryCode(t *testing.T) {
	incr, get, boom, fake := libScripts("a")
	lib := runtime.NewLibrary(runtime.LibrarySpec{Name: "my-lib", Scripts: []*runtime.Script{incr, get, boom, fake}})
	assert.Equal(t, "my_lib", lib.Package())
	assert.Regexp(t, `^[0-9a-f]{16}$`, lib.Hash())
	assert.Equal(t, "my_lib_"+lib.Hash(), lib.Name())
	assert.Equal(t, "Incr_"+lib.Hash(), incr.FunctionName())
	assert.Same(t, lib, get.Library())
	code := lib.Code(time.Unix(1700000000, 5))
	lines := strings.Split(code, "\n")
	assert.Equal(t, "#!lua name="+lib.Name(), lines[0])
	// Line N of each .lua file is line FunctionLine()+N-1 of the library.
	for _, s := range lib.Scripts() {
		for n, l := range strings.Split(s.Source(), "\n") {
			if n == 0 && strings.HasPrefix(l, "#!") || strings.TrimSpace(l) == "" {
				continue
			}
			assert.Contains(t, lines[s.FunctionLine()+n-1], l, "%s line %d", s.Name(), n+1)
		}
	}
	assert.Equal(t, 2, incr.FunctionLine())
	assert.Contains(t, lines[1], `description='Incr adds ARGV[1] to \'KEYS[1]\'\\ and returns the sum.'`)
	assert.Contains(t, lines[get.FunctionLine()-1], `flags={'no-writes', 'allow-stale'}`)
	assert.Contains(t, lines[boom.FunctionLine()-1], `flags={}, callback=function(KEYS, ARGV) local r = (function() local x = 1`)
	// The version function comes last and records the load time.
	assert.Equal(t, "redis.register_function{function_name='my_lib_"+lib.Hash()+"_version', "+
		"description='luagen library my_lib, loaded at 1700000000000000005 (Unix ns), load 0 of its process', "+
		"flags={'no-writes', 'allow-stale'}, callback=function() return '"+lib.Hash()+"' end}", lines[len(lines)-2])
	assert.Equal(t, "", lines[len(lines)-1])

	// Another text is another version; the same text the same one.
	incr2, get2, boom2, fake2 := libScripts("b")
	lib2 := runtime.NewLibrary(runtime.LibrarySpec{Name: "my-lib", Scripts: []*runtime.Script{incr2, get2, boom2, fake2}})
	assert.NotEqual(t, lib.Hash(), lib2.Hash())
	assert.NotEqual(t, lib.Name(), lib2.Name())
	incr3, get3, boom3, fake3 := libScripts("a")
	lib3 := runtime.NewLibrary(runtime.LibrarySpec{Name: "my-lib", Scripts: []*runtime.Script{incr3, get3, boom3, fake3}})
	assert.Equal(t, code, lib3.Code(time.Unix(1700000000, 5)))
	assert.Equal(t, lib.Name(), lib3.Name())
	assert.Panics(t, func() { runtime.NewLibrary(runtime.LibrarySpec{Name: "x", Scripts: []*runtime.Script{incr}}) })
}

// plainExecutor hides every method but Executor's.
type plainExecutor struct{ runtime.Executor }

// fcallCounting counts FCALLs and library loads.
type fcallCounting struct {
	runtime.FunctionExecutor
	fcalls, loads int
}

func (c *fcallCounting) FCall(ctx context.Context, s *runtime.Script, keys, args []string) (runtime.Value, error) {
	c.fcalls++
	return c.FunctionExecutor.FCall(ctx, s, keys, args)
}

func (c *fcallCounting) LoadLibrary(ctx context.Context, l *runtime.Library) error {
	c.loads++
	return c.FunctionExecutor.LoadLibrary(ctx, l)
}

func (c *fcallCounting) LoadLibraryFor(ctx context.Context, l *runtime.Library, key string) error {
	c.loads++
	return c.FunctionExecutor.LoadLibraryFor(ctx, l, key)
}

func TestLibraryExec(t *testing.T) {
	for _, row := range executors {
		t.Run(row.name, func(t *testing.T) {
			ctx := context.Background()
			e, do := row.open(t)
			fe, ok := e.(runtime.FunctionExecutor)
			require.True(t, ok, "%T must implement runtime.FunctionExecutor", e)
			c := &fcallCounting{FunctionExecutor: fe}
			incr, get, boom, fake := libScripts("exec")
			lib := runtime.NewLibrary(runtime.LibrarySpec{Name: "lib", Scripts: []*runtime.Script{incr, get, boom, fake}})

			// First call: Function not found, load, call again.
			v, err := incr.Exec(ctx, c, []string{"{k}n"}, []string{"5"})
			require.NoError(t, err)
			assert.Equal(t, int64(5), v.Int)
			assert.Equal(t, 2, c.fcalls)
			assert.Equal(t, 1, c.loads)
			assert.Equal(t, "1", do("FCALL", incr.FunctionName(), "1", "{k}m", "1"), "the library is on the server")

			v, err = incr.Exec(ctx, c, []string{"{k}n"}, []string{"2"})
			require.NoError(t, err)
			assert.Equal(t, int64(7), v.Int)
			assert.Equal(t, 3, c.fcalls)
			assert.Equal(t, 1, c.loads)

			// KEYS and ARGV read as under EVAL; no-writes goes as FCALL_RO.
			v, err = get.Exec(ctx, c, []string{"{k}n"}, []string{"a", "b"})
			require.NoError(t, err)
			require.Len(t, v.Array, 2)
			assert.Equal(t, "7", v.Array[0].Str)
			assert.Equal(t, int64(2), v.Array[1].Int)

			// A raised error names the .lua line.
			_, err = boom.Exec(ctx, c, nil, []string{"x"})
			var se *runtime.ScriptError
			require.ErrorAs(t, err, &se)
			assert.Equal(t, "lua/lib/boom.lua", se.File)
			assert.Equal(t, 3, se.Line)
			assert.Contains(t, err.Error(), "lua/lib/boom.lua:3: lib.Boom: ")
			assert.Contains(t, err.Error(), "boom x")

			// A function that returns "Function not found" itself runs once.
			_, err = fake.Exec(ctx, c, []string{"{k}f"}, []string{"Function not found"})
			var re *runtime.ReplyError
			require.ErrorAs(t, err, &re)
			assert.Equal(t, "Function not found", re.Msg)
			assert.Equal(t, "1", do("GET", "{k}f"), "ran once")

			// FUNCTION FLUSH (or a node that never had it): loaded again.
			assert.Equal(t, "OK", do("FUNCTION", "FLUSH"))
			loads := c.loads
			v, err = incr.Exec(ctx, c, []string{"{k}n"}, []string{"1"})
			require.NoError(t, err)
			assert.Equal(t, int64(8), v.Int)
			assert.Equal(t, loads+1, c.loads)

			// Preload loads the library once.
			assert.Equal(t, "OK", do("FUNCTION", "FLUSH"))
			require.NoError(t, runtime.Preload(ctx, c, lib.Scripts()...))
			assert.Equal(t, loads+2, c.loads)
			assert.Equal(t, "OK", do("FUNCTION", "DELETE", lib.Name()))

			// An executor without functions runs the same scripts with EVAL.
			v, err = incr.Exec(ctx, plainExecutor{e}, []string{"{k}n"}, []string{"1"})
			require.NoError(t, err)
			assert.Equal(t, int64(9), v.Int)
			_, err = boom.Exec(ctx, plainExecutor{e}, nil, []string{"y"})
			require.ErrorAs(t, err, &se)
			assert.Equal(t, 3, se.Line)
		})
	}
}

func TestIsFunctionNotFound(t *testing.T) {
	assert.True(t, runtime.IsFunctionNotFound(&runtime.ReplyError{Msg: "Function not found"}))
	assert.True(t, runtime.IsFunctionNotFound(&runtime.ReplyError{Msg: "ERR Function not found"}))
	assert.False(t, runtime.IsFunctionNotFound(&runtime.ReplyError{Msg: "LUAGEN Function not found"}))
	assert.False(t, runtime.IsFunctionNotFound(errors.New("Function not found")))
	assert.False(t, runtime.IsFunctionNotFound(&runtime.ReplyError{Msg: "Function not found script: f, on @user_function:3."}))
}
