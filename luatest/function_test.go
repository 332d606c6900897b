package luatest_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/luagen/luagen/luatest"
	"github.com/luagen/luagen/runtime"
)

// Generated function-mode packages run on luatest through
// runtime.FunctionExecutor: the call log, the KEYS check and injected
// faults speak in lines of the .lua file, not of the library.
func TestFunctionExecutor(t *testing.T) {
	ctx := context.Background()
	get := func(r *luatest.Redis, k string) string { v, _ := r.Get(k); return v }
	other := runtime.NewScript(runtime.ScriptSpec{Name: "fx.Other", File: "lua/fx/other.lua", Body: "#!lua\nreturn 0\n"})
	s := runtime.NewScript(runtime.ScriptSpec{Name: "fx.Touch", File: "lua/fx/touch.lua", Body: "#!lua\n" +
		"redis.call('SET', KEYS[1], ARGV[1])\n" +
		"\n" +
		"return redis.call('GET', ARGV[2])\n"})
	lib := runtime.NewLibrary(runtime.LibrarySpec{Name: "fx", Scripts: []*runtime.Script{other, s}})
	require.Greater(t, s.FunctionLine(), 2, "touch.lua is not the library's first function")

	r := luatest.Start(t)
	_, err := s.Exec(ctx, r, []string{"k"}, []string{"v", "undeclared"})
	var se *runtime.ScriptError
	require.ErrorAs(t, err, &se)
	assert.Equal(t, 4, se.Line)
	assert.Contains(t, se.Message(), "script accessed key 'undeclared' not declared in KEYS (lua/fx/touch.lua:4)")
	calls := r.Calls()
	require.Len(t, calls, 2)
	assert.Equal(t, "lua/fx/touch.lua", calls[0].File)
	assert.Equal(t, 2, calls[0].Line)
	assert.Equal(t, 4, calls[1].Line)
	assert.Equal(t, "v", get(r, "k"))

	// The library is loaded once; FUNCTION FLUSH makes the next call load it again.
	v, err := r.Do("FUNCTION", "LIST", "LIBRARYNAME", lib.Name())
	require.NoError(t, err)
	assert.Len(t, v.Array, 1)
	r.MustDo("FUNCTION", "FLUSH")
	_, err = s.Exec(ctx, r, []string{"k"}, []string{"w", "k"})
	require.NoError(t, err)
	assert.Equal(t, "w", get(r, "k"))

	// A lost reply is the caller's problem, as under EVAL: the function ran.
	r.LoseReply()
	_, err = s.Exec(ctx, r, []string{"k"}, []string{"x", "k"})
	require.ErrorIs(t, err, luatest.ErrReplyLost)
	assert.Equal(t, "x", get(r, "k"))
}
