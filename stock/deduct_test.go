package stock_test

import (
	"context"
	"errors"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/rueidis"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/luagen/luagen/internal/redistest"
	"github.com/luagen/luagen/runtime"
	"github.com/luagen/luagen/stock"
)

var at = time.UnixMilli(1_700_000_000_123)

func setup(t *testing.T) (*redistest.Server, rueidis.Client, *stock.Scripts) {
	t.Helper()
	srv := redistest.Start(t)
	c := srv.Client(t)
	return srv, c, stock.New(runtime.Rueidis(c))
}

func keysFor(sku, buyer string) stock.DeductKeys {
	return stock.DeductKeys{Stock: "seckill:{" + sku + "}:stock", Log: "seckill:{" + sku + "}:log:" + buyer}
}

func TestDeductOutcomes(t *testing.T) {
	srv, _, s := setup(t)
	ctx := context.Background()
	k := keysFor("42", "u7")
	args := stock.DeductArgs{Qty: 2, Buyer: "u7", At: at, TTL: time.Hour}

	_, err := s.Deduct(ctx, k, args)
	require.ErrorIs(t, err, stock.ErrNoSuchSKU)
	assert.Equal(t, "0", srv.Do(t, "EXISTS", k.Log), "no record for a missing SKU")

	srv.Do(t, "SET", k.Stock, "5")
	left, err := s.Deduct(ctx, k, args)
	require.NoError(t, err)
	assert.Equal(t, int64(3), left)
	assert.Equal(t, "u7 2 1700000000123", srv.Do(t, "GET", k.Log))
	assert.Equal(t, "3600", srv.Do(t, "TTL", k.Log))

	left, err = s.Deduct(ctx, k, args)
	require.NoError(t, err)
	assert.Equal(t, int64(1), left)

	_, err = s.Deduct(ctx, k, args)
	require.ErrorIs(t, err, stock.ErrOutOfStock)
	assert.Equal(t, "1", srv.Do(t, "GET", k.Stock), "a refused deduction leaves stock untouched")
	var ce *runtime.CodeError
	require.ErrorAs(t, err, &ce)
	assert.Equal(t, "-1", ce.Reply)

	args.Qty = 1
	left, err = s.Deduct(ctx, k, args)
	require.NoError(t, err)
	assert.Equal(t, int64(0), left)
	_, err = s.Deduct(ctx, k, args)
	require.ErrorIs(t, err, stock.ErrOutOfStock)
	assert.Equal(t, "0", srv.Do(t, "GET", k.Stock))
}

func TestDeductRejectsBadArguments(t *testing.T) {
	srv, _, s := setup(t)
	ctx := context.Background()
	k := keysFor("7", "u1")
	srv.Do(t, "SET", k.Stock, "100")
	for name, args := range map[string]stock.DeductArgs{
		"qty 0":        {Qty: 0, Buyer: "u1", At: at, TTL: time.Hour},
		"qty negative": {Qty: -3, Buyer: "u1", At: at, TTL: time.Hour},
		"ttl 0":        {Qty: 1, Buyer: "u1", At: at, TTL: 0},
		"ttl below 1s": {Qty: 1, Buyer: "u1", At: at, TTL: 999 * time.Millisecond},
		"time zero":    {Qty: 1, Buyer: "u1", At: time.Time{}, TTL: time.Hour},
	} {
		t.Run(name, func(t *testing.T) {
			_, err := s.Deduct(ctx, k, args)
			require.ErrorIs(t, err, stock.ErrBadArgument)
			var re *runtime.ReplyError
			require.ErrorAs(t, err, &re, "the server's text is kept")
			assert.Contains(t, re.Msg, "must be an integer >= 1")
			assert.Equal(t, "100", srv.Do(t, "GET", k.Stock), "nothing deducted")
			assert.Equal(t, "0", srv.Do(t, "EXISTS", k.Log), "nothing recorded")
		})
	}
}

// Raw EVALSHA with the arguments a hand-written caller might send: the
// script itself refuses anything but a positive decimal integer.
func TestDeductScriptRejectsNonNumericArgv(t *testing.T) {
	srv, c, _ := setup(t)
	srv.Do(t, "SET", "s:{1}:stock", "10")
	for _, qty := range []string{"1.5", "abc", "", " 1", "0x10", "1e3", "-1", "0"} {
		v, err := stock.DeductScript.Exec(context.Background(), runtime.Rueidis(c),
			[]string{"s:{1}:stock", "s:{1}:log"}, []string{qty, "u", "1", "60"})
		require.ErrorIs(t, err, stock.ErrBadArgument, "qty %q gave %v", qty, v)
	}
	assert.Equal(t, "10", srv.Do(t, "GET", "s:{1}:stock"))
}

func TestDeductCrossSlotKeysSendNothing(t *testing.T) {
	srv, c, _ := setup(t)
	counting := &countingExecutor{Executor: runtime.Rueidis(c)}
	s := stock.New(counting)
	_, err := s.Deduct(context.Background(),
		stock.DeductKeys{Stock: "seckill:{42}:stock", Log: "seckill:{43}:log:u7"},
		stock.DeductArgs{Qty: 1, Buyer: "u7", At: at, TTL: time.Hour})
	require.ErrorIs(t, err, runtime.ErrCrossSlot)
	var cs *runtime.CrossSlotError
	require.ErrorAs(t, err, &cs)
	assert.Equal(t, "stock.Deduct", cs.Script)
	assert.Equal(t, []runtime.KeySlot{{Key: "seckill:{42}:stock", Slot: runtime.Slot("42")}, {Key: "seckill:{43}:log:u7", Slot: runtime.Slot("43")}}, cs.Keys)
	assert.Zero(t, counting.calls.Load(), "no call reached the executor")
	assert.NotContains(t, srv.Do(t, "INFO", "commandstats"), "cmdstat_eval", "no EVAL or EVALSHA reached the server")
}

