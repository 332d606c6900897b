package goredis_test

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/luagen/luagen/runtime/goredis"
	"github.com/luagen/luagen/stock"
)

// A generated package runs on the go-redis client a service already has:
// one address gives a *redis.Client, several a *redis.ClusterClient.
func Example() {
	rdb := redis.NewUniversalClient(&redis.UniversalOptions{Addrs: []string{"127.0.0.1:6379"}})
	defer rdb.Close()
	s := stock.New(goredis.NewExecutor(rdb))

	ctx := context.Background()
	_ = s.Preload(ctx) // optional: saves the EVAL after the first NOSCRIPT
	left, err := s.Deduct(ctx, stock.KeysFor("seckill:", "42").Deduct(),
		stock.DeductArgs{Order: "o1", Buyer: "u7", Qty: 1, At: time.Now()})
	switch {
	case errors.Is(err, stock.ErrOutOfStock):
		fmt.Println("sold out")
	case err != nil:
		fmt.Println("error:", err)
	default:
		fmt.Println(left, "left")
	}
}
