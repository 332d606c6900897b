package stock_test

import (
	"context"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/luagen/luagen/internal/exectest"
	"github.com/luagen/luagen/luatest"
	"github.com/luagen/luagen/redistest"
	"github.com/luagen/luagen/runtime"
	"github.com/luagen/luagen/stock"
)

// mixedBatch queues, on one batch, calls whose outcomes all differ: a sale,
// a second sale on the same SKU, out of stock, no such SKU, a bad argument
// (an error reply the header declares), keys of two slots, and a cancel of
// the first sale. check asserts each call's typed result.
func mixedBatch(b *runtime.Batch, s *stock.Scripts, sold, missing stock.SKUKeys) (check func(t *testing.T)) {
	sale := s.QueueDeduct(b, sold.Deduct(), order("o1", "u1", 2))
	sale2 := s.QueueDeduct(b, sold.Deduct(), order("o2", "u2", 1))
	out := s.QueueDeduct(b, sold.Deduct(), order("o3", "u3", 100))
	none := s.QueueDeduct(b, missing.Deduct(), order("o4", "u4", 1))
	bad := s.QueueDeduct(b, sold.Deduct(), order("o5", "u5", 0))
	cross := s.QueueDeduct(b, stock.DeductKeys{Stock: sold.Stock, Orders: missing.Orders, Buyers: sold.Buyers}, order("o6", "u6", 1))
	cancel := s.QueueCancel(b, sold.Cancel(), stock.CancelArgs{Order: "o1", At: at})
	return func(t *testing.T) {
		t.Helper()
		left, err := sale.Result()
		require.NoError(t, err)
		assert.Equal(t, int64(8), left)
		left, err = sale2.Result()
		require.NoError(t, err)
		assert.Equal(t, int64(7), left)
		_, err = out.Result()
		assert.ErrorIs(t, err, stock.ErrOutOfStock)
		_, err = none.Result()
		assert.ErrorIs(t, stockError(err), stock.ErrNoSuchSKU)
		_, err = bad.Result()
		assert.ErrorIs(t, err, stock.ErrBadArgument)
		_, err = cross.Result()
		assert.ErrorIs(t, err, runtime.ErrCrossSlot)
		back, err := cancel.Result()
		require.NoError(t, err)
		assert.Equal(t, int64(2), back, "the cancel runs after the sale it cancels")
	}
}

func TestBatchMixedOutcomes(t *testing.T) {
	exectest.Run(t, func(t *testing.T, ex exectest.Kind) {
		srv, _, s := setup(t, ex)
		ctx := context.Background()
		sold, missing := keysFor("1"), keysFor("2")
		srv.Do(t, "SET", sold.Stock, "10")
		require.NoError(t, s.Preload(ctx))
		srv.Do(t, "CONFIG", "RESETSTAT")

		var b runtime.Batch
		check := mixedBatch(&b, s, sold, missing)
		assert.Equal(t, 7, b.Len())
		err := b.Send(ctx)
		assert.ErrorIs(t, err, stock.ErrOutOfStock, "Send returns the first failure in queue order")
		check(t)

		assert.Equal(t, 6, srv.CommandCalls(t, "evalsha"), "every call but the cross-slot one, once")
		assert.Equal(t, 0, srv.CommandCalls(t, "eval"))
		assert.Equal(t, "9", srv.Do(t, "GET", sold.Stock), "o1 sold 2 and was cancelled, o2 sold 1")
		assert.Equal(t, "0", srv.Do(t, "HEXISTS", missing.Orders, "o6"), "the cross-slot call was not sent")
		assert.ErrorIs(t, b.Send(ctx), runtime.ErrBatchSent)
	})
}

// TestBatchNoScript flushes the script cache between queuing and sending:
// the calls whose EVALSHA the server answers NOSCRIPT, and only those, are
// sent again with EVAL, each once.
func TestBatchNoScript(t *testing.T) {
	exectest.Run(t, func(t *testing.T, ex exectest.Kind) {
		srv, e, s := setup(t, ex)
		ctx := context.Background()
		k := keysFor("7")
		srv.Do(t, "SET", k.Stock, "100")
		require.NoError(t, s.Preload(ctx))

		var b runtime.Batch
		var deducts []*runtime.Future[int64]
		for i := range 5 {
			deducts = append(deducts, s.QueueDeduct(&b, k.Deduct(), order("o"+strconv.Itoa(i), "u", 1)))
		}
		cancel := s.QueueCancel(&b, k.Cancel(), stock.CancelArgs{Order: "o0", At: at})
		srv.Do(t, "SCRIPT", "FLUSH")
		require.NoError(t, stock.DeductScript().Load(ctx, e), "Deduct is back in the cache, Cancel is not")
		srv.Do(t, "CONFIG", "RESETSTAT")

		require.NoError(t, b.Send(ctx))
		for i, f := range deducts {
			left, err := f.Result()
			require.NoError(t, err)
			assert.Equal(t, int64(99-i), left)
		}
		back, err := cancel.Result()
		require.NoError(t, err)
		assert.Equal(t, int64(1), back)
		assert.Equal(t, 6, srv.CommandCalls(t, "evalsha"))
		assert.Equal(t, 1, srv.CommandCalls(t, "eval"), "only the cancel is sent again")
		assert.Equal(t, "96", srv.Do(t, "GET", k.Stock), "every deduct ran once")

		// Everything missing: every call falls back, none runs twice.
		srv.Do(t, "SCRIPT", "FLUSH")
		srv.Do(t, "CONFIG", "RESETSTAT")
		var b2 runtime.Batch
		var more []*runtime.Future[int64]
		for i := range 3 {
			more = append(more, s.QueueDeduct(&b2, k.Deduct(), order("p"+strconv.Itoa(i), "u", 1)))
		}
		require.NoError(t, b2.Send(ctx))
		for i, f := range more {
			left, err := f.Result()
			require.NoError(t, err)
			assert.Equal(t, int64(95-i), left)
		}
		assert.Equal(t, 3, srv.CommandCalls(t, "evalsha"))
		assert.Equal(t, 3, srv.CommandCalls(t, "eval"))
	})
}

