// Package wire benchmarks luatest's server (package luatest/server)
// against miniredis and a loopback redis-server in one run: stock.Deduct
// through the rueidis and the go-redis executor from 64 goroutines, and a
// pipeline of 100 SET/GET. TestMain prints each row's calls per second and
// its ratios to miniredis and to redis-server; LUAGEN_BENCH_LAYOUT
// (split, the default, or shared) places redis-server's process (see
// bench/internal/layout; luatest and miniredis run in this process).
package wire

import (
	"context"
	"fmt"
	"os"
	"sort"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/alicebob/miniredis/v2"
	goredis "github.com/redis/go-redis/v9"
	"github.com/redis/rueidis"

	"github.com/luagen/luagen/bench/internal/layout"
	"github.com/luagen/luagen/luatest"
	"github.com/luagen/luagen/luatest/server"
	"github.com/luagen/luagen/redistest"
	"github.com/luagen/luagen/runtime"
	goredisexec "github.com/luagen/luagen/runtime/goredis"
	"github.com/luagen/luagen/stock"
)

// target is one server the rows run against.
type target struct {
	name string
	addr string
	// shebang is false for miniredis, which refuses the Redis 7 shebang
	// of stock's scripts: its executors are wrapped in WithoutShebang.
	shebang bool
}

var env struct {
	once    sync.Once
	err     error
	layout  string
	targets []target
	closers []func()
}

func setup(b *testing.B) []target {
	b.Helper()
	env.once.Do(func() {
		dir, err := os.MkdirTemp("", "bench-wire-")
		if err != nil {
			env.err = err
			return
		}
		env.closers = append(env.closers, func() { os.RemoveAll(dir) })
		real, err := redistest.NewServer(dir)
		if err != nil {
			env.err = err
			return
		}
		env.closers = append(env.closers, real.Stop)
		if env.layout, env.err = layout.Apply(real.PID()); env.err != nil {
			return
		}
		r := luatest.New(luatest.WithWallClock(), luatest.WithCallLog(0))
		lt, err := server.New(r)
		if err != nil {
			env.err = err
			return
		}
		env.closers = append(env.closers, func() { lt.Close(); r.Close() })
		mr := miniredis.NewMiniRedis()
		if env.err = mr.Start(); env.err != nil {
			return
		}
		env.closers = append(env.closers, mr.Close)
		env.targets = []target{{"luatest", lt.Addr(), true}, {"miniredis", mr.Addr(), false}, {"redis-server", real.Addr, true}}
	})
	if env.err != nil {
		b.Fatal(env.err)
	}
	return env.targets
}

// results holds ops/s by row and target, for the table.
var results = struct {
	sync.Mutex
	m map[string]map[string]float64
}{m: map[string]map[string]float64{}}

func record(row, target string, ops float64) {
	results.Lock()
	defer results.Unlock()
	if results.m[row] == nil {
		results.m[row] = map[string]float64{}
	}
	results.m[row][target] = ops
}

func TestMain(m *testing.M) {
	code := m.Run()
	printTable()
	for i := len(env.closers) - 1; i >= 0; i-- {
		env.closers[i]()
	}
	os.Exit(code)
}

func printTable() {
	if len(results.m) == 0 {
		return
	}
	fmt.Printf("\nlayout: %s\n\n| row | luatest ops/s | miniredis ops/s | redis-server ops/s | luatest / miniredis | luatest / redis-server |\n|---|---|---|---|---|---|\n", env.layout)
	rows := make([]string, 0, len(results.m))
	for r := range results.m {
		rows = append(rows, r)
	}
	sort.Strings(rows)
	for _, r := range rows {
		m := results.m[r]
		fmt.Printf("| %s | %.0f | %.0f | %.0f | %.2f | %.2f |\n", r, m["luatest"], m["miniredis"], m["redis-server"],
			m["luatest"]/m["miniredis"], m["luatest"]/m["redis-server"])
	}
}

