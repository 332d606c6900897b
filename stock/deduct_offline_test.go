package stock_test

// Offline tests of the generated stock wrappers: the real lua/stock/*.lua
// run in luatest's gopher-lua sandbox, so every outcome, the exact commands
// sent, a lost reply, an injected error and the KEYS declaration are checked
// in microseconds without a server. deduct_test.go, cancel_test.go and
// reconcile_test.go keep the same contract tested against a real
// redis-server.

import (
	"context"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/luagen/luagen/luatest"
	"github.com/luagen/luagen/runtime"
	"github.com/luagen/luagen/stock"
)

func offline(t *testing.T) (*luatest.Redis, *stock.Scripts) {
	t.Helper()
	r := luatest.Start(t, luatest.WithTime(at))
	return r, stock.New(r)
}

func hget(r *luatest.Redis, key, field string) string { return r.HGetAll(key)[field] }

func TestDeductOfflineOutcomes(t *testing.T) {
	r, s := offline(t)
	ctx := context.Background()
	k := keysFor("42")

	_, err := s.Deduct(ctx, k.Deduct(), order("o1", "u7", 2))
	require.ErrorIs(t, err, stock.ErrNoSuchSKU)
	assert.Equal(t, []string{
		"HGET seckill:{42}:orders o1",
		"GET seckill:{42}:stock",
	}, r.CommandLines(), "a missing SKU is only read")
	assert.Empty(t, r.Keys())

	r.Set(k.Stock, "5")
	r.ResetCalls()
	left, err := s.Deduct(ctx, k.Deduct(), order("o1", "u7", 2))
	require.NoError(t, err)
	assert.Equal(t, int64(3), left)
	assert.Equal(t, []string{
		"HGET seckill:{42}:orders o1",
		"GET seckill:{42}:stock",
		"HGET seckill:{42}:buyers u7",
		"DECRBY seckill:{42}:stock 2",
		"HINCRBY seckill:{42}:buyers u7 2",
		"HSET seckill:{42}:orders o1 sold 2 1700000000123 3 u7",
	}, r.CommandLines())
	_, ok := r.PTTL(k.Orders)
	assert.False(t, ok, "order records never expire")

	r.ResetCalls()
	left, err = s.Deduct(ctx, k.Deduct(), order("o1", "u7", 2))
	require.NoError(t, err)
	assert.Equal(t, int64(3), left, "the first outcome again")
	assert.Equal(t, []string{"HGET seckill:{42}:orders o1"}, r.CommandLines(), "a repeated order only reads its record")

	r.ResetCalls()
	_, err = s.Deduct(ctx, k.Deduct(), order("o2", "u8", 4))
	require.ErrorIs(t, err, stock.ErrOutOfStock)
	assert.Equal(t, []string{
		"HGET seckill:{42}:orders o2",
		"GET seckill:{42}:stock",
		"HGET seckill:{42}:buyers u8",
		"HSET seckill:{42}:orders o2 refused 4 1700000000123 -1 u8",
	}, r.CommandLines(), "a refusal touches only the orders hash")
	v, _ := r.Get(k.Stock)
	assert.Equal(t, "3", v)

	r.ResetCalls()
	a := order("o3", "u7", 2)
	a.Limit = 3
	_, err = s.Deduct(ctx, k.Deduct(), a)
	require.ErrorIs(t, err, stock.ErrLimitExceeded)
	assert.Equal(t, []string{
		"HGET seckill:{42}:orders o3",
		"GET seckill:{42}:stock",
		"HGET seckill:{42}:buyers u7",
		"HSET seckill:{42}:orders o3 refused 2 1700000000123 -3 u7",
	}, r.CommandLines())

	left, err = s.Deduct(ctx, k.Deduct(), order("o4", "u8", 3))
	require.NoError(t, err)
	assert.Equal(t, int64(0), left, "the last units can be sold")
	assert.Equal(t, map[string]string{"u7": "2", "u8": "3"}, r.HGetAll(k.Buyers))
}

