package stock_test

import (
	"context"
	"io"
	"os"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/luagen/luagen/internal/exectest"
	"github.com/luagen/luagen/redistest"
	"github.com/luagen/luagen/runtime"
	"github.com/luagen/luagen/stock"
)

var at = time.UnixMilli(1_700_000_000_123)

// setup starts a server and returns it with an executor of kind ex on it
// and the stock scripts on that executor.
func setup(t *testing.T, ex exectest.Kind, extra ...string) (*redistest.Server, runtime.Executor, *stock.Scripts) {
	t.Helper()
	srv := redistest.Start(t, extra...)
	e := ex.Single(t, srv)
	return srv, e, stock.New(e)
}

func keysFor(sku string) stock.SKUKeys { return stock.KeysFor("seckill:", sku) }

func order(id, buyer string, qty int64) stock.DeductArgs {
	return stock.DeductArgs{Order: id, Buyer: buyer, Qty: qty, At: at}
}

func TestDeductOutcomes(t *testing.T) {
	exectest.Run(t, func(t *testing.T, ex exectest.Kind) {
		srv, _, s := setup(t, ex)
		ctx := context.Background()
		k := keysFor("42")

		_, err := s.Deduct(ctx, k.Deduct(), order("o1", "u7", 2))
		require.ErrorIs(t, err, stock.ErrNoSuchSKU)
		assert.Equal(t, "0", srv.Do(t, "EXISTS", k.Orders), "no record for a missing SKU")

		srv.Do(t, "SET", k.Stock, "5")
		left, err := s.Deduct(ctx, k.Deduct(), order("o1", "u7", 2))
		require.NoError(t, err)
		assert.Equal(t, int64(3), left)
		assert.Equal(t, "sold 2 1700000000123 3 u7", srv.Do(t, "HGET", k.Orders, "o1"))
		assert.Equal(t, "2", srv.Do(t, "HGET", k.Buyers, "u7"))
		assert.Equal(t, "-1", srv.Do(t, "TTL", k.Orders), "purchase records never expire")

		left, err = s.Deduct(ctx, k.Deduct(), order("o2", "u8", 2))
		require.NoError(t, err)
		assert.Equal(t, int64(1), left)

		_, err = s.Deduct(ctx, k.Deduct(), order("o3", "u9", 2))
		require.ErrorIs(t, err, stock.ErrOutOfStock)
		var ce *runtime.CodeError
		require.ErrorAs(t, err, &ce)
		assert.Equal(t, "-1", ce.Reply())
		assert.Equal(t, "1", srv.Do(t, "GET", k.Stock), "a refused deduction leaves stock untouched")
		assert.Equal(t, "refused 2 1700000000123 -1 u9", srv.Do(t, "HGET", k.Orders, "o3"))
		assert.Equal(t, "<nil>", srv.Do(t, "HGET", k.Buyers, "u9"))

		left, err = s.Deduct(ctx, k.Deduct(), order("o4", "u9", 1))
		require.NoError(t, err)
		assert.Equal(t, int64(0), left)
		_, err = s.Deduct(ctx, k.Deduct(), order("o5", "u9", 1))
		require.ErrorIs(t, err, stock.ErrOutOfStock)
		assert.Equal(t, "0", srv.Do(t, "GET", k.Stock))
		assert.Equal(t, "5", srv.Do(t, "HLEN", k.Orders))
	})
}

// A retry with the same order id answers the first outcome and changes
// nothing, whatever happened to stock meanwhile.
func TestDeductIsIdempotentPerOrder(t *testing.T) {
	exectest.Run(t, func(t *testing.T, ex exectest.Kind) {
		srv, _, s := setup(t, ex)
		ctx := context.Background()
		k := keysFor("idem")
		srv.Do(t, "SET", k.Stock, "10")

		for range 3 {
			left, err := s.Deduct(ctx, k.Deduct(), order("o1", "u1", 1))
			require.NoError(t, err)
			assert.Equal(t, int64(9), left, "the first outcome, every time")
		}
		assert.Equal(t, "9", srv.Do(t, "GET", k.Stock), "deducted once")
		assert.Equal(t, "1", srv.Do(t, "HGET", k.Buyers, "u1"))

		srv.Do(t, "SET", k.Stock, "0")
		_, err := s.Deduct(ctx, k.Deduct(), order("o2", "u2", 1))
		require.ErrorIs(t, err, stock.ErrOutOfStock)
		srv.Do(t, "SET", k.Stock, "10") // units came back (a cancellation, a restock)
		_, err = s.Deduct(ctx, k.Deduct(), order("o2", "u2", 1))
		require.ErrorIs(t, err, stock.ErrOutOfStock, "a refused order stays refused: a retry never succeeds silently")
		assert.Equal(t, "10", srv.Do(t, "GET", k.Stock))

		left, err := s.Deduct(ctx, k.Deduct(), order("o1", "u1", 1))
		require.NoError(t, err)
		assert.Equal(t, int64(9), left, "still the first outcome, though stock is 10 now")

		for name, args := range map[string]stock.DeductArgs{
			"other qty":   order("o1", "u1", 2),
			"other buyer": order("o1", "u2", 1),
		} {
			_, err := s.Deduct(ctx, k.Deduct(), args)
			require.ErrorIs(t, err, stock.ErrOrderConflict, name)
			assert.Contains(t, err.Error(), "order o1 is 1 units for buyer u1", name)
		}
		assert.Equal(t, "sold 1 1700000000123 9 u1", srv.Do(t, "HGET", k.Orders, "o1"))
		assert.Equal(t, "10", srv.Do(t, "GET", k.Stock))
	})
}

