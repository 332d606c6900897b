package stock

import (
	"context"
	"testing"

	"github.com/luagen/luagen/runtime"
	goredisexec "github.com/luagen/luagen/runtime/goredis"
	"github.com/luagen/luagen/stock"
)

// batchSize is how many deducts one goroutine sends per batch.
const batchSize = 1000

// BenchmarkBatch is 1,000 deducts from one goroutine: queued on a
// runtime.Batch and sent at once (one round trip, plus the server's time
// to run 1,000 scripts), against 1,000 sequential calls (1,000 round
// trips), on each executor. One op is 1,000 deducts; deducts/s is the rate.
//
//	go test -run '^$' -bench Batch -benchtime 20x
func BenchmarkBatch(b *testing.B) {
	for _, ex := range []struct {
		name string
		exec func() runtime.Executor
	}{
		{"rueidis", func() runtime.Executor { return runtime.Rueidis(env.rueidis) }},
		{"go-redis", func() runtime.Executor { return goredisexec.New(env.goredis) }},
	} {
		b.Run(ex.name+"/sequential", func(b *testing.B) {
			single(b)
			s := stock.New(ex.exec())
			dk := freshSKU(b, env.rueidis).Deduct()
			ctx := context.Background()
			var n int64
			b.ReportAllocs()
			b.ResetTimer()
			for range b.N {
				for range batchSize {
					n++
					if _, err := s.Deduct(ctx, dk, args(n)); err != nil {
						b.Fatal(err)
					}
				}
			}
			b.ReportMetric(float64(b.N*batchSize)/b.Elapsed().Seconds(), "deducts/s")
		})
		b.Run(ex.name+"/batch", func(b *testing.B) {
			single(b)
			s := stock.New(ex.exec())
			dk := freshSKU(b, env.rueidis).Deduct()
			ctx := context.Background()
			var n int64
			fs := make([]*runtime.Future[int64], batchSize)
			b.ReportAllocs()
			b.ResetTimer()
			for range b.N {
				var batch runtime.Batch
				for i := range fs {
					n++
					fs[i] = s.QueueDeduct(&batch, dk, args(n))
				}
				if err := batch.Send(ctx); err != nil {
					b.Fatal(err)
				}
				for _, f := range fs {
					if _, err := f.Result(); err != nil {
						b.Fatal(err)
					}
				}
			}
			b.ReportMetric(float64(b.N*batchSize)/b.Elapsed().Seconds(), "deducts/s")
		})
	}
}
