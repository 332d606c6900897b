package luatest_test

// BenchmarkDeduct runs lua/stock/deduct.lua through the generated
// stock.Deduct wrapper on three executors in the same run: luatest
// (in process, no network), miniredis over loopback, and a real
// redis-server over loopback. Only this external test package imports
// stock/; the luatest package itself knows no script.

import (
	"context"
	"strconv"
	"testing"
	"time"

	"github.com/alicebob/miniredis/v2"
	"github.com/redis/rueidis"

	"github.com/luagen/luagen/luatest"
	"github.com/luagen/luagen/redistest"
	"github.com/luagen/luagen/runtime"
	"github.com/luagen/luagen/stock"
)

func BenchmarkDeduct(b *testing.B) {
	keys := stock.KeysFor("seckill:", "42").Deduct()
	const units = "1000000000000"
	run := func(b *testing.B, s *stock.Scripts) {
		ctx := context.Background()
		// Each call is a new order (a repeated order id would only read its
		// record): the sale path, as before.
		args := func(i int) stock.DeductArgs {
			return stock.DeductArgs{Order: "o" + strconv.Itoa(i), Buyer: "u7", Qty: 1, At: time.UnixMilli(1_700_000_000_123)}
		}
		if _, err := s.Deduct(ctx, keys, args(-1)); err != nil { // warm the script cache
			b.Fatal(err)
		}
		b.ReportAllocs()
		b.ResetTimer()
		for i := range b.N {
			if _, err := s.Deduct(ctx, keys, args(i)); err != nil {
				b.Fatal(err)
			}
		}
	}
	b.Run("luatest", func(b *testing.B) {
		r := luatest.Start(b)
		r.Set(keys.Stock, units)
		run(b, stock.New(r))
	})
	b.Run("miniredis", func(b *testing.B) {
		m := miniredis.RunT(b)
		m.Set(keys.Stock, units)
		c, err := rueidis.NewClient(rueidis.ClientOption{InitAddress: []string{m.Addr()}, DisableCache: true, ForceSingleClient: true})
		if err != nil {
			b.Fatal(err)
		}
		defer c.Close()
		// miniredis rejects the "#!lua" shebang line.
		run(b, stock.New(runtime.WithoutShebang(runtime.NewRueidisExecutor(c))))
	})
	b.Run("redis-server", func(b *testing.B) {
		srv := redistest.Start(b)
		srv.Do(b, "SET", keys.Stock, units)
		run(b, stock.New(runtime.NewRueidisExecutor(srv.Client(b))))
	})
}