func TestDeductPerBuyerLimit(t *testing.T) {
	exectest.Run(t, func(t *testing.T, ex exectest.Kind) {
		srv, _, s := setup(t, ex)
		ctx := context.Background()
		k := keysFor("limit")
		srv.Do(t, "SET", k.Stock, "100")
		limited := func(id, buyer string, qty int64) stock.DeductArgs {
			a := order(id, buyer, qty)
			a.Limit = 3
			return a
		}

		_, err := s.Deduct(ctx, k.Deduct(), limited("o1", "u1", 2))
		require.NoError(t, err)
		_, err = s.Deduct(ctx, k.Deduct(), limited("o2", "u1", 2))
		require.ErrorIs(t, err, stock.ErrLimitExceeded, "2 + 2 > 3")
		assert.Equal(t, "refused 2 1700000000123 -3 u1", srv.Do(t, "HGET", k.Orders, "o2"))
		left, err := s.Deduct(ctx, k.Deduct(), limited("o3", "u1", 1))
		require.NoError(t, err, "2 + 1 = 3 is within the limit")
		assert.Equal(t, int64(97), left)
		_, err = s.Deduct(ctx, k.Deduct(), limited("o4", "u1", 1))
		require.ErrorIs(t, err, stock.ErrLimitExceeded)
		_, err = s.Deduct(ctx, k.Deduct(), limited("o5", "u2", 3))
		require.NoError(t, err, "the limit is per buyer")

		_, err = s.Deduct(ctx, k.Deduct(), order("o6", "u1", 50))
		require.NoError(t, err, "limit 0 means no limit")
		assert.Equal(t, "53", srv.Do(t, "HGET", k.Buyers, "u1"))
		assert.Equal(t, "44", srv.Do(t, "GET", k.Stock))
	})
}

func TestDeductRejectsBadArguments(t *testing.T) {
	exectest.Run(t, func(t *testing.T, ex exectest.Kind) {
		srv, _, s := setup(t, ex)
		ctx := context.Background()
		k := keysFor("7")
		srv.Do(t, "SET", k.Stock, "100")
		for name, args := range map[string]stock.DeductArgs{
			"empty order":    {Order: "", Buyer: "u1", Qty: 1, At: at},
			"empty buyer":    {Order: "o1", Buyer: "", Qty: 1, At: at},
			"qty 0":          {Order: "o1", Buyer: "u1", Qty: 0, At: at},
			"qty negative":   {Order: "o1", Buyer: "u1", Qty: -3, At: at},
			"limit negative": {Order: "o1", Buyer: "u1", Qty: 1, Limit: -1, At: at},
			"time zero":      {Order: "o1", Buyer: "u1", Qty: 1, At: time.Time{}},
		} {
			t.Run(name, func(t *testing.T) {
				_, err := s.Deduct(ctx, k.Deduct(), args)
				require.ErrorIs(t, err, stock.ErrBadArgument)
				var re *runtime.ReplyError
				require.ErrorAs(t, err, &re, "the server's text is kept")
				assert.True(t, strings.HasPrefix(re.Msg, "BAD_ARG "), re.Msg)
				assert.Equal(t, "100", srv.Do(t, "GET", k.Stock), "nothing deducted")
				assert.Equal(t, "0", srv.Do(t, "EXISTS", k.Orders), "nothing recorded")
			})
		}
		// A qty beyond 2^53, where a Lua number stops holding every
		// integer, never reaches the script: the method refuses it.
		_, err := s.Deduct(ctx, k.Deduct(), stock.DeductArgs{Order: "o1", Buyer: "u1", Qty: 1 << 60, At: at})
		require.ErrorIs(t, err, runtime.ErrBadArg)
		assert.NotErrorIs(t, err, stock.ErrBadArgument)
		assert.Equal(t, "100", srv.Do(t, "GET", k.Stock), "nothing deducted")
		assert.Equal(t, "0", srv.Do(t, "EXISTS", k.Orders), "nothing recorded")
	})
}

