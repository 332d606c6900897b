package luatest_test

import (
	"context"
	"errors"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/luagen/luagen/luatest"
	"github.com/luagen/luagen/luatest/resp"
	"github.com/luagen/luagen/runtime"
)

var t0 = time.UnixMilli(1_700_000_000_000)

func eval(t *testing.T, r *luatest.Redis, script string, keys []string, args ...string) (runtime.Value, error) {
	t.Helper()
	s := runtime.NewScript(runtime.ScriptSpec{Name: "test.S", File: "test.lua", Body: script})
	return s.Exec(context.Background(), r, keys, args)
}

func TestExecutorScriptCache(t *testing.T) {
	r := luatest.Start(t)
	s := runtime.NewScript(runtime.ScriptSpec{Name: "t.S", File: "s.lua", Body: "return ARGV[1]"})
	_, err := r.EvalSha(context.Background(), s, nil, []string{"x"})
	var re *runtime.ReplyError
	require.ErrorAs(t, err, &re)
	assert.Equal(t, "NOSCRIPT No matching script. Please use EVAL.", re.Msg)
	assert.True(t, runtime.IsNoScript(err))

	v, err := s.Exec(context.Background(), r, nil, []string{"x"})
	require.NoError(t, err)
	assert.Equal(t, runtime.StringValue("x"), v)
	v, err = r.EvalSha(context.Background(), s, nil, []string{"y"})
	require.NoError(t, err, "EVAL cached the script")
	assert.Equal(t, "y", v.Str)

	bad := runtime.NewScript(runtime.ScriptSpec{Name: "t.Bad", File: "bad.lua", Body: "return +"})
	err = bad.Load(context.Background(), r)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "Error compiling script (new function): user_script:1:")

	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err = s.Exec(ctx, r, nil, []string{"x"})
	assert.ErrorIs(t, err, context.Canceled)
}

// A script stopped by its caller's context keeps the writes it made and
// its caller gets the context's error, with errors.Is, as from a client
// whose ctx ended before the reply.
func TestCancelledScriptReturnsCtxErr(t *testing.T) {
	r := luatest.Start(t)
	spin := runtime.NewScript(runtime.ScriptSpec{Name: "t.Spin", File: "spin.lua", Body: `#!lua
redis.call('SET', KEYS[1], 'before')
while true do end`})
	// Long enough for the SET to run first on a busy machine (50 ms was
	// not, with two other test binaries and two busy loops beside it).
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	_, err := spin.Exec(ctx, r, []string{"k"}, nil)
	require.ErrorIs(t, err, context.DeadlineExceeded)
	var re *runtime.ReplyError
	assert.False(t, errors.As(err, &re), "not a reply of the script: %v", err)
	v, ok := r.Get("k")
	assert.True(t, ok)
	assert.Equal(t, "before", v, "the writes before the stop stay")
}

func TestReplyValuesAsRueidisDecodesThem(t *testing.T) {
	r := luatest.Start(t)
	v, err := eval(t, r, `redis.setresp(3)
return {1, 'two', {ok='OK'}, false, true, {double=1.5}, {map={b=2, a=1}}, {err='X inner'}}`, nil)
	require.NoError(t, err)
	assert.Equal(t, runtime.ArrayValue(
		runtime.IntValue(1), runtime.StringValue("two"), runtime.StringValue("OK"),
		runtime.Value{Kind: runtime.KindBool}, runtime.Value{Kind: runtime.KindBool, Int: 1},
		runtime.Value{Kind: runtime.KindDouble, Float: 1.5},
		runtime.Value{Kind: runtime.KindMap, Array: []runtime.Value{
			runtime.StringValue("a"), runtime.IntValue(1), runtime.StringValue("b"), runtime.IntValue(2)}},
		runtime.Value{Kind: runtime.KindError, Str: "X inner"},
	), v)

	_, err = eval(t, r, "return redis.error_reply('OUT_OF_STOCK')", nil)
	var re *runtime.ReplyError
	require.ErrorAs(t, err, &re)
	assert.Equal(t, "OUT_OF_STOCK", re.Msg, `"ERR " is stripped as rueidis strips it`)
}

func TestScriptErrorLine(t *testing.T) {
	r := luatest.Start(t)
	r.Set("s", "abc")
	_, err := eval(t, r, "local a = 1\n\nreturn redis.call('INCR', KEYS[1])\n", []string{"s"})
	var se *runtime.ScriptError
	require.ErrorAs(t, err, &se)
	assert.Equal(t, 3, se.Line)
	assert.Equal(t, "test.lua", se.File)
	assert.True(t, strings.HasPrefix(se.Err.Msg, "value is not an integer or out of range script: "), se.Err.Msg)
}

