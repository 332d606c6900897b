package stock_test

// Offline tests of the generated Deduct wrapper: the real lua/stock/deduct.lua
// runs in luatest's gopher-lua sandbox, so every outcome, the record's TTL,
// the exact commands sent, a lost reply and the KEYS declaration are checked
// in microseconds without a server. deduct_test.go keeps the same contract
// tested against a real redis-server.

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/luagen/luagen/internal/luatest"
	"github.com/luagen/luagen/runtime"
	"github.com/luagen/luagen/stock"
)

func offline(t *testing.T) (*luatest.Redis, *stock.Scripts) {
	t.Helper()
	r := luatest.New(t, luatest.WithTime(at))
	return r, stock.New(r)
}

func TestDeductOfflineOutcomes(t *testing.T) {
	r, s := offline(t)
	ctx := context.Background()
	k := keysFor("42", "u7")
	args := stock.DeductArgs{Qty: 2, Buyer: "u7", At: at, TTL: time.Hour}

	_, err := s.Deduct(ctx, k, args)
	require.ErrorIs(t, err, stock.ErrNoSuchSKU)
	assert.Equal(t, []string{"GET seckill:{42}:stock"}, r.CommandLines(), "a missing SKU is only read")
	assert.Empty(t, r.Keys())

	r.Set(k.Stock, "5")
	r.ResetCalls()
	left, err := s.Deduct(ctx, k, args)
	require.NoError(t, err)
	assert.Equal(t, int64(3), left)
	assert.Equal(t, []string{
		"GET seckill:{42}:stock",
		"DECRBY seckill:{42}:stock 2",
		"SET seckill:{42}:log:u7 u7 2 1700000000123 EX 3600",
	}, r.CommandLines())
	rec, ok := r.Get(k.Log)
	require.True(t, ok)
	assert.Equal(t, "u7 2 1700000000123", rec)
	ttl, ok := r.PTTL(k.Log)
	require.True(t, ok)
	assert.Equal(t, time.Hour, ttl)
	_, ok = r.PTTL(k.Stock)
	assert.False(t, ok, "the stock counter never expires")

	left, err = s.Deduct(ctx, k, args)
	require.NoError(t, err)
	assert.Equal(t, int64(1), left)

	r.ResetCalls()
	_, err = s.Deduct(ctx, k, args)
	require.ErrorIs(t, err, stock.ErrOutOfStock)
	var ce *runtime.CodeError
	require.ErrorAs(t, err, &ce)
	assert.Equal(t, "-1", ce.Reply)
	assert.Equal(t, []string{"GET seckill:{42}:stock"}, r.CommandLines(), "a refused deduction writes nothing")
	v, _ := r.Get(k.Stock)
	assert.Equal(t, "1", v)

	args.Qty = 1
	left, err = s.Deduct(ctx, k, args)
	require.NoError(t, err)
	assert.Equal(t, int64(0), left, "the last unit can be sold")
	_, err = s.Deduct(ctx, k, args)
	require.ErrorIs(t, err, stock.ErrOutOfStock)
}

func TestDeductOfflineRecordExpires(t *testing.T) {
	r, s := offline(t)
	k := keysFor("1", "u1")
	r.Set(k.Stock, "10")
	_, err := s.Deduct(context.Background(), k, stock.DeductArgs{Qty: 1, Buyer: "u1", At: at, TTL: 90 * time.Second})
	require.NoError(t, err)

	r.Advance(90 * time.Second)
	assert.True(t, r.Exists(k.Log), "Redis keeps a key until its expire time has passed")
	ttl, _ := r.PTTL(k.Log)
	assert.Equal(t, time.Duration(0), ttl)
	r.Advance(time.Millisecond)
	assert.False(t, r.Exists(k.Log), "gone 1 ms after its TTL")
	assert.Equal(t, "seckill:{1}:stock string \"9\"\n", r.Dump())
}