// Raw EVALSHA with the arguments a hand-written caller might send: the
// script itself refuses anything but a positive decimal integer.
func TestDeductScriptRejectsNonNumericArgv(t *testing.T) {
	exectest.Run(t, func(t *testing.T, ex exectest.Kind) {
		srv, e, _ := setup(t, ex)
		k := keysFor("1")
		srv.Do(t, "SET", k.Stock, "10")
		for _, qty := range []string{"1.5", "abc", "", " 1", "0x10", "1e3", "-1", "0", "1234567890123456"} {
			v, err := stock.DeductScript().Exec(context.Background(), e,
				[]string{k.Stock, k.Orders, k.Buyers}, []string{"o", "u", qty, "0", "1"})
			require.ErrorIs(t, err, stock.ErrBadArgument, "qty %q gave %v", qty, v)
		}
		for _, limit := range []string{"-1", "1.5", "", "x"} {
			_, err := stock.DeductScript().Exec(context.Background(), e,
				[]string{k.Stock, k.Orders, k.Buyers}, []string{"o", "u", "1", limit, "1"})
			require.ErrorIs(t, err, stock.ErrBadArgument, "limit %q", limit)
		}
		assert.Equal(t, "10", srv.Do(t, "GET", k.Stock))
	})
}

func TestDeductCrossSlotKeysSendNothing(t *testing.T) {
	exectest.Run(t, func(t *testing.T, ex exectest.Kind) {
		srv, e, _ := setup(t, ex)
		counting := &countingExecutor{Executor: e}
		s := stock.New(counting)
		keys := stock.DeductKeys{Stock: "seckill:{42}:stock", Orders: "seckill:{43}:orders", Buyers: "seckill:{42}:buyers"}
		_, err := s.Deduct(context.Background(), keys, order("o1", "u7", 1))
		require.ErrorIs(t, err, runtime.ErrCrossSlot)
		var cs *runtime.CrossSlotError
		require.ErrorAs(t, err, &cs)
		assert.Equal(t, "stock.Deduct", cs.Script)
		assert.Equal(t, []runtime.KeySlot{
			{Key: "seckill:{42}:stock", Slot: runtime.Slot("42")},
			{Key: "seckill:{43}:orders", Slot: runtime.Slot("43")},
			{Key: "seckill:{42}:buyers", Slot: runtime.Slot("42")},
		}, cs.Keys)

		_, err = s.Deduct(context.Background(), stock.KeysFor("seckill:", "").Deduct(), order("o1", "u7", 1))
		require.ErrorIs(t, err, runtime.ErrCrossSlot, "an empty SKU gives no hash tag")
		assert.Zero(t, counting.calls.Load(), "no call reached the executor")
		assert.NotContains(t, srv.Do(t, "INFO", "commandstats"), "cmdstat_eval", "no EVAL or EVALSHA reached the server")
	})
}

func TestDeductRecoversFromScriptFlush(t *testing.T) {
	exectest.Run(t, func(t *testing.T, ex exectest.Kind) {
		srv, _, s := setup(t, ex)
		ctx := context.Background()
		k := keysFor("9")
		srv.Do(t, "SET", k.Stock, "10")
		require.NoError(t, s.Preload(ctx))
		for _, sc := range stock.All() {
			assert.Equal(t, "[1]", srv.Do(t, "SCRIPT", "EXISTS", sc.SHA1()), sc.Name())
		}

		for i := range 3 {
			srv.Do(t, "SCRIPT", "FLUSH")
			require.Equal(t, "[0]", srv.Do(t, "SCRIPT", "EXISTS", stock.DeductScript().SHA1()))
			left, err := s.Deduct(ctx, k.Deduct(), order("o"+strconv.Itoa(i), "u1", 1))
			require.NoError(t, err, "no NOSCRIPT reaches the caller")
			assert.Equal(t, int64(9-i), left)
			assert.Equal(t, "[1]", srv.Do(t, "SCRIPT", "EXISTS", stock.DeductScript().SHA1()), "EVAL put the script back in the cache")
		}
		stats := srv.Do(t, "INFO", "commandstats")
		assert.Contains(t, stats, "cmdstat_evalsha:calls=3,", "one EVALSHA per call")
		assert.Contains(t, stats, "cmdstat_eval:calls=3,", "one EVAL fallback per flush")
	})
}