func TestDeductRecoversFromScriptFlush(t *testing.T) {
	srv, _, s := setup(t)
	ctx := context.Background()
	k := keysFor("9", "u1")
	srv.Do(t, "SET", k.Stock, "10")
	require.NoError(t, s.Preload(ctx))
	assert.Equal(t, "[1]", srv.Do(t, "SCRIPT", "EXISTS", stock.DeductScript.SHA1()))

	for i := range 3 {
		srv.Do(t, "SCRIPT", "FLUSH")
		require.Equal(t, "[0]", srv.Do(t, "SCRIPT", "EXISTS", stock.DeductScript.SHA1()))
		left, err := s.Deduct(ctx, k, stock.DeductArgs{Qty: 1, Buyer: "u1", At: at, TTL: time.Hour})
		require.NoError(t, err, "no NOSCRIPT reaches the caller")
		assert.Equal(t, int64(9-i), left)
		assert.Equal(t, "[1]", srv.Do(t, "SCRIPT", "EXISTS", stock.DeductScript.SHA1()), "EVAL put the script back in the cache")
	}
	stats := srv.Do(t, "INFO", "commandstats")
	assert.Contains(t, stats, "cmdstat_evalsha:calls=3,", "one EVALSHA per call")
	assert.Contains(t, stats, "cmdstat_eval:calls=3,", "one EVAL fallback per flush")
}

func TestDeductScriptErrorCarriesLuaLine(t *testing.T) {
	srv, _, s := setup(t)
	k := keysFor("5", "u1")
	srv.Do(t, "HSET", k.Stock, "f", "v") // wrong type: GET raises WRONGTYPE
	_, err := s.Deduct(context.Background(), k, stock.DeductArgs{Qty: 1, Buyer: "u1", At: at, TTL: time.Hour})
	var se *runtime.ScriptError
	require.ErrorAs(t, err, &se)
	assert.Equal(t, "lua/stock/deduct.lua", se.File)
	assert.Equal(t, lineOf(t, "../lua/stock/deduct.lua", "redis.call('GET', KEYS[1])"), se.Line)
	assert.True(t, strings.HasPrefix(se.Err.Msg, "WRONGTYPE"), se.Err.Msg)
	assert.True(t, strings.HasPrefix(err.Error(), "lua/stock/deduct.lua:"+strconv.Itoa(se.Line)+": stock.Deduct: WRONGTYPE"), err.Error())
}

// TestDeductRaceNeverOversells lets 2,000 buyers on 3 separate connections
// race for 500 units, 2 at a time for some buyers.
func TestDeductRaceNeverOversells(t *testing.T) {
	srv := redistest.Start(t)
	const units, buyers = 500, 2000
	k := keysFor("race", "")
	srv.Do(t, "SET", k.Stock, strconv.Itoa(units))
	clients := []*stock.Scripts{
		stock.New(runtime.Rueidis(srv.Client(t))),
		stock.New(runtime.Rueidis(srv.Client(t))),
		stock.New(runtime.Rueidis(srv.Client(t))),
	}
	var sold, refused atomic.Int64
	var wg sync.WaitGroup
	errs := make(chan error, buyers)
	for i := range buyers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			qty := int64(1 + i%2)
			buyer := "u" + strconv.Itoa(i)
			left, err := clients[i%3].Deduct(context.Background(), keysFor("race", buyer),
				stock.DeductArgs{Qty: qty, Buyer: buyer, At: at, TTL: time.Hour})
			switch {
			case err == nil:
				sold.Add(qty)
				if left < 0 {
					errs <- errors.New("negative stock left: " + strconv.FormatInt(left, 10))
				}
			case errors.Is(err, stock.ErrOutOfStock):
				refused.Add(1)
			default:
				errs <- err
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	left, _ := strconv.Atoi(srv.Do(t, "GET", k.Stock))
	assert.Equal(t, int64(units), sold.Load()+int64(left), "every unit is sold or left")
	assert.GreaterOrEqual(t, left, 0)
	assert.LessOrEqual(t, left, 1, "only a 1-unit remainder can stay unsold when 2-unit buyers are refused")
	assert.Equal(t, int64(buyers), refused.Load()+int64(countRecords(t, srv, "race")))
}

func countRecords(t *testing.T, srv *redistest.Server, sku string) int {
	t.Helper()
	n := 0
	for _, k := range strings.Fields(strings.Trim(srv.Do(t, "KEYS", "seckill:{"+sku+"}:log:*"), "[]")) {
		if k != "" {
			n++
		}
	}
	return n
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

type countingExecutor struct {
	runtime.Executor
	calls atomic.Int64
}

func (c *countingExecutor) EvalSha(ctx context.Context, s *runtime.Script, keys, args []string) (runtime.Value, error) {
	c.calls.Add(1)
	return c.Executor.EvalSha(ctx, s, keys, args)
}

func (c *countingExecutor) Eval(ctx context.Context, s *runtime.Script, keys, args []string) (runtime.Value, error) {
	c.calls.Add(1)
	return c.Executor.Eval(ctx, s, keys, args)
}
