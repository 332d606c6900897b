package stock_test

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/luagen/luagen/luatest"
	"github.com/luagen/luagen/runtime"
	"github.com/luagen/luagen/stock"
)

// Queue calls on a batch, send it once, then read each call's typed result
// and typed error. On rueidis (runtime.NewRueidisExecutor) and go-redis
// (runtime/goredis) the batch is one round trip per node; offline, as here,
// luatest runs the calls in order.
func ExampleScripts_QueueDeduct() {
	r := luatest.New()
	defer r.Close()
	s := stock.New(r)
	k := stock.KeysFor("shop:", "42")
	r.MustDo("SET", k.Stock, "3")

	var b runtime.Batch
	var sales []*runtime.Future[int64]
	for _, buyer := range []string{"ann", "bob", "cat", "dan"} {
		sales = append(sales, s.QueueDeduct(&b, k.Deduct(), stock.DeductArgs{
			Order: "order-" + buyer, Buyer: buyer, Qty: 1, At: time.UnixMilli(1_700_000_000_000),
		}))
	}
	refund := s.QueueCancel(&b, k.Cancel(), stock.CancelArgs{Order: "order-ann", At: time.UnixMilli(1_700_000_000_000)})
	if err := b.Send(context.Background()); err != nil {
		fmt.Println("first failure:", errors.Is(err, stock.ErrOutOfStock))
	}
	for i, f := range sales {
		left, err := f.Result()
		switch {
		case errors.Is(err, stock.ErrOutOfStock):
			fmt.Printf("sale %d: sold out\n", i)
		case err != nil:
			fmt.Printf("sale %d: %v\n", i, err)
		default:
			fmt.Printf("sale %d: %d left\n", i, left)
		}
	}
	back, err := refund.Result()
	fmt.Println("refund:", back, err)
	// Output:
	// first failure: true
	// sale 0: 2 left
	// sale 1: 1 left
	// sale 2: 0 left
	// sale 3: sold out
	// refund: 1 <nil>
}
