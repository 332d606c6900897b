package runtime_test

import (
	"context"
	"errors"
	"strconv"
	"testing"
	"time"

	"github.com/alicebob/miniredis/v2"
	"github.com/redis/rueidis"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/luagen/luagen/internal/exectest"
	"github.com/luagen/luagen/redistest"
	"github.com/luagen/luagen/runtime"
)

var (
	errOut  = runtime.NewCodeError("t.S", "Out", "-1", "")
	errNone = runtime.NewCodeError("t.S", "None", "nil", "")
	errBad  = runtime.NewCodeError("t.S", "Bad", "BAD_ARG", "bad argument")
)

func script(body string) *runtime.Script {
	return runtime.NewScript(runtime.ScriptSpec{Name: "t.S", File: "lua/t/s.lua", Body: body,
		Errors: []*runtime.CodeError{errOut, errNone, errBad}})
}

// TestRepliesFromRealServer runs scripts on redis-server 7 through each
// executor (rueidis and go-redis both speak RESP3 by default) and checks the
// decoded Value of every reply shape.
func TestRepliesFromRealServer(t *testing.T) {
	exectest.Run(t, func(t *testing.T, k exectest.Kind) {
		srv := redistest.Start(t)
		testReplies(t, srv, k.Single(t, srv), replyCases)
	})
}

// replyCases are the replies of scripts run by a RESP3 client.
var replyCases = []replyCase{
	{"return 42", runtime.IntValue(42)},
	{"return 3.99", runtime.IntValue(3)},
	{"return -3.99", runtime.IntValue(-3)},
	{"return true", runtime.IntValue(1)},
	{"return false", runtime.Nil},
	{"return nil", runtime.Nil},
	{"return 'x'", runtime.StringValue("x")},
	{"return {ok='QUEUED'}", runtime.StringValue("QUEUED")},
	{"return redis.call('PING')", runtime.StringValue("PONG")},
	{"return {1, 'a', {2}, false, 3}", runtime.ArrayValue(runtime.IntValue(1), runtime.StringValue("a"), runtime.ArrayValue(runtime.IntValue(2)), runtime.Nil, runtime.IntValue(3))},
	{"return {1, nil, 3}", runtime.ArrayValue(runtime.IntValue(1))},
	{"return {}", runtime.ArrayValue()},
	{"return {1, redis.pcall('INCR', KEYS[2])}", runtime.ArrayValue(runtime.IntValue(1), runtime.Value{Kind: runtime.KindError, Str: "WRONGTYPE Operation against a key holding the wrong kind of value"})},
	{"redis.setresp(3); return redis.call('HGETALL', KEYS[2])", runtime.Value{Kind: runtime.KindMap, Array: []runtime.Value{runtime.StringValue("f"), runtime.StringValue("v")}}},
	{"redis.setresp(3); return {map={z=1, a='x'}}", runtime.Value{Kind: runtime.KindMap, Array: []runtime.Value{runtime.StringValue("a"), runtime.StringValue("x"), runtime.StringValue("z"), runtime.IntValue(1)}}},
	{"redis.setresp(3); return {double=1.5}", runtime.Value{Kind: runtime.KindDouble, Float: 1.5}},
	{"redis.setresp(3); return true", runtime.Value{Kind: runtime.KindBool, Int: 1}},
	{"redis.setresp(3); return false", runtime.Value{Kind: runtime.KindBool}},
	{"redis.setresp(3); return {big_number='123456789012345678901234567890'}", runtime.Value{Kind: runtime.KindBigNumber, Str: "123456789012345678901234567890"}},
}

type replyCase struct {
	body string
	want runtime.Value
}

func testReplies(t *testing.T, srv *redistest.Server, e runtime.Executor, cases []replyCase) {
	t.Helper()
	for _, tc := range cases {
		srv.Do(t, "SET", "{k}str", "x")
		srv.Do(t, "HSET", "{k}h", "f", "v")
		plain := runtime.NewScript(runtime.ScriptSpec{Name: "t.Plain", File: "plain.lua", Body: tc.body})
		got, err := plain.Exec(context.Background(), e, []string{"{k}str", "{k}h"}, nil)
		require.NoError(t, err, tc.body)
		assert.Equal(t, tc.want, got, tc.body)
	}
}