func TestVirtualClock(t *testing.T) {
	r := luatest.Start(t, luatest.WithTime(t0))
	assert.Equal(t, t0, r.Now())
	r.MustDo("SET", "k", "v", "PX", "1500")
	r.MustDo("SET", "p", "v")
	assert.Equal(t, int64(2), r.MustDo("TTL", "k").Int, "TTL rounds 1.5 s to 2")
	r.Advance(time.Second)
	assert.Equal(t, int64(500), r.MustDo("PTTL", "k").Int)
	r.Advance(-time.Hour)
	assert.Equal(t, t0.Add(time.Second), r.Now(), "the clock never goes back")
	r.Advance(501 * time.Millisecond)
	assert.False(t, r.Exists("k"))
	assert.Equal(t, int64(-2), r.MustDo("PTTL", "k").Int)
	assert.Equal(t, []string{"p"}, r.Keys())

	v := r.MustDo("TIME")
	assert.Equal(t, "1700000001", v.Array[0].Str, "TIME follows the virtual clock")
	assert.Equal(t, "501000", v.Array[1].Str)

	r.MustDo("EXPIREAT", "p", "1700000100")
	ttl, ok := r.PTTL("p")
	require.True(t, ok)
	assert.Equal(t, 98499*time.Millisecond, ttl)
}

func TestCallLog(t *testing.T) {
	r := luatest.Start(t)
	r.Set("n", "1")
	_, err := eval(t, r, "redis.call('INCR', KEYS[1])\nlocal e = redis.pcall('HGET', KEYS[1], 'f')\nreturn redis.call('GET', KEYS[1])\n", []string{"n"})
	require.NoError(t, err)
	calls := r.Calls()
	require.Len(t, calls, 3)
	assert.Equal(t, []string{"INCR n", "HGET n f", "GET n"}, r.CommandLines())
	assert.Equal(t, resp.IntReply(2), calls[0].Reply)
	assert.Equal(t, 1, calls[0].Line)
	assert.False(t, calls[0].Protected)
	assert.True(t, calls[1].Protected)
	assert.Equal(t, resp.ErrorReply("WRONGTYPE Operation against a key holding the wrong kind of value"), calls[1].Reply)
	_, err = calls[1].Value()
	assert.Error(t, err)
	assert.Equal(t, `test.lua:3: GET n → "2"`, calls[2].String())
	r.ResetCalls()
	assert.Empty(t, r.Calls())
}

func TestEventsAndLogs(t *testing.T) {
	r := luatest.Start(t)
	_, err := eval(t, r, `redis.call('PUBLISH', 'news', 'hello')
redis.call('SPUBLISH', KEYS[1], 'shard')
redis.log(redis.LOG_WARNING, 'stock', 5, 'left')
return 1`, []string{"chan{x}"})
	require.NoError(t, err)
	assert.Equal(t, []luatest.Event{
		{Command: "PUBLISH", Channel: "news", Message: "hello"},
		{Command: "SPUBLISH", Channel: "chan{x}", Message: "shard"},
	}, r.Events())
	assert.Equal(t, []luatest.LogEntry{{Level: luatest.LogWarning, Message: "stock 5 left"}}, r.Logs())
}

func TestKeysCheck(t *testing.T) {
	r := luatest.Start(t)
	_, err := eval(t, r, "redis.call('GET', KEYS[1])\nreturn redis.call('GET', 'other')\n", []string{"mine"})
	var se *runtime.ScriptError
	require.ErrorAs(t, err, &se)
	assert.Equal(t, 2, se.Line)
	assert.Contains(t, se.Err.Msg, "script accessed key 'other' not declared in KEYS (test.lua:2)")

	v, err := eval(t, r, "return redis.pcall('SET', 'other', 1).err", []string{"mine"})
	require.NoError(t, err, "redis.pcall returns the refusal")
	assert.Contains(t, v.Str, "not declared in KEYS")

	// PUBLISH's channel is not a key; KEYS-less scripts may still publish.
	_, err = eval(t, r, "return redis.call('PUBLISH', 'c', 'm')", nil)
	require.NoError(t, err)

	same := luatest.Start(t, luatest.WithKeysCheck(luatest.KeysSameSlot))
	_, err = eval(t, same, "return redis.call('SET', KEYS[1] .. ':log', 1)", []string{"{u1}:stock"})
	require.NoError(t, err, "same slot through the hash tag")
	_, err = eval(t, same, "return redis.call('SET', 'elsewhere', 1)", []string{"{u1}:stock"})
	require.ErrorAs(t, err, &se)
	assert.Contains(t, se.Err.Msg, "script accessed key 'elsewhere' in slot")

	off := luatest.Start(t, luatest.WithKeysCheck(luatest.KeysUnchecked))
	_, err = eval(t, off, "return redis.call('SET', 'elsewhere', 1)", nil)
	require.NoError(t, err)
}

