package runtime_test

import (
	"context"
	"errors"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/luagen/luagen/gen"
	"github.com/luagen/luagen/runtime"
	"github.com/luagen/luagen/runtime/luagenimpl"
)

// TestLibraryLineBreaks: a script saved with old Mac line endings (a lone
// "\r", a line break to Lua 5.1 as to Redis) or with a mix of them, or a
// helper so saved that a script includes, does not move the .lua line of
// an error raised in a function after it in the library (issue 34:
// lua/b.lua:6 was reported for line 5), on every executor, for Exec and
// for a batch.
func TestLibraryLineBreaks(t *testing.T) {
	for _, row := range executors {
		t.Run(row.name, func(t *testing.T) {
			ctx := context.Background()
			e, _ := row.open(t)
			mac := runtime.NewScript(runtime.ScriptSpec{Name: "crlib.Mac", File: "lua/crlib/mac.lua",
				Body: "--- Mac counts.\r---@return int64\rlocal n = 1\rn = n + 1\rreturn n\r"})
			mixed := runtime.NewScript(runtime.ScriptSpec{Name: "crlib.Mixed", File: "lua/crlib/mixed.lua",
				Body: "#!lua\nlocal a = 1\r\nlocal b = 2\n\rlocal c = 3\r\rreturn a + b + c\n"})
			// A script that includes a helper saved with lone "\r"s, as
			// generated code builds it.
			src, diags := gen.ParseSource(gen.Source{Path: "helped.lua", File: "lua/crlib/helped.lua",
				Src: []byte("---@return int64\n---@include lib/mac.lua\nreturn mac()\n"),
				ReadInclude: func(p string) ([]byte, error) {
					require.Equal(t, "lib/mac.lua", filepath.ToSlash(p))
					return []byte("local function mac()\r\treturn 3\rend\r"), nil
				}})
			require.Empty(t, diags)
			var lines []runtime.LineRange
			for _, sp := range src.Spans[1:] { // as gen/emit.go writes them
				lines = append(lines, runtime.LineRange{Body: sp.Line, File: sp.File, Line: sp.FileLine})
			}
			helped := runtime.NewScript(runtime.ScriptSpec{Name: "crlib.Helped", File: src.File, Body: src.Body, Lines: lines})
			boom := runtime.NewScript(runtime.ScriptSpec{Name: "crlib.Boom", File: "lua/crlib/boom.lua",
				Body: "--- Boom fails on line 5.\n---@return int64\nlocal x = 1\n\nerror('boom ' .. ARGV[1])\n"})
			runtime.NewLibrary(runtime.LibrarySpec{Name: "crlib", Scripts: []*runtime.Script{mac, mixed, helped, boom}})
			_, ok := e.(runtime.FunctionExecutor)
			require.True(t, ok, "%T must run functions", e)

			v, err := mac.Exec(ctx, e, nil, nil)
			require.NoError(t, err)
			assert.Equal(t, int64(2), v.Int)
			v, err = mixed.Exec(ctx, e, nil, nil)
			require.NoError(t, err)
			assert.Equal(t, int64(6), v.Int)
			v, err = helped.Exec(ctx, e, nil, nil)
			require.NoError(t, err)
			assert.Equal(t, int64(3), v.Int)

			check := func(err error) {
				t.Helper()
				se, ok := errors.AsType[*runtime.ScriptError](err)
				require.True(t, ok, "%v", err)
				assert.Equal(t, "lua/crlib/boom.lua", se.File)
				assert.Equal(t, 5, se.Line, "%v", err)
				assert.Contains(t, se.Error(), "lua/crlib/boom.lua:5: crlib.Boom: ")
			}
			_, err = boom.Exec(ctx, e, nil, []string{"x"})
			check(err)
			var b runtime.Batch
			f := runtime.Queue(&b, e, boom, nil, []string{"y"}, luagenimpl.Raw)
			require.Error(t, b.Send(ctx))
			check(f.Err())
		})
	}
}