func TestDeductOfflineRejectsBadArguments(t *testing.T) {
	r, s := offline(t)
	k := keysFor("7", "u1")
	r.Set(k.Stock, "100")
	for name, args := range map[string]stock.DeductArgs{
		"qty 0":        {Qty: 0, Buyer: "u1", At: at, TTL: time.Hour},
		"qty negative": {Qty: -3, Buyer: "u1", At: at, TTL: time.Hour},
		"ttl below 1s": {Qty: 1, Buyer: "u1", At: at, TTL: 999 * time.Millisecond},
		"time zero":    {Qty: 1, Buyer: "u1", At: time.Time{}, TTL: time.Hour},
	} {
		t.Run(name, func(t *testing.T) {
			r.ResetCalls()
			_, err := s.Deduct(context.Background(), k, args)
			require.ErrorIs(t, err, stock.ErrBadArgument)
			var re *runtime.ReplyError
			require.ErrorAs(t, err, &re)
			assert.True(t, strings.HasPrefix(re.Msg, "BAD_ARG "), re.Msg)
			assert.Empty(t, r.Calls(), "validation runs before any command")
		})
	}
	v, _ := r.Get(k.Stock)
	assert.Equal(t, "100", v)
}

// The wrapper sends EVALSHA first; offline as on a server, an empty script
// cache answers NOSCRIPT and the wrapper falls back to EVAL, which caches it.
func TestDeductOfflineNoScriptFallback(t *testing.T) {
	r, s := offline(t)
	k := keysFor("9", "u1")
	r.Set(k.Stock, "10")
	sha := stock.DeductScript.SHA1()
	assert.Equal(t, int64(0), r.MustDo("SCRIPT", "EXISTS", sha).Array[0].Int)

	for i := range 3 {
		r.MustDo("SCRIPT", "FLUSH")
		left, err := s.Deduct(context.Background(), k, stock.DeductArgs{Qty: 1, Buyer: "u1", At: at, TTL: time.Hour})
		require.NoError(t, err, "no NOSCRIPT reaches the caller")
		assert.Equal(t, int64(9-i), left)
		assert.Equal(t, int64(1), r.MustDo("SCRIPT", "EXISTS", sha).Array[0].Int, "EVAL cached it")
	}
	require.NoError(t, s.Preload(context.Background()))
	_, err := r.EvalSha(context.Background(), stock.DeductScript, []string{k.Stock, k.Log}, []string{"1", "u1", "1", "60"})
	require.NoError(t, err, "EVALSHA finds a preloaded script")
}

// A reply lost after the script ran: the caller sees a connection error
// (never a ReplyError, so nothing retries it), and the deduction happened.
// This is why Deduct must not be retried blindly.
func TestDeductOfflineLostReply(t *testing.T) {
	r, s := offline(t)
	k := keysFor("3", "u1")
	r.Set(k.Stock, "10")
	r.MustDo("SCRIPT", "LOAD", stock.DeductScript.Body())
	r.LoseReply()
	_, err := s.Deduct(context.Background(), k, stock.DeductArgs{Qty: 4, Buyer: "u1", At: at, TTL: time.Hour})
	require.ErrorIs(t, err, luatest.ErrReplyLost)
	var re *runtime.ReplyError
	assert.False(t, errors.As(err, &re), "a lost reply is not an error reply")
	v, _ := r.Get(k.Stock)
	assert.Equal(t, "6", v, "the script ran: its effects stay")
	assert.True(t, r.Exists(k.Log))

	left, err := s.Deduct(context.Background(), k, stock.DeductArgs{Qty: 4, Buyer: "u1", At: at, TTL: time.Hour})
	require.NoError(t, err, "the fault fires once")
	assert.Equal(t, int64(2), left, "a blind retry would deduct twice")
}