// TestKeysCheckBuiltKeys: the default check also accepts a key built
// from a KEYS value's text up to and including its hash tag (BullMQ's job
// keys, "bull:{q}:" .. id), and nothing else it did not accept before:
// not a key of the same tag after other text, not one built from a KEYS
// value without a tag or with an empty one.
func TestKeysCheckBuiltKeys(t *testing.T) {
	r := luatest.Start(t)
	set := "return redis.call('SET', ARGV[1], 1)"
	// KEYS of several slots, as a single server takes them: the run-time
	// slot check of Exec is not what is tested here.
	eval := func(t *testing.T, r *luatest.Redis, script string, keys []string, args ...string) (runtime.Value, error) {
		t.Helper()
		s := runtime.NewScript(runtime.ScriptSpec{Name: "test.S", File: "test.lua", Body: script, AllowCrossSlot: true})
		return s.Exec(context.Background(), r, keys, args)
	}
	for _, c := range []struct {
		keys []string
		key  string
	}{
		{[]string{"bull:{q}:wait"}, "bull:{q}:1"},
		{[]string{"bull:{q}:wait"}, "bull:{q}:1:logs"},
		{[]string{"bull:{q}:wait"}, "bull:{q}"},
		{[]string{"bull:{q}:wait"}, "bull:{q}{x}"},
		{[]string{"{bull}:q:wait"}, "{bull}:q:7"},
		{[]string{"plain", "bull:{q}:wait"}, "bull:{q}:stalled-check"},
		{[]string{"a{}{b}", "x{b}"}, "x{b}:1"},
	} {
		_, err := eval(t, r, set, c.keys, c.key)
		assert.NoError(t, err, "KEYS %q, key %q", c.keys, c.key)
		v, ok := r.Get(c.key)
		assert.True(t, ok && v == "1", "KEYS %q: %q was not set", c.keys, c.key)
	}
	for _, c := range []struct {
		keys []string
		key  string
	}{
		{[]string{"bull:{q}:wait"}, "bull:q:1"},
		{[]string{"bull:{q}:wait"}, "other:{q}:1"}, // same slot, not built from the declared text
		{[]string{"bull:{q}:wait"}, "bull:{q"},
		{[]string{"bull:{q}:wait"}, "bull:{qq}:1"},
		{[]string{"bull:{q}:wait"}, "bull:"},
		{[]string{"bull:q:wait"}, "bull:q:wait:1"},   // no hash tag: only KEYS itself
		{[]string{"bull:{}:wait"}, "bull:{}:wait:1"}, // an empty tag is no tag
		{[]string{"a{}{b}"}, "a{}{b}:1"},             // the first {...} is the tag, and it is empty
		{nil, "bull:{q}:1"},
	} {
		r := luatest.Start(t)
		_, err := eval(t, r, set, c.keys, c.key)
		var se *runtime.ScriptError
		if assert.ErrorAs(t, err, &se, "KEYS %q, key %q", c.keys, c.key) {
			want := "luatest: script accessed key '" + c.key + "' not declared in KEYS (test.lua:1); " +
				"Redis Cluster refuses it when it hashes to another slot: " +
				"Script attempted to access a non local key in a cluster node script: "
			assert.True(t, strings.HasPrefix(se.Err.Msg, want), "%q", se.Err.Msg)
		}
		assert.False(t, r.Exists(c.key), "KEYS %q: %q was set", c.keys, c.key)
	}

	// More KEYS than the short scan takes: the set, then the same prefixes.
	var many []string
	for i := range 20 {
		many = append(many, "k"+strconv.Itoa(i))
	}
	many = append(many, "bull:{q}:wait")
	_, err := eval(t, r, set, many, "k7")
	require.NoError(t, err)
	_, err = eval(t, r, set, many, "bull:{q}:2")
	require.NoError(t, err)
	_, err = eval(t, r, set, many, "k7:1")
	require.Error(t, err)
}