// A batch over the three primaries of the cluster, one of which forgot
// the code (SCRIPT FLUSH, or FUNCTION FLUSH in function mode): its calls,
// and only those, are sent again (with EVAL, or with FCALL after loading
// the library); a call with keys of two slots and one for a missing SKU
// fail alone.
func TestBatchCluster(t *testing.T) {
	runModesOnCluster(t, func(t *testing.T, m mode, ex exectest.Kind, c *redistest.Cluster) {
		e := ex.Cluster(t, c)
		s := m.new(e)
		ctx := context.Background()
		var skus []stock.SKUKeys
		for _, sku := range skusOnEveryPrimary(t, c, fresh("batch-"+m.name+ex.Name)) {
			k := keysFor(sku)
			skus = append(skus, k)
			p, _, err := c.PrimaryOf(runtime.Slot(k.Stock))
			require.NoError(t, err)
			p.Do(t, "SET", k.Stock, "50")
		}
		require.NoError(t, s.Preload(ctx))
		// The second primary forgets the scripts: its calls, and only
		// those, fall back to EVAL (load the library).
		p1, _, err := c.PrimaryOf(runtime.Slot(skus[1].Stock))
		require.NoError(t, err)
		p1.Do(t, m.flush...)

		var b runtime.Batch
		var fs [3][]*runtime.Future[int64]
		for i := range 4 {
			for j, k := range skus {
				fs[j] = append(fs[j], s.QueueDeduct(&b, k.Deduct(), order("o"+strconv.Itoa(i), "u", 2)))
			}
		}
		cross := s.QueueDeduct(&b, stock.DeductKeys{Stock: skus[0].Stock, Orders: skus[1].Orders, Buyers: skus[0].Buyers}, order("x", "u", 1))
		missing := keysFor(fresh("none"))
		none := s.QueueDeduct(&b, missing.Deduct(), order("n", "u", 1))
		err = b.Send(ctx)
		assert.ErrorIs(t, err, runtime.ErrCrossSlot)
		for j := range skus {
			for i, f := range fs[j] {
				left, err := f.Result()
				require.NoError(t, err, "sku %d call %d", j, i)
				assert.Equal(t, int64(50-2*(i+1)), left)
			}
			p, _, err := c.PrimaryOf(runtime.Slot(skus[j].Stock))
			require.NoError(t, err)
			assert.Equal(t, "42", p.Do(t, "GET", skus[j].Stock))
		}
		_, err = cross.Result()
		assert.ErrorIs(t, err, runtime.ErrCrossSlot)
		_, err = none.Result()
		assert.ErrorIs(t, stockError(err), stock.ErrNoSuchSKU)
	})
}

func TestBatchOffline(t *testing.T) {
	r := luatest.Start(t)
	s := stock.New(r)
	ctx := context.Background()
	sold, missing := keysFor("1"), keysFor("2")
	r.MustDo("SET", sold.Stock, "10")
	var b runtime.Batch
	check := mixedBatch(&b, s, sold, missing)
	assert.ErrorIs(t, b.Send(ctx), stock.ErrOutOfStock)
	check(t)
	assert.Equal(t, "9", r.MustDo("GET", sold.Stock).Str)
}

// A batch sent while the server is down: every call fails with a
// connection error, and since Deduct is ---@idempotent the batch sends the
// failed calls again with backoff until the server is back. Each order is
// sold once.
func TestBatchAcrossRestart(t *testing.T) {
	runModes(t, func(t *testing.T, m mode, ex exectest.Kind) {
		srv := redistest.Start(t, "--appendonly", "yes", "--appendfsync", "always")
		s := m.new(ex.Single(t, srv))
		ctx := context.Background()
		k := keysFor("restart")
		srv.Do(t, "SET", k.Stock, "100")
		require.NoError(t, s.Preload(ctx))

		var b runtime.Batch
		var fs []*runtime.Future[int64]
		for i := range 20 {
			fs = append(fs, s.QueueDeduct(&b, k.Deduct(), order("o"+strconv.Itoa(i), "u", 1)))
		}
		srv.Stop()
		restarted := make(chan error, 1)
		go func() {
			// Well inside the retries' 2 s of backoff.
			time.Sleep(100 * time.Millisecond)
			restarted <- srv.Restart()
		}()
		sendCtx, cancel := context.WithTimeout(ctx, 30*time.Second)
		defer cancel()
		err := b.Send(sendCtx)
		require.NoError(t, <-restarted)
		require.NoError(t, err)
		var lefts []int64
		for _, f := range fs {
			left, err := f.Result()
			require.NoError(t, err)
			lefts = append(lefts, left)
		}
		assert.ElementsMatch(t, []int64{99, 98, 97, 96, 95, 94, 93, 92, 91, 90, 89, 88, 87, 86, 85, 84, 83, 82, 81, 80}, lefts)
		assert.Equal(t, "80", srv.Do(t, "GET", k.Stock), "every order sold once")
		assert.Equal(t, "20", srv.Do(t, "HLEN", k.Orders))
	})
}
