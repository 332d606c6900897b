// Package stock benchmarks stock.Deduct on one redis-server in one run: the
// generated wrapper, raw rueidis.Lua.Exec and go-redis Script.Run with the
// same script and arguments, against the server's own ceiling measured
// with redis-benchmark -P 16; and the wrapper on a local 3+3 cluster with
// one SKU per primary. TestMain prints the table with ratios.
package stock

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	goredis "github.com/redis/go-redis/v9"
	"github.com/redis/rueidis"

	"github.com/luagen/luagen/internal/redistest"
	"github.com/luagen/luagen/runtime"
	"github.com/luagen/luagen/stock"
)

// env is the servers and clients every benchmark of the run shares, made
// on first use and torn down by TestMain.
var env struct {
	once    sync.Once
	dir     string
	srv     *redistest.Server
	rueidis rueidis.Client
	goredis *goredis.Client
	err     error

	clusterOnce sync.Once
	cluster     *redistest.Cluster
	clusterErr  error

	mu      sync.Mutex
	results map[string][]float64 // name → ops/s of each -count run
}

func single(b *testing.B) {
	b.Helper()
	env.once.Do(func() {
		if env.dir, env.err = os.MkdirTemp("", "bench-stock-"); env.err != nil {
			return
		}
		if env.srv, env.err = redistest.StartServer(env.dir); env.err != nil {
			return
		}
		env.rueidis, env.err = rueidis.NewClient(rueidis.ClientOption{InitAddress: []string{env.srv.Addr}, DisableCache: true})
		env.goredis = goredis.NewClient(&goredis.Options{Addr: env.srv.Addr, PoolSize: 128})
	})
	if env.err != nil {
		b.Fatal(env.err)
	}
}

func TestMain(m *testing.M) {
	code := m.Run()
	printTable()
	if env.rueidis != nil {
		env.rueidis.Close()
	}
	if env.goredis != nil {
		env.goredis.Close()
	}
	if env.srv != nil {
		env.srv.Stop()
	}
	if env.cluster != nil {
		env.cluster.Stop()
	}
	if env.dir != "" {
		os.RemoveAll(env.dir)
	}
	os.Exit(code)
}

// stockUnits is more than any run sells, so every call takes the sale
// path: a decrement, a buyer counter and an order record.
const stockUnits = "1000000000000"

// sku returns a fresh SKU with its stock set, so runs do not replay each
// other's order ids.
var skuSeq atomic.Int64

func freshSKU(b *testing.B, c rueidis.Client) stock.SKUKeys {
	b.Helper()
	k := stock.KeysFor("bench:", fmt.Sprintf("sku%d-%d", time.Now().UnixNano(), skuSeq.Add(1)))
	if err := c.Do(context.Background(), c.B().Set().Key(k.Stock).Value(stockUnits).Build()).Error(); err != nil {
		b.Fatal(err)
	}
	return k
}

// parallel runs op from 64 goroutines per core (rueidis pipelines the
// concurrent calls onto one connection) and records ops/s.
func parallel(b *testing.B, name string, op func(ctx context.Context, n int64) error) {
	b.Helper()
	b.ReportAllocs()
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
	if b.Elapsed() > 500*time.Millisecond { // the full run, not a probe for b.N
		record(name, ops)
	}
}

// record keeps the ops/s of a benchmark's final (full b.N) run; with
// -count N there are N of them and the table shows their median.
func record(name string, opsPerSec float64) {
	env.mu.Lock()
	defer env.mu.Unlock()
	if env.results == nil {
		env.results = map[string][]float64{}
	}
	env.results[name] = append(env.results[name], opsPerSec)
}

func args(n int64) stock.DeductArgs {
	id := strconv.FormatInt(n, 10)
	return stock.DeductArgs{Order: "o" + id, Buyer: "u" + id, Qty: 1, At: time.UnixMilli(1_700_000_000_000 + n)}
}

// rawArgs is args as the ARGV strings the script takes.
func rawArgs(n int64) []string {
	a := args(n)
	return []string{a.Order, a.Buyer, "1", "0", strconv.FormatInt(a.At.UnixMilli(), 10)}
}