func TestDeductScriptErrorCarriesLuaLine(t *testing.T) {
	exectest.Run(t, func(t *testing.T, ex exectest.Kind) {
		srv, _, s := setup(t, ex)
		k := keysFor("5")
		srv.Do(t, "HSET", k.Stock, "f", "v") // wrong type: GET raises WRONGTYPE
		_, err := s.Deduct(context.Background(), k.Deduct(), order("o1", "u1", 1))
		var se *runtime.ScriptError
		require.ErrorAs(t, err, &se)
		assert.Equal(t, "lua/stock/deduct.lua", se.File)
		assert.Equal(t, lineOf(t, "../lua/stock/deduct.lua", "redis.call('GET', KEYS[1])"), se.Line)
		assert.True(t, strings.HasPrefix(se.Err.Msg, "WRONGTYPE"), se.Err.Msg)
		assert.True(t, strings.HasPrefix(err.Error(), "lua/stock/deduct.lua:"+strconv.Itoa(se.Line)+": stock.Deduct: WRONGTYPE"), err.Error())
	})
}

func TestCorruptRecordIsReportedNotOverwritten(t *testing.T) {
	exectest.Run(t, func(t *testing.T, ex exectest.Kind) {
		srv, _, s := setup(t, ex)
		ctx := context.Background()
		k := keysFor("corrupt")
		srv.Do(t, "SET", k.Stock, "10")
		srv.Do(t, "HSET", k.Orders, "o1", "garbage")
		_, err := s.Deduct(ctx, k.Deduct(), order("o1", "u1", 1))
		require.ErrorIs(t, err, stock.ErrCorruptRecord)
		assert.Contains(t, err.Error(), `order o1: "garbage"`)
		_, err = s.Cancel(ctx, k.Cancel(), stock.CancelArgs{Order: "o1", At: at})
		require.ErrorIs(t, err, stock.ErrCorruptRecord)
		assert.Equal(t, "garbage", srv.Do(t, "HGET", k.Orders, "o1"))
		assert.Equal(t, "10", srv.Do(t, "GET", k.Stock))

		// A malformed buyer count is found before the first write too.
		srv.Do(t, "HSET", k.Buyers, "u2", "lots")
		_, err = s.Deduct(ctx, k.Deduct(), order("o2", "u2", 1))
		require.ErrorIs(t, err, stock.ErrCorruptRecord)
		assert.Equal(t, "10", srv.Do(t, "GET", k.Stock))
		assert.Equal(t, "0", srv.Do(t, "HEXISTS", k.Orders, "o2"))
	})
}

// TestDeductRaceNeverOversells lets 2,000 buyers on 3 separate connections
// race for 500 units, 2 at a time for some buyers.
func TestDeductRaceNeverOversells(t *testing.T) {
	runModes(t, func(t *testing.T, m mode, ex exectest.Kind) {
		srv := redistest.Start(t)
		const units, buyers = 500, 2000
		k := keysFor("race")
		srv.Do(t, "SET", k.Stock, strconv.Itoa(units))
		clients := []seller{
			m.new(ex.Single(t, srv)),
			m.new(ex.Single(t, srv)),
			m.new(ex.Single(t, srv)),
		}
		res := race(t, raceConfig{buyers: buyers, workers: buyers, qty: func(i int) int64 { return int64(1 + i%2) },
			scripts: func(i int) seller { return clients[i%3] }, keys: k})
		res.requireNoErrors(t)
		left, _ := strconv.Atoi(srv.Do(t, "GET", k.Stock))
		assert.Equal(t, int64(units), res.soldUnits+int64(left), "every unit is sold or left")
		assert.GreaterOrEqual(t, left, 0)
		assert.LessOrEqual(t, left, 1, "only a 1-unit remainder can stay unsold when 2-unit buyers are refused")
		assert.Equal(t, strconv.Itoa(buyers), srv.Do(t, "HLEN", k.Orders), "one record per order, sold or refused")
		requireReconciles(t, clients[0], k, units)
	})
}

func lineOf(t *testing.T, path, needle string) int {
	t.Helper()
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	for i, l := range strings.Split(string(b), "\n") {
		if strings.Contains(l, needle) {
			return i + 1
		}
	}
	t.Fatalf("%q not in %s", needle, path)
	return 0
}

// countingExecutor counts the calls that reach the executor, and the
// transient failures (connection errors, LOADING, ...) they met.
type countingExecutor struct {
	runtime.Executor
	calls     atomic.Int64
	transient atomic.Int64
}