func TestExecMapsDeclaredOutcomes(t *testing.T) {
	exectest.Run(t, func(t *testing.T, k exectest.Kind) {
		srv := redistest.Start(t)
		e := k.Single(t, srv)
		ctx := context.Background()

		v, err := script("return -1").Exec(ctx, e, nil, nil)
		assert.Same(t, errOut, err)
		assert.Equal(t, runtime.IntValue(-1), v, "the reply is still returned")

		_, err = script("return nil").Exec(ctx, e, nil, nil)
		assert.Same(t, errNone, err)

		_, err = script("return redis.error_reply('BAD_ARG qty must be >= 1')").Exec(ctx, e, nil, nil)
		require.ErrorIs(t, err, errBad)
		var re *runtime.ReplyError
		require.ErrorAs(t, err, &re)
		assert.Equal(t, "BAD_ARG qty must be >= 1", re.Msg)
		assert.Equal(t, "t.S: Bad: bad argument (reply BAD_ARG): BAD_ARG qty must be >= 1", err.Error())

		// A single-word error_reply gets "ERR " from Redis; the code still matches.
		_, err = script("return redis.error_reply('BAD_ARG')").Exec(ctx, e, nil, nil)
		require.ErrorIs(t, err, errBad)

		v, err = script("return -2").Exec(ctx, e, nil, nil)
		require.NoError(t, err, "undeclared integers are ordinary replies")
		assert.Equal(t, int64(-2), v.Int)

		_, err = script("return redis.error_reply('OTHER thing')").Exec(ctx, e, nil, nil)
		require.ErrorAs(t, err, &re)
		assert.Equal(t, "OTHER thing", re.Msg)
		assert.NotErrorIs(t, err, errBad)
	})
}

// Integer codes spread over a range with ordinary replies between and
// around them: each code maps to its error, and every other integer,
// inside the codes' range or outside it, is an ordinary reply.
func TestExecMapsIntegerCodesAnywhere(t *testing.T) {
	codes := map[int64]*runtime.CodeError{}
	var errs []*runtime.CodeError
	for _, n := range []int64{-5, 0, 7} {
		c := runtime.NewCodeError("t.R", "Code"+strconv.FormatInt(n+5, 10), strconv.FormatInt(n, 10), "")
		codes[n] = c
		errs = append(errs, c)
	}
	s := runtime.NewScript(runtime.ScriptSpec{Name: "t.R", File: "lua/t/r.lua", Body: "return tonumber(ARGV[1])", Errors: errs})
	exectest.Run(t, func(t *testing.T, k exectest.Kind) {
		srv := redistest.Start(t)
		e := k.Single(t, srv)
		for _, n := range []int64{-6, -5, -1, 0, 3, 7, 8, -1 << 40, 1 << 40} {
			v, err := s.Exec(context.Background(), e, nil, []string{strconv.FormatInt(n, 10)})
			assert.Equal(t, runtime.IntValue(n), v, "reply %d", n)
			if c := codes[n]; c != nil {
				assert.Same(t, c, err, "reply %d", n)
			} else {
				assert.NoError(t, err, "reply %d", n)
			}
		}
	})
}

