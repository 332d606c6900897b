package luatest

import (
	"strings"
	"testing"

	corpus "github.com/luagen/luagen/internal/luacorpus"
	"github.com/stretchr/testify/require"
	lua "github.com/yuin/gopher-lua"
)

// TestNoGlobalStoreSurvivesRewrite: the global table is every script's
// environment and has no __newindex, so an OP_SETGLOBAL left in a chunk
// would store into it silently. Every assignment to a global name must
// have become a call of __luatest_setg (lua51.go store, funcDefStore):
// checked on every corpus script and library and on the forms below.
func TestNoGlobalStoreSurvivesRewrite(t *testing.T) {
	cases, err := corpus.Load("testdata/corpus", SplitArgs)
	require.NoError(t, err)
	bodies := []string{
		"x = 1", "x, y = 1, 2", "local a; a, x = 1, 2", "local t = {}; t.k, x, t[1] = 1, 2, 3",
		"function f() end", "function f() function g() end end", "local function f() x = 1 end",
		"for i = 1, 2 do y = i end", "repeat z = 1 until z", "while true do w = 1 break end",
		"if a then b = 1 elseif c then d = 1 else e = 1 end", "do local x; x = 1; y = x end",
		"local t = {f = function() q = 1 end}", "return function(...) v = ... end",
	}
	for _, tc := range cases {
		body := tc.Script
		if tc.Library {
			body = body[strings.IndexByte(body, '\n'):]
		} else if _, n, msg := parseShebang(body); msg == "" {
			body = body[n:]
		}
		bodies = append(bodies, body)
	}
	compiled := 0
	for _, body := range bodies {
		proto, _, err := compileScript(body)
		if err != nil {
			continue // a syntax error case
		}
		compiled++
		require.False(t, hasSetGlobal(proto), "OP_SETGLOBAL left in:\n%s", body)
	}
	require.Greater(t, compiled, len(cases)/2)
}

func hasSetGlobal(p *lua.FunctionProto) bool {
	for _, inst := range p.Code {
		if int(inst>>26) == lua.OP_SETGLOBAL { // opGetOpCode
			return true
		}
	}
	for _, sub := range p.FunctionPrototypes {
		if hasSetGlobal(sub) {
			return true
		}
	}
	return false
}