func BenchmarkDeduct(b *testing.B) {
	b.Run("wrapper", func(b *testing.B) {
		single(b)
		s := stock.New(runtime.Rueidis(env.rueidis))
		k := freshSKU(b, env.rueidis).Deduct()
		parallel(b, "wrapper", func(ctx context.Context, n int64) error {
			_, err := s.Deduct(ctx, k, args(n))
			return err
		})
	})
	b.Run("rueidis", func(b *testing.B) {
		single(b)
		lua := rueidis.NewLuaScript(stock.DeductScript.Body())
		k := freshSKU(b, env.rueidis)
		parallel(b, "rueidis", func(ctx context.Context, n int64) error {
			_, err := lua.Exec(ctx, env.rueidis, []string{k.Stock, k.Orders, k.Buyers}, rawArgs(n)).AsInt64()
			return err
		})
	})
	b.Run("go-redis", func(b *testing.B) {
		single(b)
		script := goredis.NewScript(stock.DeductScript.Body())
		k := freshSKU(b, env.rueidis)
		parallel(b, "go-redis", func(ctx context.Context, n int64) error {
			a := rawArgs(n)
			_, err := script.Run(ctx, env.goredis, []string{k.Stock, k.Orders, k.Buyers}, a[0], a[1], a[2], a[3], a[4]).Int64()
			return err
		})
	})
}

// BenchmarkCeiling runs redis-benchmark -P 16 (16 commands per round trip
// on each of its 50 connections) with EVALSHA of the same script, each
// request with fresh random order and buyer ids: the most deducts per
// second this server can run on this machine. b.N is ignored; the metric
// is what redis-benchmark reports.
func BenchmarkCeiling(b *testing.B) {
	single(b)
	k := freshSKU(b, env.rueidis)
	if err := stock.DeductScript.Load(context.Background(), runtime.Rueidis(env.rueidis)); err != nil {
		b.Fatal(err)
	}
	host, port, _ := strings.Cut(env.srv.Addr, ":")
	cmd := exec.Command("redis-benchmark", "-h", host, "-p", port, "-P", "16", "-c", "50", "-n", "500000",
		"-r", "1000000000000", "-q",
		"EVALSHA", stock.DeductScript.SHA1(), "3", k.Stock, k.Orders, k.Buyers,
		"o__rand_int__", "u__rand_int__", "1", "0", "1700000000000")
	b.ResetTimer()
	out, err := cmd.CombinedOutput()
	b.StopTimer()
	if err != nil {
		b.Fatalf("redis-benchmark: %v\n%s", err, out)
	}
	// -q prints e.g. "EVALSHA ...: 123456.79 requests per second, p50=..."
	m := regexp.MustCompile(`([0-9.]+) requests per second`).FindAllSubmatch(out, -1)
	if len(m) == 0 {
		b.Fatalf("redis-benchmark: no rate in %q", out)
	}
	ops, _ := strconv.ParseFloat(string(m[len(m)-1][1]), 64)
	if left := env.srv.Do(b, "GET", k.Stock); left == stockUnits {
		b.Fatalf("redis-benchmark deducted nothing: %s", out)
	}
	b.ReportMetric(ops, "ops/s")
	record("ceiling", ops)
}

// BenchmarkClusterDeduct3SKUs is the wrapper on a local 3+3 cluster, with
// three SKUs whose hash tags land on the three primaries: total deducts
// per second across the shards.
func BenchmarkClusterDeduct3SKUs(b *testing.B) {
	env.clusterOnce.Do(func() {
		dir, err := os.MkdirTemp("", "bench-cluster-")
		if err != nil {
			env.clusterErr = err
			return
		}
		env.cluster, env.clusterErr = redistest.NewCluster(dir)
	})
	if env.clusterErr != nil {
		b.Fatal(env.clusterErr)
	}
	c := env.cluster
	cl, err := rueidis.NewClient(rueidis.ClientOption{InitAddress: c.Addrs(), DisableCache: true})
	if err != nil {
		b.Fatal(err)
	}
	defer cl.Close()
	s := stock.New(runtime.Rueidis(cl))
	if err := s.Preload(context.Background()); err != nil {
		b.Fatal(err)
	}
	var keys []stock.DeductKeys
	seen := map[*redistest.Server]bool{}
	for i := 0; len(keys) < 3; i++ {
		k := freshSKU(b, cl)
		p, _, err := c.PrimaryOf(runtime.Slot(k.Stock))
		if err != nil {
			b.Fatal(err)
		}
		if !seen[p] {
			seen[p] = true
			keys = append(keys, k.Deduct())
		}
	}
	parallel(b, "cluster 3 SKUs", func(ctx context.Context, n int64) error {
		_, err := s.Deduct(ctx, keys[n%3], args(n))
		return err
	})
}