func (c *countingExecutor) count(v runtime.Value, err error) (runtime.Value, error) {
	c.calls.Add(1)
	if runtime.IsTransient(err) {
		c.transient.Add(1)
	}
	return v, err
}

func (c *countingExecutor) EvalSha(ctx context.Context, s *runtime.Script, keys, args []string) (runtime.Value, error) {
	return c.count(c.Executor.EvalSha(ctx, s, keys, args))
}

func (c *countingExecutor) Eval(ctx context.Context, s *runtime.Script, keys, args []string) (runtime.Value, error) {
	return c.count(c.Executor.Eval(ctx, s, keys, args))
}

// FCall counts as EvalSha does; every executor these tests wrap runs
// functions.
func (c *countingExecutor) FCall(ctx context.Context, s *runtime.Script, keys, args []string) (runtime.Value, error) {
	return c.count(c.Executor.(runtime.FunctionExecutor).FCall(ctx, s, keys, args))
}

// LoadLibrary passes the load on.
func (c *countingExecutor) LoadLibrary(ctx context.Context, l *runtime.Library) error {
	return c.Executor.(runtime.FunctionExecutor).LoadLibrary(ctx, l)
}

// LoadLibraryFor passes the load on.
func (c *countingExecutor) LoadLibraryFor(ctx context.Context, l *runtime.Library, key string) error {
	return c.Executor.(runtime.FunctionExecutor).LoadLibraryFor(ctx, l, key)
}

// lossyExecutor runs every call but loses the reply of the first lose
// calls, as a connection that drops after the server answered would: the
// script ran, the client sees a connection error.
type lossyExecutor struct {
	runtime.Executor
	lose atomic.Int64
}

func (l *lossyExecutor) lost(v runtime.Value, err error) (runtime.Value, error) {
	if err == nil && l.lose.Add(-1) >= 0 {
		return runtime.Value{}, io.ErrUnexpectedEOF
	}
	return v, err
}

func (l *lossyExecutor) EvalSha(ctx context.Context, s *runtime.Script, keys, args []string) (runtime.Value, error) {
	return l.lost(l.Executor.EvalSha(ctx, s, keys, args))
}

func (l *lossyExecutor) Eval(ctx context.Context, s *runtime.Script, keys, args []string) (runtime.Value, error) {
	return l.lost(l.Executor.Eval(ctx, s, keys, args))
}

// A reply lost after the script ran: runtime retries the idempotent
// Deduct and Cancel, the retries answer the first outcome, and nothing is
// deducted or returned twice.
func TestLostRepliesAreRetriedWithoutDoubleEffect(t *testing.T) {
	exectest.Run(t, func(t *testing.T, ex exectest.Kind) {
		srv, e, _ := setup(t, ex)
		lossy := &lossyExecutor{Executor: e}
		s := stock.New(lossy)
		ctx := context.Background()
		k := keysFor("lost")
		srv.Do(t, "SET", k.Stock, "10")

		lossy.lose.Store(3)
		left, err := s.Deduct(ctx, k.Deduct(), order("o1", "u1", 2))
		require.NoError(t, err, "three lost replies, then the first outcome")
		assert.Equal(t, int64(8), left)
		assert.Equal(t, "8", srv.Do(t, "GET", k.Stock), "deducted once")
		assert.Equal(t, 4, srv.CommandCalls(t, "evalsha"), "one try and three retries")

		srv.Do(t, "SET", k.Stock, "0")
		lossy.lose.Store(1)
		_, err = s.Deduct(ctx, k.Deduct(), order("o2", "u2", 1))
		require.ErrorIs(t, err, stock.ErrOutOfStock, "a lost refusal is answered as a refusal")

		srv.Do(t, "SET", k.Stock, "8")
		lossy.lose.Store(2)
		n, err := s.Cancel(ctx, k.Cancel(), stock.CancelArgs{Order: "o1", At: at})
		require.NoError(t, err)
		assert.Equal(t, int64(2), n)
		assert.Equal(t, "10", srv.Do(t, "GET", k.Stock), "returned once")

		// The same losses for a script that is not idempotent reach the caller.
		plain := runtime.NewScript(runtime.ScriptSpec{Name: "t.Incr", File: "incr.lua", Body: "#!lua\nreturn redis.call('INCR', KEYS[1])"})
		lossy.lose.Store(1)
		_, err = plain.Exec(ctx, lossy, []string{"n"}, nil)
		require.ErrorIs(t, err, io.ErrUnexpectedEOF, "never resent: it ran once and the caller must decide")
		assert.Equal(t, "1", srv.Do(t, "GET", "n"))
	})
}
