package stock

import (
	"context"
	"fmt"
	"sync"
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
		{"rueidis", func() runtime.Executor { return runtime.NewRueidisExecutor(env.rueidis) }},
		{"go-redis", func() runtime.Executor { return goredisexec.NewExecutor(env.goredis) }},
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
			rate := float64(b.N*batchSize) / b.Elapsed().Seconds()
			b.ReportMetric(rate, "deducts/s")
			batchRates.set(ex.name, "sequential", rate)
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
			rate := float64(b.N*batchSize) / b.Elapsed().Seconds()
			b.ReportMetric(rate, "deducts/s")
			batchRates.set(ex.name, "batch", rate)
		})
	}
}

// batchRates keeps BenchmarkBatch's last rates for the table TestMain
// prints: executor → "sequential" or "batch" → deducts/s.
var batchRates rates

type rates struct {
	mu sync.Mutex
	m  map[string]map[string]float64
}

func (r *rates) set(exec, how string, rate float64) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.m == nil {
		r.m = map[string]map[string]float64{}
	}
	if r.m[exec] == nil {
		r.m[exec] = map[string]float64{}
	}
	r.m[exec][how] = rate
}

// print writes one line per executor measured both ways.
func (r *rates) print() {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, exec := range []string{"rueidis", "go-redis"} {
		seq, batch := r.m[exec]["sequential"], r.m[exec]["batch"]
		if seq > 0 && batch > 0 {
			fmt.Printf("1,000 deducts from one goroutine on %s: batch %.0f/s, sequential %.0f/s, batch / sequential %.2f\n", exec, batch, seq, batch/seq)
		}
	}
}
