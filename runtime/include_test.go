package runtime_test

import (
	"context"
	"crypto/sha1"
	"encoding/hex"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/luagen/luagen/gen"
	"github.com/luagen/luagen/internal/exectest"
	"github.com/luagen/luagen/luatest"
	"github.com/luagen/luagen/redistest"
	"github.com/luagen/luagen/runtime"
)

// The files of testdata/include as the module records them.
const (
	raiseFile = "runtime/testdata/include/raise.lua"
	failFile  = "runtime/testdata/include/lib/fail.lua"
)

// includeScript builds testdata/include/raise.lua, which includes
// lib/fail.lua, as generated code does: gen's combined body and its spans
// as ScriptSpec.Lines. With lib it also makes it the one function of a
// library, so that calls use FCALL where the executor runs functions.
func includeScript(t *testing.T, lib bool) *runtime.Script {
	srcs, err := gen.Load([]string{filepath.Join("testdata", "include")})
	require.NoError(t, err)
	require.Len(t, srcs, 1, "lib/fail.lua is not a script")
	s, diags := gen.ParseSource(srcs[0])
	require.Empty(t, diags)
	require.Equal(t, raiseFile, s.File)
	var lines []runtime.LineRange
	for _, sp := range s.Spans[1:] { // as gen/emit.go writes them
		lines = append(lines, runtime.LineRange{Body: sp.Line, File: sp.File, Line: sp.FileLine})
	}
	require.Equal(t, []runtime.LineRange{{Body: 7, File: failFile, Line: 1}, {Body: 16, File: raiseFile, Line: 7}}, lines)
	sc := runtime.NewScript(runtime.ScriptSpec{Name: "include.Raise", File: s.File, Body: s.Body, Lines: lines})
	if lib {
		runtime.NewLibrary(runtime.LibrarySpec{Name: "include", Scripts: []*runtime.Script{sc}})
	}
	return sc
}

// An error raised in an included file is reported at that file's line,
// and one raised in the script after the inlined text at the script's own
// line, on luatest and on a real server through both executors, with
// EVALSHA/EVAL and with FCALL. The SHA1 is of what is sent: the server
// names the same one.
func TestIncludedErrorPositions(t *testing.T) {
	type row struct {
		name string
		open func(t *testing.T) runtime.Executor
	}
	rows := []row{{"luatest", func(t *testing.T) runtime.Executor { return luatest.Start(t) }}}
	for _, k := range exectest.Kinds {
		rows = append(rows, row{k.Name, func(t *testing.T) runtime.Executor { return k.Single(t, redistest.Start(t)) }})
	}
	for _, r := range rows {
		for _, mode := range []string{"eval", "functions"} {
			t.Run(r.name+" "+mode, func(t *testing.T) {
				ctx := context.Background()
				e := r.open(t)
				s := includeScript(t, mode == "functions")
				sum := sha1.Sum([]byte(s.Body()))
				require.Equal(t, hex.EncodeToString(sum[:]), s.SHA1())
				require.True(t, strings.Contains(s.Body(), "local function fail(how)"))

				v, err := s.Exec(ctx, e, []string{"k"}, []string{"none"})
				require.NoError(t, err)
				assert.Equal(t, "OK", v.Str)

				_, err = s.Exec(ctx, e, []string{"k"}, []string{"helper"})
				var se *runtime.ScriptError
				require.ErrorAs(t, err, &se)
				assert.Equal(t, failFile, se.File)
				assert.Equal(t, 8, se.Line, "the SET in fail.lua")
				assert.Equal(t, "include.Raise", se.Script)
				assert.True(t, strings.HasPrefix(se.Error(), failFile+":8: include.Raise: "), se.Error())
				assert.Contains(t, se.Message(), "invalid expire time")
				if mode == "eval" {
					assert.Contains(t, se.Err.Msg, "script: "+s.SHA1()+", on @user_script:14.", "the server hashed the body sent")
				}

				_, err = s.Exec(ctx, e, []string{"k"}, []string{"script"})
				require.ErrorAs(t, err, &se)
				assert.Equal(t, raiseFile, se.File)
				assert.Equal(t, 9, se.Line, "the error() after the inlined helper")
				assert.Equal(t, raiseFile+":9: include.Raise: from the script", se.Error())

				if lt, ok := e.(*luatest.Redis); ok {
					calls := lt.Calls()
					require.NotEmpty(t, calls)
					last := calls[len(calls)-1]
					assert.Equal(t, []any{"SET", failFile, 8}, []any{last.Command, last.File, last.Line}, "the call log names the helper's line too")
				}
			})
		}
	}
}

// Position maps lines of the combined body: the script's own before the
// first range, each range's file after it.
func TestScriptPosition(t *testing.T) {
	s := runtime.NewScript(runtime.ScriptSpec{Name: "p.P", File: "p.lua", Body: "return 1",
		Lines: []runtime.LineRange{{Body: 4, File: "lib/a.lua", Line: 1}, {Body: 9, File: "p.lua", Line: 4}}})
	for _, tc := range []struct {
		in   int
		file string
		line int
	}{{1, "p.lua", 1}, {3, "p.lua", 3}, {4, "lib/a.lua", 1}, {8, "lib/a.lua", 5}, {9, "p.lua", 4}, {20, "p.lua", 15}} {
		f, l := s.Position(tc.in)
		assert.Equal(t, []any{tc.file, tc.line}, []any{f, l}, "line %d", tc.in)
	}
	plain := runtime.NewScript(runtime.ScriptSpec{Name: "p.Q", File: "q.lua", Body: "return 1"})
	f, l := plain.Position(7)
	assert.Equal(t, []any{"q.lua", 7}, []any{f, l})
}