func TestFaults(t *testing.T) {
	r := luatest.Start(t)
	r.FailCall(1, "boom")
	v, err := eval(t, r, "local e = redis.pcall('PING') return {e.err, redis.call('PING').ok}", nil)
	require.NoError(t, err)
	assert.Equal(t, runtime.ArrayValue(runtime.StringValue("ERR boom"), runtime.StringValue("PONG")), v,
		"the fault fires once, on the first call; a bare message gets ERR")

	r.FailCommand("incr", "OOM no memory")
	_, err = eval(t, r, "return redis.call('INCR', 'n')", []string{"n"})
	var re *runtime.ReplyError
	require.ErrorAs(t, err, &re)
	assert.True(t, strings.HasPrefix(re.Msg, "OOM no memory script: "), re.Msg)
	r.ClearFaults()
	_, err = eval(t, r, "return redis.call('INCR', 'n')", []string{"n"})
	require.NoError(t, err)

	r.LoseReply()
	_, err = eval(t, r, "return redis.call('INCR', 'n')", []string{"n"})
	require.True(t, errors.Is(err, luatest.ErrReplyLost))
	n, _ := r.Get("n")
	assert.Equal(t, "2", n)
}

// TestReplyLostRetry pins what ErrReplyLost's doc promises: a transient
// failure that Exec returns for a plain script and retries for an
// idempotent one, whose script then runs twice.
func TestReplyLostRetry(t *testing.T) {
	r := luatest.Start(t, luatest.WithTime(t0))
	require.True(t, runtime.IsTransient(luatest.ErrReplyLost))
	body := "return redis.call('INCR', KEYS[1])"
	plain := runtime.NewScript(runtime.ScriptSpec{Name: "Plain", Body: body})
	idem := runtime.NewScript(runtime.ScriptSpec{Name: "Idem", Body: body, Idempotent: true})

	r.LoseReply()
	_, err := plain.Exec(context.Background(), r, []string{"n"}, nil)
	require.ErrorIs(t, err, luatest.ErrReplyLost)
	n, _ := r.Get("n")
	assert.Equal(t, "1", n, "the plain script ran once and was not sent again")

	r.LoseReply()
	v, err := idem.Exec(context.Background(), r, []string{"n"}, nil)
	require.NoError(t, err)
	assert.Equal(t, runtime.IntValue(3), v, "the retry ran the script a second time and got its reply")
}

func TestDoAndInspection(t *testing.T) {
	r := luatest.Start(t, luatest.WithTime(t0))
	_, err := r.Do("NOSUCH", "a")
	var re *runtime.ReplyError
	require.ErrorAs(t, err, &re)
	assert.Equal(t, "unknown command 'NOSUCH', with args beginning with: 'a' ", re.Msg)
	_, err = r.Do("GET")
	require.ErrorAs(t, err, &re)
	assert.Equal(t, "wrong number of arguments for 'get' command", re.Msg)

	r.MustDo("HSET", "h", "b", "2", "a", "1")
	r.MustDo("RPUSH", "l", "x", "y")
	r.MustDo("SADD", "s", "m")
	r.MustDo("ZADD", "z", "1.5", "m")
	r.SetTTL("k", "v", time.Minute)
	assert.Equal(t, map[string]string{"a": "1", "b": "2"}, r.HGetAll("h"))
	assert.Equal(t, []string{"x", "y"}, r.List("l"))
	assert.Equal(t, []string{"m"}, r.Members("s"))
	assert.Equal(t, map[string]float64{"m": 1.5}, r.ZScores("z"))
	assert.Equal(t, "hash", r.Type("h"))
	assert.Equal(t, "none", r.Type("nope"))
	assert.Equal(t, `h hash {"b": "2", "a": "1"}
k string "v" ttl=1m0s
l list ["x" "y"]
s set ["m"]
z zset ["m":1.5]
`, r.Dump())
	assert.Equal(t, resp.Reply{Kind: resp.Map, Elems: []resp.Reply{
		resp.BulkReply("b"), resp.BulkReply("2"), resp.BulkReply("a"), resp.BulkReply("1")}},
		r.Command(3, "HGETALL", "h"), "Command keeps the server's field order and RESP3 types")

	// Scores as redis-server 7.0.15's ZSCORE prints them ("%.17g").
	zs := luatest.Start(t)
	zs.MustDo("ZADD", "t", "1700000000000", "ms", "1700000000000.5", "half", "0.1", "tenth",
		"1e20", "big", "123456789.123", "frac", "-3", "neg", "inf", "top")
	assert.Equal(t, `t zset ["neg":-3 "tenth":0.10000000000000001 "frac":123456789.123 "ms":1700000000000 "half":1700000000000.5 "big":1e+20 "top":inf]`+"\n", zs.Dump())
	assert.Equal(t, resp.ErrorReply("NOPROTO unsupported protocol version 4"), r.Command(4, "PING"))
}

