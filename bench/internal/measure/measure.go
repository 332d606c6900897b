// Package measure times the benchmarks' runs: calls per second, heap
// allocations per call and the 99th percentile of one call's latency,
// from many goroutines for a fixed time, and the medians the tables print.
package measure

import (
	"context"
	goruntime "runtime"
	"slices"
	"sync"
	"sync/atomic"
	"time"
)

// Result is one timed run: calls per second, heap allocations per call
// (runtime.MemStats.Mallocs over the run, every goroutine and the client's
// own included, divided by the calls), the CPU time this process spent per
// call (user and system, getrusage(2) RUSAGE_SELF: the client's cost,
// whatever else runs on the machine; 0 where getrusage is missing), and
// the 99th percentile of one call's latency.
type Result struct {
	Ops, Allocs float64
	CPU, P99    time.Duration
}

// Start starts a timed run; the function it returns ends the run, which
// made calls calls with latencies lat (lat may be nil).
func Start() (end func(calls int64, lat []time.Duration) Result) {
	var before goruntime.MemStats
	goruntime.ReadMemStats(&before)
	cpu0 := processCPU()
	start := time.Now()
	return func(calls int64, lat []time.Duration) Result {
		elapsed := time.Since(start)
		cpu := processCPU() - cpu0
		var after goruntime.MemStats
		goruntime.ReadMemStats(&after)
		return Result{
			Ops:    float64(calls) / elapsed.Seconds(),
			Allocs: float64(after.Mallocs-before.Mallocs) / float64(calls),
			CPU:    cpu / time.Duration(max(calls, 1)),
			P99:    P99(lat),
		}
	}
}

// Timed runs op from goroutines goroutines for d, each call with the next
// number of a sequence shared by all of them (from 1). The first error op
// returns stops its goroutine and is returned.
func Timed(d time.Duration, goroutines int, op func(ctx context.Context, n int64) error) (Result, error) {
	var seq atomic.Int64
	var failed atomic.Value
	lat := make([][]time.Duration, goroutines)
	end := Start()
	deadline := time.Now().Add(d)
	var wg sync.WaitGroup
	for g := range goroutines {
		wg.Add(1)
		go func() {
			defer wg.Done()
			ctx := context.Background()
			own := make([]time.Duration, 0, 1<<14)
			for t0 := time.Now(); t0.Before(deadline); t0 = time.Now() {
				if err := op(ctx, seq.Add(1)); err != nil {
					failed.CompareAndSwap(nil, err)
					return
				}
				own = append(own, time.Since(t0))
			}
			lat[g] = own
		}()
	}
	wg.Wait()
	m := end(seq.Load(), slices.Concat(lat...))
	if err, ok := failed.Load().(error); ok {
		return Result{}, err
	}
	return m, nil
}

// P99 is the 99th percentile of xs (sorted in place); 0 for none.
func P99(xs []time.Duration) time.Duration {
	if len(xs) == 0 {
		return 0
	}
	slices.Sort(xs)
	return xs[len(xs)*99/100]
}

// Median is the median of xs (a copy is sorted); 0 for none.
func Median(xs []float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	s := slices.Clone(xs)
	slices.Sort(s)
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}
