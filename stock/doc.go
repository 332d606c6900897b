// Package stock is flash-sale stock deduction: typed Go wrappers, generated
// by luagen from lua/stock/*.lua, that check and decrement a SKU's stock and
// record the purchase in one atomic script.
//
//	s := stock.New(runtime.Rueidis(client))
//	left, err := s.Deduct(ctx,
//		stock.DeductKeys{Stock: "seckill:{42}:stock", Log: "seckill:{42}:log:u7"},
//		stock.DeductArgs{Qty: 1, Buyer: "u7", At: time.Now(), TTL: time.Hour})
//	switch {
//	case errors.Is(err, stock.ErrOutOfStock): // sold out
//	case err != nil: // network, script or argument error
//	}
package stock

//go:generate go run github.com/luagen/luagen/cmd/luagen generate ../lua/stock
