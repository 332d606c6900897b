package stock_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/luagen/luagen/internal/exectest"
	"github.com/luagen/luagen/stock"
)

func TestCancelReturnsUnitsExactlyOnce(t *testing.T) {
	exectest.Run(t, func(t *testing.T, ex exectest.Kind) {
		srv, _, s := setup(t, ex)
		ctx := context.Background()
		k := keysFor("cancel")
		srv.Do(t, "SET", k.Stock, "10")
		_, err := s.Deduct(ctx, k.Deduct(), order("o1", "u1", 3))
		require.NoError(t, err)
		_, err = s.Deduct(ctx, k.Deduct(), order("o2", "u1", 1))
		require.NoError(t, err)
		require.Equal(t, "6", srv.Do(t, "GET", k.Stock))

		for range 3 {
			n, err := s.Cancel(ctx, k.Cancel(), stock.CancelArgs{Order: "o1", At: at})
			require.NoError(t, err)
			assert.Equal(t, int64(3), n, "every call answers the units the order returned")
		}
		assert.Equal(t, "9", srv.Do(t, "GET", k.Stock), "returned once")
		assert.Equal(t, "1", srv.Do(t, "HGET", k.Buyers, "u1"), "off the buyer's count")
		assert.Equal(t, "cancelled 3 1700000000123 7 u1", srv.Do(t, "HGET", k.Orders, "o1"))

		_, err = s.Deduct(ctx, k.Deduct(), order("o1", "u1", 3))
		require.ErrorIs(t, err, stock.ErrCancelled, "a late retry of the cancelled order does not sell again")
		assert.Equal(t, "9", srv.Do(t, "GET", k.Stock))

		n, err := s.Cancel(ctx, k.Cancel(), stock.CancelArgs{Order: "o2", At: at})
		require.NoError(t, err)
		assert.Equal(t, int64(1), n)
		assert.Equal(t, "0", srv.Do(t, "HEXISTS", k.Buyers, "u1"), "a buyer holding nothing is removed")
		assert.Equal(t, "10", srv.Do(t, "GET", k.Stock))
		requireReconciles(t, s, k, 10)
	})
}

// A cancellation that overtakes its deduction (the deduct's reply was lost,
// the order failed, and the deduct is retried later) leaves a void record
// that refuses the late deduct.
func TestCancelBeforeDeductVoidsTheOrder(t *testing.T) {
	exectest.Run(t, func(t *testing.T, ex exectest.Kind) {
		srv, _, s := setup(t, ex)
		ctx := context.Background()
		k := keysFor("void")
		srv.Do(t, "SET", k.Stock, "10")
		n, err := s.Cancel(ctx, k.Cancel(), stock.CancelArgs{Order: "o9", At: at})
		require.NoError(t, err)
		assert.Zero(t, n)
		assert.Equal(t, "void 0 1700000000123 0 ", srv.Do(t, "HGET", k.Orders, "o9"))
		_, err = s.Deduct(ctx, k.Deduct(), order("o9", "u1", 1))
		require.ErrorIs(t, err, stock.ErrCancelled)
		assert.Equal(t, "10", srv.Do(t, "GET", k.Stock))
		n, err = s.Cancel(ctx, k.Cancel(), stock.CancelArgs{Order: "o9", At: at})
		require.NoError(t, err)
		assert.Zero(t, n)
		r := requireReconciles(t, s, k, 10)
		assert.Equal(t, int64(1), r.VoidOrders)
	})
}

func TestCancelRefusedOrderReturnsNothing(t *testing.T) {
	exectest.Run(t, func(t *testing.T, ex exectest.Kind) {
		srv, _, s := setup(t, ex)
		ctx := context.Background()
		k := keysFor("refused")
		srv.Do(t, "SET", k.Stock, "1")
		_, err := s.Deduct(ctx, k.Deduct(), order("o1", "u1", 2))
		require.ErrorIs(t, err, stock.ErrOutOfStock)
		n, err := s.Cancel(ctx, k.Cancel(), stock.CancelArgs{Order: "o1", At: at})
		require.NoError(t, err)
		assert.Zero(t, n)
		assert.Equal(t, "1", srv.Do(t, "GET", k.Stock))
		assert.Equal(t, "refused 2 1700000000123 -1 u1", srv.Do(t, "HGET", k.Orders, "o1"))
	})
}

func TestCancelErrors(t *testing.T) {
	exectest.Run(t, func(t *testing.T, ex exectest.Kind) {
		srv, _, s := setup(t, ex)
		ctx := context.Background()
		k := keysFor("cancel-errors")
		_, err := s.Cancel(ctx, k.Cancel(), stock.CancelArgs{Order: "o1", At: at})
		require.ErrorIs(t, err, stock.ErrNoSuchSKU)
		assert.Equal(t, "0", srv.Do(t, "EXISTS", k.Orders), "nothing recorded")
		srv.Do(t, "SET", k.Stock, "1")
		_, err = s.Cancel(ctx, k.Cancel(), stock.CancelArgs{Order: "", At: at})
		require.ErrorIs(t, err, stock.ErrBadArgument)
		_, err = s.Cancel(ctx, k.Cancel(), stock.CancelArgs{Order: "o1"})
		require.ErrorIs(t, err, stock.ErrBadArgument, "a zero time")
		assert.Equal(t, "0", srv.Do(t, "EXISTS", k.Orders))
	})
}