// An error reply injected on the second command (DECRBY) aborts the script
// at that line; nothing after it runs, so no purchase record is written.
func TestDeductOfflineInjectedCommandError(t *testing.T) {
	r, s := offline(t)
	k := keysFor("5", "u1")
	r.Set(k.Stock, "10")
	r.FailCall(2, "OOM command not allowed when used memory > 'maxmemory'.")
	_, err := s.Deduct(context.Background(), k, stock.DeductArgs{Qty: 1, Buyer: "u1", At: at, TTL: time.Hour})
	var se *runtime.ScriptError
	require.ErrorAs(t, err, &se)
	assert.Equal(t, "lua/stock/deduct.lua", se.File)
	assert.Equal(t, lineOf(t, "../lua/stock/deduct.lua", "redis.call('DECRBY'"), se.Line)
	assert.True(t, strings.HasPrefix(se.Err.Msg, "OOM command not allowed"), se.Err.Msg)
	calls := r.Calls()
	require.Len(t, calls, 2)
	assert.Equal(t, "DECRBY", calls[1].Command)
	assert.Equal(t, se.Line, calls[1].Line)
	v, _ := r.Get(k.Stock)
	assert.Equal(t, "10", v)
	assert.False(t, r.Exists(k.Log))

	r.FailCommand("SET", "READONLY You can't write against a read only replica.")
	_, err = s.Deduct(context.Background(), k, stock.DeductArgs{Qty: 1, Buyer: "u1", At: at, TTL: time.Hour})
	require.ErrorAs(t, err, &se)
	assert.Equal(t, lineOf(t, "../lua/stock/deduct.lua", "redis.call('SET'"), se.Line)
	v, _ = r.Get(k.Stock)
	assert.Equal(t, "9", v, "Redis scripts are not transactions: the DECRBY before the failed SET stays")
	r.ClearFaults()
}

func TestDeductOfflineWrongTypeCarriesLuaLine(t *testing.T) {
	r, s := offline(t)
	k := keysFor("5", "u1")
	r.MustDo("HSET", k.Stock, "f", "v")
	_, err := s.Deduct(context.Background(), k, stock.DeductArgs{Qty: 1, Buyer: "u1", At: at, TTL: time.Hour})
	var se *runtime.ScriptError
	require.ErrorAs(t, err, &se)
	assert.Equal(t, lineOf(t, "../lua/stock/deduct.lua", "redis.call('GET', KEYS[1])"), se.Line)
	assert.True(t, strings.HasPrefix(se.Err.Msg, "WRONGTYPE Operation against a key holding the wrong kind of value script: "+stock.DeductScript.SHA1()), se.Err.Msg)
}

// deduct.lua touches only its KEYS, so it passes luatest's KEYS check
// (on by default). A copy that builds the record key inside the script
// instead would work on one server and fail on a cluster; the check names
// the key and the line.
func TestDeductOfflineKeysCheck(t *testing.T) {
	r, s := offline(t)
	k := keysFor("8", "u1")
	r.Set(k.Stock, "10")
	_, err := s.Deduct(context.Background(), k, stock.DeductArgs{Qty: 1, Buyer: "u1", At: at, TTL: time.Hour})
	require.NoError(t, err)

	body := strings.Replace(stock.DeductScript.Body(), "redis.call('SET', KEYS[2],", "redis.call('SET', KEYS[1] .. ':log',", 1)
	require.NotEqual(t, stock.DeductScript.Body(), body)
	undeclared := runtime.NewScript(runtime.ScriptSpec{Name: "stock.DeductUndeclared", File: "lua/stock/deduct.lua", Body: body})
	_, err = undeclared.Exec(context.Background(), r, []string{k.Stock, k.Log}, []string{"1", "u1", "1", "60"})
	var se *runtime.ScriptError
	require.ErrorAs(t, err, &se)
	line := lineOf(t, "../lua/stock/deduct.lua", "redis.call('SET', KEYS[2]")
	assert.Equal(t, line, se.Line)
	assert.Contains(t, se.Err.Msg, "script accessed key 'seckill:{8}:stock:log' not declared in KEYS (lua/stock/deduct.lua:")
	v, _ := r.Get(k.Stock)
	assert.Equal(t, "8", v, "the DECRBY before the refused SET ran, as on a cluster")
}

func TestDeductOfflineCrossSlotSendsNothing(t *testing.T) {
	r, s := offline(t)
	_, err := s.Deduct(context.Background(),
		stock.DeductKeys{Stock: "seckill:{42}:stock", Log: "seckill:{43}:log:u7"},
		stock.DeductArgs{Qty: 1, Buyer: "u7", At: at, TTL: time.Hour})
	require.ErrorIs(t, err, runtime.ErrCrossSlot)
	assert.Empty(t, r.Calls())
	assert.Equal(t, int64(0), r.MustDo("SCRIPT", "EXISTS", stock.DeductScript.SHA1()).Array[0].Int, "no EVAL reached the fake")
}