func TestScriptErrorLine(t *testing.T) {
	exectest.Run(t, func(t *testing.T, k exectest.Kind) {
		srv := redistest.Start(t)
		e := k.Single(t, srv)
		for body, want := range map[string]struct {
			line int
			err  string
		}{
			"#!lua\nlocal x = 1\nreturn nosuch.field":                      {3, "lua/t/s.lua:3: t.S: Script attempted to access nonexistent global variable 'nosuch'"},
			"\n\n\n\nerror('boom')":                                        {5, "lua/t/s.lua:5: t.S: boom"},
			"local x\nreturn x < 1":                                        {2, "lua/t/s.lua:2: t.S: attempt to compare nil with number"},
			"return redis.call('INCR', KEYS[1])":                           {1, "lua/t/s.lua:1: t.S: value is not an integer or out of range"},
			"local a = 1\nlocal b = redis.call('NOSUCHCMD')\nreturn a + b": {2, "lua/t/s.lua:2: t.S: Unknown Redis command called from script"},
			"error({err='MY code'})":                                       {1, "lua/t/s.lua:1: t.S: MY code"},
		} {
			srv.Do(t, "SET", "str", "notanumber")
			_, err := script(body).Exec(context.Background(), e, []string{"str"}, nil)
			var se *runtime.ScriptError
			require.ErrorAs(t, err, &se, body)
			assert.Equal(t, want.line, se.Line, body)
			assert.Equal(t, "lua/t/s.lua", se.File)
			assert.Equal(t, want.err, se.Error(), "the line once, no SHA1: %s", body)
			var re *runtime.ReplyError
			require.ErrorAs(t, err, &re, "the reply as Redis sent it stays reachable")
			assert.Contains(t, re.Msg, "on @user_script:"+strconv.Itoa(want.line)+".", body)
		}
	})
}

func TestEvalShaFallsBackAfterFlushAndLoadsEveryNode(t *testing.T) {
	exectest.Run(t, func(t *testing.T, k exectest.Kind) {
		srv := redistest.Start(t)
		e := k.Single(t, srv)
		ctx := context.Background()
		s := script("return 7")
		require.NoError(t, runtime.Preload(ctx, e, s))
		assert.Equal(t, "[1]", srv.Do(t, "SCRIPT", "EXISTS", s.SHA1()))
		srv.Do(t, "SCRIPT", "FLUSH")
		v, err := s.Exec(ctx, e, nil, nil)
		require.NoError(t, err)
		assert.Equal(t, int64(7), v.Int)
		assert.Equal(t, "[1]", srv.Do(t, "SCRIPT", "EXISTS", s.SHA1()))
	})
}

func TestExecReturnsTransportErrorsUnchanged(t *testing.T) {
	exectest.Run(t, func(t *testing.T, k exectest.Kind) {
		srv := redistest.Start(t)
		e := k.Single(t, srv)
		srv.Stop()
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		_, err := script("return 1").Exec(ctx, e, nil, nil)
		require.Error(t, err)
		var re *runtime.ReplyError
		assert.False(t, errors.As(err, &re), "a connection error is not a reply: %v", err)
		assert.True(t, runtime.IsTransient(err), "%v", err)
	})
}

// fakeExecutor answers EVALSHA with a fixed error, for replies a real
// server cannot be made to send (a proxy's "ERR NOSCRIPT ...").
type fakeExecutor struct {
	evalshaErr error
	evals      int
}

func (f *fakeExecutor) EvalSha(context.Context, *runtime.Script, []string, []string) (runtime.Value, error) {
	return runtime.Value{}, f.evalshaErr
}

func (f *fakeExecutor) Eval(context.Context, *runtime.Script, []string, []string) (runtime.Value, error) {
	f.evals++
	return runtime.IntValue(1), nil
}

func (f *fakeExecutor) Load(context.Context, *runtime.Script) error { return nil }

func TestNoScriptWithERRPrefixFallsBack(t *testing.T) {
	for msg, fallback := range map[string]bool{
		"NOSCRIPT No matching script. Please use EVAL.":     true,
		"ERR NOSCRIPT No matching script. Please use EVAL.": true,
		"ERR unknown command 'EVALSHA'":                     false,
	} {
		f := &fakeExecutor{evalshaErr: &runtime.ReplyError{Msg: msg}}
		_, err := script("return 1").Exec(context.Background(), f, nil, nil)
		if fallback {
			assert.NoError(t, err, msg)
			assert.Equal(t, 1, f.evals, msg)
		} else {
			assert.Error(t, err, msg)
			assert.Zero(t, f.evals, msg)
		}
	}
}

