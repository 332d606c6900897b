// Package stock is flash-sale stock deduction: typed Go wrappers, generated
// by luagen from lua/stock/*.lua, that check and decrement a SKU's stock and
// record the order in one atomic script, plus the hand-written Reconcile.
//
// A SKU has three keys that share its {hash tag}: a stock counter, an
// orders hash (order id → "state qty at reply buyer") and a buyers hash
// (buyer → units held). [KeysFor] builds them; it is generated from the
// ---@keys and ---@key templates in lua/stock/deduct.lua, so no code here
// spells a key.
//
//	s := stock.New(runtime.NewRueidisExecutor(client))
//	k := stock.KeysFor("seckill:", "42")
//	left, err := s.Deduct(ctx, k.Deduct(),
//		stock.DeductArgs{Order: "o-1001", Buyer: "u7", Qty: 1, Limit: 2, At: time.Now()})
//	switch {
//	case errors.Is(err, stock.ErrOutOfStock): // sold out (final for this order id)
//	case errors.Is(err, stock.ErrLimitExceeded): // u7 already holds 2
//	case err != nil: // network (after retries), script or argument error
//	}
//
// [Scripts.Deduct] is idempotent per order id: calling it again with the
// same order (after a lost reply, a restart, a failover) answers the first
// outcome and never deducts twice; runtime retries it by itself after
// transient failures. [Scripts.Cancel] gives a sold order's units back
// exactly once. [Scripts.Reconcile] compares the stock counter with every
// order record and buyer counter and reports each difference.
package stock

//go:generate go tool luagen generate ../lua/stock
