package stock_test

import (
	"context"
	"strconv"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/luagen/luagen/internal/exectest"
	"github.com/luagen/luagen/stock"
)

func TestReconcileSumsEveryState(t *testing.T) {
	exectest.Run(t, func(t *testing.T, ex exectest.Kind) {
		srv, _, s := setup(t, ex)
		ctx := context.Background()
		k := keysFor("sums")
		srv.Do(t, "SET", k.Stock, "5")
		for i, qty := range []int64{2, 1, 3, 1} { // the 3 is refused
			_, _ = s.Deduct(ctx, k.Deduct(), order("o"+strconv.Itoa(i), "buyer "+strconv.Itoa(i%2), qty))
		}
		_, err := s.Cancel(ctx, k.Cancel(), stock.CancelArgs{Order: "o1", At: at})
		require.NoError(t, err)
		_, err = s.Cancel(ctx, k.Cancel(), stock.CancelArgs{Order: "never", At: at})
		require.NoError(t, err)

		r := requireReconciles(t, s, k, 5)
		assert.True(t, r.OK())
		assert.Equal(t, stock.AuditReply{Left: 2, SoldOrders: 2, SoldUnits: 3, RefusedOrders: 1, CancelledOrders: 1,
			CancelledUnits: 1, VoidOrders: 1, BuyerUnits: 3, MalformedIDs: []string{}, BuyerDiffList: []string{}}, r.AuditReply)
		assert.Equal(t, int64(5), r.Initial)
	})
}

func TestReconcileReportsEachDifference(t *testing.T) {
	exectest.Run(t, func(t *testing.T, ex exectest.Kind) {
		srv, _, s := setup(t, ex)
		ctx := context.Background()
		k := keysFor("diffs")
		srv.Do(t, "SET", k.Stock, "10")
		_, err := s.Deduct(ctx, k.Deduct(), order("o1", "u1", 2))
		require.NoError(t, err)
		_, err = s.Deduct(ctx, k.Deduct(), order("o2", "u 2", 1))
		require.NoError(t, err)
		requireReconciles(t, s, k, 10)

		srv.Do(t, "DECRBY", k.Stock, "1")          // a unit gone without a record
		srv.Do(t, "HINCRBY", k.Buyers, "u 2", "4") // a counter off by 4
		srv.Do(t, "HSET", k.Buyers, "ghost", "1")  // a counter with no orders
		srv.Do(t, "HSET", k.Orders, "o3", "x y z") // a record that does not parse
		srv.Do(t, "HDEL", k.Buyers, "u1")          // sold orders, no counter
		r, err := s.Reconcile(ctx, k.Audit(), 10)
		require.NoError(t, err)
		assert.False(t, r.OK())
		got := map[string]stock.Difference{}
		for _, d := range r.Differences {
			got[d.Check+"/"+d.Subject] = d
		}
		assert.Len(t, r.Differences, 6, "%v", r.Differences)
		assert.Equal(t, stock.Difference{Check: "stock", Want: 7, Got: 6,
			Detail: "6 units left of 10, but sold orders record only 3 units: 1 units left stock without a purchase record"}, got["stock/"])
		assert.Equal(t, stock.Difference{Check: "buyers", Want: 3, Got: 6, Detail: "buyer counters sum to 6 units, sold orders to 3"}, got["buyers/"])
		assert.Equal(t, stock.Difference{Check: "buyer", Subject: "u 2", Want: 1, Got: 5, Detail: "counter holds 5 units, sold orders 1"}, got["buyer/u 2"])
		assert.Equal(t, int64(1), got["buyer/ghost"].Got)
		assert.Equal(t, stock.Difference{Check: "buyer", Subject: "u1", Want: 2, Got: 0, Detail: "counter holds 0 units, sold orders 2"}, got["buyer/u1"])
		assert.Equal(t, "record \"o3\": the record does not parse as \"state qty at reply buyer\"", got["record/o3"].String())

		srv.Do(t, "SET", k.Stock, "-1")
		r, err = s.Reconcile(ctx, k.Audit(), 2)
		require.NoError(t, err)
		assert.Contains(t, r.Differences, stock.Difference{Check: "oversold", Want: 0, Got: -1, Detail: "the stock counter is -1: 1 units oversold"})
		for _, d := range r.Differences {
			assert.NotEqual(t, "stock", d.Check, "2 on sale, 3 sold, -1 left: the counter agrees, and is oversold")
		}
	})
}

func TestReconcileListsAtMost100(t *testing.T) {
	exectest.Run(t, func(t *testing.T, ex exectest.Kind) {
		srv, _, s := setup(t, ex)
		k := keysFor("many")
		srv.Do(t, "SET", k.Stock, "0")
		args := []string{"HSET", k.Buyers}
		for i := range 150 {
			args = append(args, "b"+strconv.Itoa(i), "1")
		}
		srv.Do(t, args...)
		r, err := s.Reconcile(context.Background(), k.Audit(), 0)
		require.NoError(t, err)
		assert.Equal(t, int64(150), r.BuyerDiffs)
		assert.Len(t, r.BuyerDiffList, 100)
		last := r.Differences[len(r.Differences)-1]
		assert.Equal(t, "buyer: 50 more buyers differ (only 100 are listed)", last.String())
	})
}

func TestReconcileErrors(t *testing.T) {
	exectest.Run(t, func(t *testing.T, ex exectest.Kind) {
		_, _, s := setup(t, ex)
		k := keysFor("absent")
		_, err := s.Reconcile(context.Background(), k.Audit(), 10)
		require.ErrorIs(t, err, stock.ErrNoSuchSKU)
		_, err = s.Reconcile(context.Background(), k.Audit(), -1)
		require.EqualError(t, err, "stock.Reconcile: initial stock -1 is negative")
	})
}