func TestDeductOfflineRejectsBadArguments(t *testing.T) {
	r, s := offline(t)
	k := keysFor("7")
	r.Set(k.Stock, "100")
	for name, args := range map[string]stock.DeductArgs{
		"empty order":    {Order: "", Buyer: "u1", Qty: 1, At: at},
		"qty 0":          {Order: "o1", Buyer: "u1", Qty: 0, At: at},
		"qty negative":   {Order: "o1", Buyer: "u1", Qty: -3, At: at},
		"limit negative": {Order: "o1", Buyer: "u1", Qty: 1, Limit: -1, At: at},
		"time zero":      {Order: "o1", Buyer: "u1", Qty: 1},
	} {
		t.Run(name, func(t *testing.T) {
			r.ResetCalls()
			_, err := s.Deduct(context.Background(), k.Deduct(), args)
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
	k := keysFor("9")
	r.Set(k.Stock, "10")
	sha := stock.DeductScript().SHA1()
	assert.Equal(t, int64(0), r.MustDo("SCRIPT", "EXISTS", sha).Array[0].Int)

	for i := range 3 {
		r.MustDo("SCRIPT", "FLUSH")
		left, err := s.Deduct(context.Background(), k.Deduct(), order("o"+string(rune('a'+i)), "u1", 1))
		require.NoError(t, err, "no NOSCRIPT reaches the caller")
		assert.Equal(t, int64(9-i), left)
		assert.Equal(t, int64(1), r.MustDo("SCRIPT", "EXISTS", sha).Array[0].Int, "EVAL cached it")
	}
	require.NoError(t, s.Preload(context.Background()))
	for _, sc := range stock.All() {
		assert.Equal(t, int64(1), r.MustDo("SCRIPT", "EXISTS", sc.SHA1()).Array[0].Int, sc.Name())
	}
}

// A reply lost after the script ran: Deduct is ---@idempotent, so runtime
// sends it again with the same order id, and the retry answers the first
// outcome from the record instead of deducting again.
func TestDeductOfflineLostReplyIsRetriedOnce(t *testing.T) {
	r, s := offline(t)
	k := keysFor("3")
	r.Set(k.Stock, "10")
	r.MustDo("SCRIPT", "LOAD", stock.DeductScript().Body())
	r.LoseReply()
	r.LoseReply()
	r.ResetCalls()
	left, err := s.Deduct(context.Background(), k.Deduct(), order("o1", "u1", 4))
	require.NoError(t, err, "two lost replies, then the answer")
	assert.Equal(t, int64(6), left)
	v, _ := r.Get(k.Stock)
	assert.Equal(t, "6", v, "deducted once")
	assert.Equal(t, []string{
		"HGET seckill:{3}:orders o1",
		"GET seckill:{3}:stock",
		"HGET seckill:{3}:buyers u1",
		"DECRBY seckill:{3}:stock 4",
		"HINCRBY seckill:{3}:buyers u1 4",
		"HSET seckill:{3}:orders o1 sold 4 1700000000123 6 u1",
		"HGET seckill:{3}:orders o1", // the retries find the record
		"HGET seckill:{3}:orders o1",
	}, r.CommandLines())

	// The same loss for a script that is not idempotent reaches the caller.
	plain := runtime.NewScript(runtime.ScriptSpec{Name: "t.Decr", File: "decr.lua", Body: "return redis.call('DECRBY', KEYS[1], 1)"})
	r.LoseReply()
	_, err = plain.Exec(context.Background(), r, []string{k.Stock}, nil)
	require.ErrorIs(t, err, luatest.ErrReplyLost)
	v, _ = r.Get(k.Stock)
	assert.Equal(t, "5", v, "it ran once and was not resent")
}

// An error on the first write (OOM: Redis 7 checks it only before a
// script's first write) stops the script before it changed anything.
// Every value the later writes depend on is checked before the first one,
// so in Redis nothing can stop Deduct halfway; injected here anyway, the
// abort leaves the decrement without its record (a script is not a
// transaction) and Reconcile reports exactly that.
func TestDeductOfflineInjectedCommandError(t *testing.T) {
	r, s := offline(t)
	k := keysFor("5")
	r.Set(k.Stock, "10")
	r.FailCall(4, "OOM command not allowed when used memory > 'maxmemory'.")
	_, err := s.Deduct(context.Background(), k.Deduct(), order("o1", "u1", 1))
	var se *runtime.ScriptError
	require.ErrorAs(t, err, &se)
	assert.Equal(t, "lua/stock/deduct.lua", se.File)
	assert.Equal(t, lineOf(t, "../lua/stock/deduct.lua", "redis.call('DECRBY'"), se.Line)
	assert.True(t, strings.HasPrefix(se.Err.Msg, "OOM command not allowed"), se.Err.Msg)
	v, _ := r.Get(k.Stock)
	assert.Equal(t, "10", v)
	assert.False(t, r.Exists(k.Orders))

	r.FailCommand("HINCRBY", "ERR injected: cannot happen once the values were checked")
	_, err = s.Deduct(context.Background(), k.Deduct(), order("o1", "u1", 1))
	require.ErrorAs(t, err, &se)
	assert.Equal(t, lineOf(t, "../lua/stock/deduct.lua", "redis.call('HINCRBY'"), se.Line)
	r.ClearFaults()
	rec, err := s.Reconcile(context.Background(), k.Audit(), 10)
	require.NoError(t, err)
	require.Len(t, rec.Differences, 1, "%v", rec.Differences)
	assert.Equal(t, stock.Difference{Check: "stock", Want: 10, Got: 9,
		Detail: "9 units left of 10, but sold orders record only 0 units: 1 units left stock without a purchase record"}, rec.Differences[0])
}

// A malformed stock value or buyer count is refused before any write.
func TestDeductOfflineChecksValuesBeforeWriting(t *testing.T) {
	r, s := offline(t)
	k := keysFor("6")
	r.Set(k.Stock, "10")
	r.MustDo("HSET", k.Buyers, "u1", "lots")
	r.ResetCalls()
	_, err := s.Deduct(context.Background(), k.Deduct(), order("o1", "u1", 1))
	require.ErrorIs(t, err, stock.ErrCorruptRecord)
	for _, c := range r.Calls() {
		assert.Contains(t, []string{"GET", "HGET"}, c.Command, "nothing written")
	}
	r.Set(k.Stock, "1.5")
	_, err = s.Deduct(context.Background(), k.Deduct(), order("o2", "u2", 1))
	require.ErrorIs(t, err, stock.ErrCorruptRecord)
	assert.False(t, r.Exists(k.Orders))
}

// Every stock script touches only its KEYS, so each passes luatest's KEYS
// check (on by default). A copy of deduct.lua that builds a key inside the
// script, other than by appending to a declared key's hash tag, would work
// on one server and fail on a cluster (or share the slot only by the tag's
// value); the check names the key and the line.
func TestOfflineKeysCheck(t *testing.T) {
	r, s := offline(t)
	ctx := context.Background()
	k := keysFor("8")
	r.Set(k.Stock, "10")
	_, err := s.Deduct(ctx, k.Deduct(), order("o1", "u1", 1))
	require.NoError(t, err)
	_, err = s.Cancel(ctx, k.Cancel(), stock.CancelArgs{Order: "o1", At: at})
	require.NoError(t, err)
	_, err = s.Reconcile(ctx, k.Audit(), 10)
	require.NoError(t, err)

	body := strings.Replace(stock.DeductScript().Source(), "redis.call('HINCRBY', KEYS[3],", "redis.call('HINCRBY', 'audit:' .. KEYS[3],", 1)
	require.NotEqual(t, stock.DeductScript().Source(), body)
	undeclared := runtime.NewScript(runtime.ScriptSpec{Name: "stock.DeductUndeclared", File: "lua/stock/deduct.lua", Body: body})
	_, err = undeclared.Exec(ctx, r, []string{k.Stock, k.Orders, k.Buyers}, []string{"o2", "u1", "1", "0", "1"})
	var se *runtime.ScriptError
	require.ErrorAs(t, err, &se)
	assert.Equal(t, lineOf(t, "../lua/stock/deduct.lua", "redis.call('HINCRBY', KEYS[3]"), se.Line)
	assert.Contains(t, se.Err.Msg, "script accessed key 'audit:seckill:{8}:buyers' not declared in KEYS (lua/stock/deduct.lua:")
}

func TestDeductOfflineCrossSlotSendsNothing(t *testing.T) {
	r, s := offline(t)
	_, err := s.Deduct(context.Background(),
		stock.DeductKeys{Stock: "seckill:{42}:stock", Orders: "seckill:{43}:orders", Buyers: "seckill:{42}:buyers"},
		order("o1", "u7", 1))
	require.ErrorIs(t, err, runtime.ErrCrossSlot)
	assert.Empty(t, r.Calls())
	assert.Equal(t, int64(0), r.MustDo("SCRIPT", "EXISTS", stock.DeductScript().SHA1()).Array[0].Int, "no EVAL reached the fake")
}

func TestCancelOffline(t *testing.T) {
	r, s := offline(t)
	ctx := context.Background()
	k := keysFor("c")
	r.Set(k.Stock, "10")
	_, err := s.Deduct(ctx, k.Deduct(), order("o1", "u1", 3))
	require.NoError(t, err)

	r.ResetCalls()
	r.LoseReply() // the first answer is lost; runtime asks again
	n, err := s.Cancel(ctx, k.Cancel(), stock.CancelArgs{Order: "o1", At: at})
	require.NoError(t, err)
	assert.Equal(t, int64(3), n)
	assert.Equal(t, []string{
		"GET seckill:{c}:stock",
		"HGET seckill:{c}:orders o1",
		"HGET seckill:{c}:buyers u1",
		"INCRBY seckill:{c}:stock 3",
		"HINCRBY seckill:{c}:buyers u1 -3",
		"HDEL seckill:{c}:buyers u1",
		"HSET seckill:{c}:orders o1 cancelled 3 1700000000123 7 u1",
		"GET seckill:{c}:stock", // the retry reads the cancelled record
		"HGET seckill:{c}:orders o1",
	}, r.CommandLines())
	v, _ := r.Get(k.Stock)
	assert.Equal(t, "10", v, "returned once")

	n, err = s.Cancel(ctx, k.Cancel(), stock.CancelArgs{Order: "o9", At: at})
	require.NoError(t, err)
	assert.Zero(t, n)
	assert.Equal(t, "void 0 1700000000123 0 ", hget(r, k.Orders, "o9"))
	_, err = s.Deduct(ctx, k.Deduct(), order("o9", "u2", 1))
	require.ErrorIs(t, err, stock.ErrCancelled)

	rec, err := s.Reconcile(ctx, k.Audit(), 10)
	require.NoError(t, err)
	assert.Empty(t, rec.Differences)
	assert.Equal(t, stock.AuditReply{Left: 10, CancelledOrders: 1, CancelledUnits: 3, VoidOrders: 1,
		MalformedIDs: []string{}, BuyerDiffList: []string{}}, rec.AuditReply)
}

// Audit is flags=no-writes: offline as on a server, it may not write, and
// it reports a corrupt record instead of failing.
func TestAuditOfflineReadsOnly(t *testing.T) {
	r, s := offline(t)
	ctx := context.Background()
	k := keysFor("a")
	r.Set(k.Stock, "4")
	r.MustDo("HSET", k.Orders, "o1", "sold 1 1 3 u1", "bad", "???")
	r.MustDo("HSET", k.Buyers, "u1", "1")
	r.ResetCalls()
	a, err := s.Audit(ctx, k.Audit(), stock.AuditArgs{Max: 10})
	require.NoError(t, err)
	assert.Equal(t, stock.AuditReply{Left: 4, SoldOrders: 1, SoldUnits: 1, BuyerUnits: 1, Malformed: 1,
		MalformedIDs: []string{"bad"}, BuyerDiffList: []string{}}, a)
	for _, c := range r.Calls() {
		assert.Contains(t, []string{"GET", "HGETALL"}, c.Command)
	}
}