func TestUnsupportedCommandsFailLoudly(t *testing.T) {
	r := luatest.Start(t)
	for cmd, want := range map[string]string{
		"'NOSUCH', KEYS[1]":   "Unknown Redis command called from script",
		"'OBJECT', 'NOSUCH'":  "Unknown Redis command called from script",
		"'MULTI'":             "This Redis command is not allowed from script",
		"'BLPOP', KEYS[1], 0": "This Redis command is not allowed from script",
		"'CLIENT', 'KILL'":    "Wrong number of args calling Redis command from script",
	} {
		_, err := eval(t, r, "return redis.call("+cmd+")", []string{"s"})
		var se *runtime.ScriptError
		require.ErrorAs(t, err, &se, cmd)
		assert.True(t, strings.HasPrefix(se.Err.Msg, want), "%s: %s", cmd, se.Err.Msg)
	}
}

func TestScriptTimeout(t *testing.T) {
	// Long enough that "return 7" below cannot hit it on a busy machine
	// (the deadline is wall-clock and covers compiling the script too).
	r := luatest.Start(t, luatest.WithScriptTimeout(500*time.Millisecond))
	_, err := eval(t, r, "while true do end", nil)
	var re *runtime.ReplyError
	require.ErrorAs(t, err, &re)
	assert.Contains(t, re.Msg, "ran longer than 500ms")
	v, err := eval(t, r, "return 7", nil)
	require.NoError(t, err, "the interpreter is usable afterwards")
	assert.Equal(t, int64(7), v.Int)
}

// Scripts share one interpreter, as on the server: nothing a script does
// to globals or libraries leaks into the next one.
func TestSandboxDoesNotLeak(t *testing.T) {
	r := luatest.Start(t)
	_, err := eval(t, r, "string.upper = nil", nil)
	require.Error(t, err)
	_, err = eval(t, r, "rawset(string, 'upper', nil)", nil)
	require.Error(t, err)
	_, err = eval(t, r, "getmetatable(_G).__index = nil", nil)
	require.Error(t, err)
	v, err := eval(t, r, "return string.upper('a')", nil)
	require.NoError(t, err)
	assert.Equal(t, "A", v.Str)
	_, err = eval(t, r, "return undefined_global", nil)
	assert.ErrorContains(t, err, "Script attempted to access nonexistent global variable 'undefined_global'")
}

// Redis 7.0 seeds its script PRNG once per process and never reseeds it
// between scripts; a fresh fake starts where a fresh server does.
func TestRandomStartsLikeAFreshServer(t *testing.T) {
	r := luatest.Start(t)
	v, err := eval(t, r, "return math.random(1000)", nil)
	require.NoError(t, err)
	assert.Equal(t, int64(397), v.Int)
	v, err = eval(t, r, "return math.random(1000)", nil)
	require.NoError(t, err)
	assert.Equal(t, int64(841), v.Int, "the sequence continues across scripts")
}

func TestSplitArgs(t *testing.T) {
	for line, want := range map[string][]string{
		`SET k v`:              {"SET", "k", "v"},
		`  SET  "a b"  'c d' `: {"SET", "a b", "c d"},
		`SET k "\x41\n\"q\""`:  {"SET", "k", "A\n\"q\""},
		`SET k 'it\'s'`:        {"SET", "k", "it's"},
		`SET k ""`:             {"SET", "k", ""},
		``:                     nil,
		`SET a"b" c`:           {"SET", "ab", "c"},
	} {
		got, err := luatest.SplitArgs(line)
		require.NoError(t, err, line)
		assert.Equal(t, want, got, line)
	}
	for _, bad := range []string{`SET "k`, `SET 'k`, `SET "a"b`} {
		_, err := luatest.SplitArgs(bad)
		assert.ErrorIs(t, err, luatest.ErrUnbalancedQuotes, bad)
	}
}