// BenchmarkAllocs measures allocations of one call, serially: the
// wrapper's extra over raw rueidis is the figure the design bounds (≤ 1).
// It measures once per run; b.N is ignored.
func BenchmarkAllocs(b *testing.B) {
	single(b)
	allocsOnce.Do(func() {
		ctx := context.Background()
		s := stock.New(runtime.Rueidis(env.rueidis))
		lua := rueidis.NewLuaScript(stock.DeductScript.Body())
		k := freshSKU(b, env.rueidis)
		var n int64
		allocs.wrapper = testing.AllocsPerRun(2000, func() {
			n++
			if _, err := s.Deduct(ctx, k.Deduct(), args(n)); err != nil {
				b.Fatal(err)
			}
		})
		allocs.raw = testing.AllocsPerRun(2000, func() {
			n++
			if _, err := lua.Exec(ctx, env.rueidis, []string{k.Stock, k.Orders, k.Buyers}, rawArgs(n)).AsInt64(); err != nil {
				b.Fatal(err)
			}
		})
	})
	b.ReportMetric(allocs.wrapper, "wrapper-allocs/op")
	b.ReportMetric(allocs.raw, "rueidis-allocs/op")
	b.ReportMetric(allocs.wrapper-allocs.raw, "extra-allocs/op")
}

var (
	allocsOnce sync.Once
	allocs     struct{ wrapper, raw float64 }
)

func median(xs []float64) float64 {
	s := slices.Clone(xs)
	slices.Sort(s)
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

func printTable() {
	env.mu.Lock()
	defer env.mu.Unlock()
	if len(env.results) == 0 {
		return
	}
	var ceil float64
	if c := env.results["ceiling"]; len(c) > 0 {
		ceil = median(c)
	}
	fmt.Println()
	fmt.Println("| deduct (sale path: decrement + buyer counter + order record) | ops/s (median) | runs | ratio to ceiling |")
	fmt.Println("|---|---:|---|---:|")
	for _, row := range [][2]string{
		{"ceiling", "redis-benchmark -P 16 -c 50 EVALSHA, one redis-server (ceiling)"},
		{"wrapper", "luagen wrapper stock.Deduct, 128 goroutines, rueidis auto-pipelining"},
		{"rueidis", "raw rueidis.Lua.Exec, same goroutines and client"},
		{"go-redis", "go-redis v9 Script.Run, same goroutines, pool of 128"},
		{"cluster 3 SKUs", "luagen wrapper on the 3+3 cluster, 3 SKUs on 3 primaries (total)"},
	} {
		xs, ok := env.results[row[0]]
		if !ok {
			continue
		}
		ratio := "–"
		if ceil > 0 {
			ratio = fmt.Sprintf("%.2f", median(xs)/ceil)
		}
		runs := make([]string, len(xs))
		for i, x := range xs {
			runs[i] = strconv.FormatFloat(x, 'f', 0, 64)
		}
		fmt.Printf("| %s | %.0f | %s | %s |\n", row[1], median(xs), strings.Join(runs, ", "), ratio)
	}
	if allocs.wrapper > 0 {
		fmt.Printf("\nallocs per call (serial, testing.AllocsPerRun): wrapper %.1f, raw rueidis %.1f, extra %.1f\n",
			allocs.wrapper, allocs.raw, allocs.wrapper-allocs.raw)
	}
}
