package runtime_test

import (
	"context"
	"github.com/luagen/luagen/internal/exectest"
	"strconv"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/luagen/luagen/luatest"
	"github.com/luagen/luagen/redistest"
	"github.com/luagen/luagen/runtime"
)

// executorRow is one executor the cross-executor tests run on: open starts
// a fresh server and returns the executor and a way to run one command
// there (for set-up and inspection) that answers as redistest.Server.Do does.
type executorRow struct {
	name string
	open func(t *testing.T) (runtime.Executor, func(args ...string) string)
}

// executors lists every executor; a new one is one more line.
var executors = []executorRow{
	{"rueidis", func(t *testing.T) (runtime.Executor, func(...string) string) {
		srv := redistest.Start(t)
		return runtime.NewRueidisExecutor(srv.Client(t)), func(args ...string) string { return srv.Do(t, args...) }
	}},
	{"goredis", func(t *testing.T) (runtime.Executor, func(...string) string) {
		srv := redistest.Start(t)
		return exectest.GoRedis.Single(t, srv), func(args ...string) string { return srv.Do(t, args...) }
	}},
	{"luatest", func(t *testing.T) (runtime.Executor, func(...string) string) {
		r := luatest.Start(t)
		return r, func(args ...string) string {
			v, err := r.Do(args...)
			switch {
			case err != nil:
				return "ERR " + err.Error()
			case v.Kind == runtime.KindNil:
				return "<nil>"
			case v.Kind == runtime.KindInt:
				return strconv.FormatInt(v.Int, 10)
			}
			return v.Str
		}
	}},
}

// counting passes every call on to its executor and counts EVALSHA and EVAL.
type counting struct {
	runtime.Executor
	evalSha, eval atomic.Int64
}

func (c *counting) EvalSha(ctx context.Context, s *runtime.Script, keys, args []string) (runtime.Value, error) {
	c.evalSha.Add(1)
	return c.Executor.EvalSha(ctx, s, keys, args)
}

func (c *counting) Eval(ctx context.Context, s *runtime.Script, keys, args []string) (runtime.Value, error) {
	c.eval.Add(1)
	return c.Executor.Eval(ctx, s, keys, args)
}

const serverNoScript = "NOSCRIPT No matching script. Please use EVAL."

// TestScriptSaysNoScriptRunsOnce: a script that counts its runs and then
// replies with an error reading NOSCRIPT runs exactly once per call, and the
// caller gets the script's own error, never a silent EVAL.
func TestScriptSaysNoScriptRunsOnce(t *testing.T) {
	const incr = "redis.call('INCR', KEYS[1])\n"
	for _, tc := range []struct {
		name, body, arg string
		want            string // ReplyError.Msg the caller gets
		line            int    // the line a *ScriptError names; 0: a plain reply error
	}{
		{name: "literal", body: incr + "return redis.error_reply('NOSCRIPT mine')", want: "NOSCRIPT mine"},
		{name: "server text", body: incr + "return {err='" + serverNoScript + "'}", want: serverNoScript},
		{name: "single word", body: incr + "return redis.error_reply('NOSCRIPT')", want: "NOSCRIPT"},
		{name: "from ARGV", body: incr + "return redis.error_reply(ARGV[1])", arg: serverNoScript, want: serverNoScript},
		{name: "from ARGV with ERR", body: incr + "return {err=ARGV[1]}", arg: "ERR " + serverNoScript, want: serverNoScript},
		{name: "the mark itself", body: incr + "return {err=ARGV[1]}", arg: "LUAGEN NOSCRIPT x", want: "LUAGEN NOSCRIPT x"},
		{name: "shebang and comment at the end", body: "#!lua flags=allow-oom\n" + incr + "return {err=ARGV[1]} -- no newline", arg: serverNoScript, want: serverNoScript},
		{name: "varargs", body: incr + "local n = select('#', ...)\nreturn {err=ARGV[1] .. n}", arg: "NOSCRIPT n=", want: "NOSCRIPT n=0"},
		{name: "raised table", body: incr + "error({err='" + serverNoScript + "'})", line: 2},
		{name: "raised string", body: incr + "\nerror(ARGV[1], 0)", arg: serverNoScript, line: 3},
	} {
		for _, ex := range executors {
			t.Run(ex.name+"/"+tc.name, func(t *testing.T) {
				inner, do := ex.open(t)
				e := &counting{Executor: inner}
				s := runtime.NewScript(runtime.ScriptSpec{Name: "t.Liar", File: "lua/t/liar.lua", Body: tc.body})
				ctx := context.Background()
				for call := 1; call <= 3; call++ {
					_, err := s.Exec(ctx, e, []string{"runs"}, []string{tc.arg})
					require.Error(t, err)
					assert.Equal(t, strconv.Itoa(call), do("GET", "runs"), "call %d: the script ran once per call", call)
					var re *runtime.ReplyError
					require.ErrorAs(t, err, &re)
					if tc.line == 0 {
						assert.Equal(t, &runtime.ReplyError{Msg: tc.want}, err, "the script's own error, as the executor gave it")
					} else {
						var se *runtime.ScriptError
						require.ErrorAs(t, err, &se)
						assert.Equal(t, tc.line, se.Line)
						assert.Contains(t, se.Err.Msg, serverNoScript+" script: ")
					}
				}
				assert.Equal(t, int64(3), e.evalSha.Load())
				assert.Equal(t, int64(1), e.eval.Load(), "EVAL only for the first call, whose EVALSHA found no script")

				// A real NOSCRIPT still falls back to EVAL, once.
				do("SCRIPT", "FLUSH")
				_, err := s.Exec(ctx, e, []string{"runs"}, []string{tc.arg})
				require.Error(t, err)
				assert.Equal(t, "4", do("GET", "runs"))
				assert.Equal(t, int64(2), e.eval.Load())
			})
		}
	}
}