func TestCallLogBound(t *testing.T) {
	r := luatest.Start(t, luatest.WithCallLog(3), luatest.WithKeysCheck(luatest.KeysUnchecked))
	for range 5 {
		_, err := eval(t, r, "redis.call('INCR', 'a') return redis.call('INCR', 'b')", nil)
		require.NoError(t, err)
	}
	assert.Equal(t, []string{"INCR b", "INCR a", "INCR b"}, r.CommandLines(), "the most recent 3 calls")
	off := luatest.Start(t, luatest.WithCallLog(0), luatest.WithKeysCheck(luatest.KeysUnchecked))
	_, err := eval(t, off, "return redis.call('INCR', 'a')", nil)
	require.NoError(t, err)
	assert.Empty(t, off.Calls())
}

// TestCallLogLines: the call log names the line of each redis.call and
// redis.pcall in every form a script writes one — the rewritten direct
// calls (which are told their line) and calls through another name (which
// read it from the call stack) alike: on one line or spread over several,
// as a tail call, two on one line, inside a function, inside pcall.
func TestCallLogLines(t *testing.T) {
	const script = `local call, pcall_ = redis.call, redis.pcall
redis.call('SET', KEYS[1], '1')
call('SET', KEYS[1], '1')
redis.call(
  'GET',
  KEYS[1])
call(
  'GET',
  KEYS[1])
local a = redis.call('GET', KEYS[1]) or redis.pcall('GET', KEYS[1])
local b = call('GET', KEYS[1]) or pcall_('GET', KEYS[1])
local function f(k)
  redis.pcall('INCR', k)
  return call('INCR', k)
end
f(KEYS[1])
pcall(function() redis.call('GET', KEYS[1]) end)
pcall(function() call('GET', KEYS[1]) end)
local t = {redis.call('GET', KEYS[1]), call('GET', KEYS[1])}
if #t == 2 then
  return redis.call('GET', KEYS[1])
end
`
	r := luatest.Start(t)
	_, err := r.Do("EVAL", script, "1", "k")
	require.NoError(t, err)
	var lines []int
	for _, c := range r.Calls() {
		lines = append(lines, c.Line)
	}
	assert.Equal(t, []int{2, 3, 4, 7, 10, 11, 13, 14, 17, 18, 19, 19, 21}, lines)
}

// WithWallClock: the clock is the wall clock's time (plus what Advance
// added), so a key expires by itself.
func TestWallClock(t *testing.T) {
	before := time.Now().Truncate(time.Millisecond)
	r := luatest.Start(t, luatest.WithWallClock())
	assert.False(t, r.Now().Before(before))
	r.Advance(time.Hour)
	assert.False(t, r.Now().Before(before.Add(time.Hour)), "Advance stays added")
	r.MustDo("SET", "k", "v", "PX", "1")
	require.Eventually(t, func() bool { return !r.Exists("k") }, 5*time.Second, time.Millisecond)
}

// INFO commandstats counts clients' and scripts' commands by name, with
// the failed ones; CONFIG RESETSTAT empties it.
func TestCommandStats(t *testing.T) {
	r := luatest.Start(t)
	r.MustDo("SET", "k", "v")
	r.MustDo("EVAL", "redis.call('GET', KEYS[1]); redis.pcall('INCR', KEYS[1]); return 1", "1", "k")
	assert.Contains(t, r.MustDo("INFO", "commandstats").Str, "cmdstat_incr:calls=1,", "a script's commands count")
	r.MustDo("CONFIG", "RESETSTAT")
	r.MustDo("GET", "k")
	_, err := r.Do("INCR", "k")
	require.Error(t, err)
	info := r.MustDo("INFO", "commandstats").Str
	assert.Equal(t, "# Commandstats\r\n"+
		"cmdstat_config|resetstat:calls=1,usec=0,usec_per_call=0.00,rejected_calls=0,failed_calls=0\r\n"+
		"cmdstat_get:calls=1,usec=0,usec_per_call=0.00,rejected_calls=0,failed_calls=0\r\n"+
		"cmdstat_incr:calls=1,usec=0,usec_per_call=0.00,rejected_calls=0,failed_calls=1\r\n",
		regexp.MustCompile(`usec=\d+,usec_per_call=[\d.]+`).ReplaceAllString(info, "usec=0,usec_per_call=0.00"))
	assert.NotContains(t, r.MustDo("INFO").Str, "Commandstats", "not a default section")
}