func TestWithoutShebangRunsOnMiniredis(t *testing.T) {
	m := miniredis.RunT(t)
	c, err := rueidis.NewClient(rueidis.ClientOption{InitAddress: []string{m.Addr()}, DisableCache: true, ForceSingleClient: true})
	require.NoError(t, err)
	defer c.Close()
	s := runtime.NewScript(runtime.ScriptSpec{Name: "t.S", File: "s.lua", Body: "#!lua flags=no-writes\nreturn ARGV[1] .. 'x'", ReadOnly: true})

	_, err = s.Exec(context.Background(), runtime.NewRueidisExecutor(c), nil, []string{"a"})
	require.Error(t, err, "miniredis rejects the shebang; if this passes, WithoutShebang is no longer needed")

	e := runtime.WithoutShebang(runtime.NewRueidisExecutor(c))
	require.NoError(t, s.Load(context.Background(), e))
	for range 2 {
		v, err := s.Exec(context.Background(), e, nil, []string{"a"})
		require.NoError(t, err)
		assert.Equal(t, runtime.StringValue("ax"), v)
	}
}

// TestCodeErrorsCannotBeChanged checks that a sentinel reads back what
// NewCodeError was given, and that neither the spec's slice nor the one
// Errors returns reaches into the Script.
func TestCodeErrorsCannotBeChanged(t *testing.T) {
	assert.Equal(t, "t.S", errBad.Script())
	assert.Equal(t, "Bad", errBad.Name())
	assert.Equal(t, "BAD_ARG", errBad.Reply())
	assert.Equal(t, "bad argument", errBad.Desc())
	assert.Equal(t, "t.S: Bad: bad argument (reply BAD_ARG)", errBad.Error())
	assert.Equal(t, "t.S: Out (reply -1)", errOut.Error())

	spec := []*runtime.CodeError{errOut}
	s := runtime.NewScript(runtime.ScriptSpec{Name: "t.S", File: "s.lua", Body: "return -1", Errors: spec})
	spec[0] = errBad
	got := s.Errors()
	require.Equal(t, []*runtime.CodeError{errOut}, got, "NewScript kept its own copy")
	got[0] = errNone
	assert.Same(t, errOut, s.Errors()[0], "Errors returns a copy")

	_, err := s.Exec(context.Background(), replyExecutor(runtime.IntValue(-1)), nil, nil)
	assert.Same(t, errOut, err)
}

// replyExecutor answers every EVALSHA with one reply.
type replyExecutor runtime.Value

func (r replyExecutor) EvalSha(context.Context, *runtime.Script, []string, []string) (runtime.Value, error) {
	return runtime.Value(r), nil
}

func (r replyExecutor) Eval(context.Context, *runtime.Script, []string, []string) (runtime.Value, error) {
	return runtime.Value(r), nil
}

func (replyExecutor) Load(context.Context, *runtime.Script) error { return nil }

func TestScriptErrorMessage(t *testing.T) {
	const sha = "66c7e8a4bf3a0b8b9d1d6a0e1e0c0f5e2b1a9c3d"
	for msg, want := range map[string]string{
		"user_script:14: attempt to compare nil with number script: " + sha + ", on @user_script:14.":               "attempt to compare nil with number",
		"ERR user_script:2: boom script: " + sha + ", on @user_script:2.":                                           "boom",
		"WRONGTYPE Operation against a key holding the wrong kind of value script: " + sha + ", on @user_script:9.": "WRONGTYPE Operation against a key holding the wrong kind of value",
		"no wrapping at all":                      "no wrapping at all",
		"user_script:3 lacks the colon":           "user_script:3 lacks the colon",
		"script: " + sha + ", on @user_script:1.": "script: " + sha + ", on @user_script:1.", // nothing else to show
	} {
		se := &runtime.ScriptError{Script: "x.Allow", File: "lua/x.lua", Line: 14, Err: &runtime.ReplyError{Msg: msg}}
		assert.Equal(t, want, se.Message(), msg)
		assert.Equal(t, "lua/x.lua:14: x.Allow: "+want, se.Error())
		assert.Same(t, se.Err, errors.Unwrap(se))
	}
}