// parallel runs op from 64 goroutines per GOMAXPROCS and records ops/s.
func parallel(b *testing.B, row, target string, op func(ctx context.Context, n int64) error) {
	b.Helper()
	b.SetParallelism(64)
	var seq atomic.Int64
	var failed atomic.Value
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		ctx := context.Background()
		for pb.Next() {
			if err := op(ctx, seq.Add(1)); err != nil {
				failed.CompareAndSwap(nil, err)
			}
		}
	})
	b.StopTimer()
	if err, ok := failed.Load().(error); ok {
		b.Fatal(err)
	}
	ops := float64(b.N) / b.Elapsed().Seconds()
	b.ReportMetric(ops, "ops/s")
	record(row, target, ops)
}

// deductSetup gives each target a fresh SKU with more stock than any run
// sells.
var skuSeq atomic.Int64

func freshSKU(b *testing.B, ctx context.Context, c rueidis.Client) stock.SKUKeys {
	k := stock.KeysFor("bench:", fmt.Sprintf("sku%d-%d", time.Now().UnixNano(), skuSeq.Add(1)))
	if err := c.Do(ctx, c.B().Set().Key(k.Stock).Value("1000000000000").Build()).Error(); err != nil {
		b.Fatal(err)
	}
	return k
}

func deductArgs(n int64) stock.DeductArgs {
	return stock.DeductArgs{Order: "o" + strconv.FormatInt(n, 10), Buyer: "u", Qty: 1, At: time.UnixMilli(1_700_000_000_000 + n)}
}

func executor(t target, e runtime.Executor) runtime.Executor {
	if !t.shebang {
		return runtime.WithoutShebang(e)
	}
	return e
}

func BenchmarkDeductRueidis(b *testing.B) {
	for _, t := range setup(b) {
		b.Run(t.name, func(b *testing.B) {
			ctx := context.Background()
			c, err := rueidis.NewClient(rueidis.ClientOption{InitAddress: []string{t.addr}, DisableCache: true})
			if err != nil {
				b.Fatal(err)
			}
			defer c.Close()
			k := freshSKU(b, ctx, c).Deduct()
			s := stock.New(executor(t, runtime.NewRueidisExecutor(c)))
			parallel(b, "Deduct, rueidis, 64 goroutines", t.name, func(ctx context.Context, n int64) error {
				_, err := s.Deduct(ctx, k, deductArgs(n))
				return err
			})
		})
	}
}

func BenchmarkDeductGoRedis(b *testing.B) {
	for _, t := range setup(b) {
		b.Run(t.name, func(b *testing.B) {
			ctx := context.Background()
			rc, err := rueidis.NewClient(rueidis.ClientOption{InitAddress: []string{t.addr}, DisableCache: true})
			if err != nil {
				b.Fatal(err)
			}
			k := freshSKU(b, ctx, rc).Deduct()
			rc.Close()
			c := goredis.NewClient(&goredis.Options{Addr: t.addr, PoolSize: 128})
			defer c.Close()
			s := stock.New(executor(t, goredisexec.NewExecutor(c)))
			parallel(b, "Deduct, go-redis, 64 goroutines", t.name, func(ctx context.Context, n int64) error {
				_, err := s.Deduct(ctx, k, deductArgs(n))
				return err
			})
		})
	}
}

func BenchmarkPipeline100(b *testing.B) {
	for _, t := range setup(b) {
		b.Run(t.name, func(b *testing.B) {
			ctx := context.Background()
			c, err := rueidis.NewClient(rueidis.ClientOption{InitAddress: []string{t.addr}, DisableCache: true})
			if err != nil {
				b.Fatal(err)
			}
			defer c.Close()
			cmds := make(rueidis.Commands, 0, 100)
			for i := range 50 {
				key := "p" + strconv.Itoa(i)
				cmds = append(cmds, c.B().Set().Key(key).Value("v").Build().Pin(), c.B().Get().Key(key).Build().Pin())
			}
			b.ResetTimer()
			for range b.N {
				for _, r := range c.DoMulti(ctx, cmds...) {
					if err := r.Error(); err != nil {
						b.Fatal(err)
					}
				}
			}
			b.StopTimer()
			ops := float64(b.N) / b.Elapsed().Seconds()
			b.ReportMetric(ops, "pipelines/s")
			record("pipeline of 100 SET/GET (pipelines/s)", t.name, ops)
		})
	}
}