// TestWrappedBodyKeepsReplies: the wrapper changes nothing else a script
// can see: replies of every shape, RESP3, read-only scripts, error lines.
func TestWrappedBodyKeepsReplies(t *testing.T) {
	for _, ex := range executors {
		t.Run(ex.name, func(t *testing.T) {
			e, do := ex.open(t)
			ctx := context.Background()
			do("SET", "{k}n", "1")
			for _, tc := range []struct {
				body string
				ro   bool
				want runtime.Value
			}{
				{body: "return 1, 2, 3", want: runtime.IntValue(1)},
				{body: "return", want: runtime.Nil},
				{body: "local x = 1", want: runtime.Nil},
				{body: "", want: runtime.Nil},
				{body: "#!lua\n", want: runtime.Nil},
				{body: "#!lua flags=no-writes\nreturn redis.call('GET', KEYS[1])", ro: true, want: runtime.StringValue("1")},
				{body: "return {ok='FINE'}", want: runtime.StringValue("FINE")},
				{body: "return {err=7}", want: runtime.ArrayValue()},
				{body: "return {1, {err='NOSCRIPT nested'}}", want: runtime.ArrayValue(runtime.IntValue(1), runtime.Value{Kind: runtime.KindError, Str: "NOSCRIPT nested"})},
				{body: "return select('#', ...)", want: runtime.IntValue(0)},
				{body: "return arg == nil and select('#', ...)", want: runtime.IntValue(0)},
				{body: "return r", want: runtime.StringValue("global r")},
				{body: "redis.setresp(3)\nreturn {double=1.5}", want: runtime.Value{Kind: runtime.KindDouble, Float: 1.5}},
				{body: "redis.setresp(3)\nreturn {map={a=1}}", want: runtime.Value{Kind: runtime.KindMap, Array: []runtime.Value{runtime.StringValue("a"), runtime.IntValue(1)}}},
				{body: "--[[ long\ncomment ]] return 5 -- a comment at the end", want: runtime.IntValue(5)},
				{body: manyLocals(200) + "return l200", want: runtime.IntValue(200)}, // LUAI_MAXVARS
			} {
				if tc.body == "return r" {
					// r is the wrapper's local: the body must still see
					// the global of that name (here: none).
					s := runtime.NewScript(runtime.ScriptSpec{Name: "t.R", File: "r.lua", Body: tc.body})
					_, err := s.Exec(ctx, e, nil, nil)
					require.ErrorContains(t, err, "nonexistent global variable 'r'")
					continue
				}
				s := runtime.NewScript(runtime.ScriptSpec{Name: "t.W", File: "w.lua", Body: tc.body, ReadOnly: tc.ro})
				got, err := s.Exec(ctx, e, []string{"{k}n"}, nil)
				require.NoError(t, err, tc.body)
				assert.Equal(t, tc.want, got, tc.body)
			}
		})
	}
}

func manyLocals(n int) string {
	var b []byte
	for i := 1; i <= n; i++ {
		b = append(b, "local l"+strconv.Itoa(i)+" = "+strconv.Itoa(i)+"\n"...)
	}
	return string(b)
}

func TestWrappedBodyKeepsErrorLines(t *testing.T) {
	for _, ex := range executors {
		t.Run(ex.name, func(t *testing.T) {
			e, _ := ex.open(t)
			for body, line := range map[string]int{
				"#!lua\nlocal x = 1\nreturn nosuch.field":                     3,
				"\n\n\n\nerror('boom')":                                       5,
				"local t = nil\n\nreturn t.x -- no newline":                   3,
				"local function f()\n  return redis.call('NOSUCH')\nend\nf()": 2,
				"#!lua flags=no-writes\n\nreturn redis.call('SET', 'a', 'b')": 3,
			} {
				s := runtime.NewScript(runtime.ScriptSpec{Name: "t.L", File: "lua/t/l.lua", Body: body})
				_, err := s.Exec(context.Background(), e, nil, nil)
				var se *runtime.ScriptError
				require.ErrorAs(t, err, &se, body)
				assert.Equal(t, line, se.Line, body)
			}
		})
	}
}

// TestRaisedErrorWithoutWhereIsTheOneForgery documents the limit of the
// guard, on every executor: an error table raised with a metatable that
// drops the error handler's source and line fields reaches the client
// without Redis' " script: ..., on @user_script:N." suffix, so it reads
// exactly like the server's NOSCRIPT. Only a script written to do so can
// produce it; no input can.
func TestRaisedErrorWithoutWhereIsTheOneForgery(t *testing.T) {
	for _, ex := range executors {
		t.Run(ex.name, func(t *testing.T) {
			_, do := ex.open(t)
			assert.Equal(t, "ERR "+serverNoScript, do("EVAL", "error(setmetatable({err='"+serverNoScript+"'}, {__newindex=function() end}))", "0"))
			assert.Regexp(t, `^ERR `+serverNoScript+` script: [0-9a-f]{40}, on @user_script:1\.$`, do("EVAL", "error({err='"+serverNoScript+"'})", "0"))
		})
	}
}
