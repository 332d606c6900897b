// Package stock benchmarks stock.Deduct on one redis-server in one run: the
// generated wrapper on the rueidis and on the go-redis executor, raw
// rueidis.Lua.Exec and go-redis Script.Run with the same script and
// arguments, runtime.Batch, and the wrapper on runtime.NewCoalescer (64
// goroutines on one SKU), against the server's own ceiling measured with
// redis-benchmark -P 16; and the wrapper on a local 3+3 cluster with one SKU
// per primary. TestMain prints the table with ratios, allocations and p99.
package stock

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	goredis "github.com/redis/go-redis/v9"
	"github.com/redis/rueidis"

	"github.com/luagen/luagen/bench/internal/measure"
	"github.com/luagen/luagen/redistest"
	"github.com/luagen/luagen/runtime"
	goredisexec "github.com/luagen/luagen/runtime/goredis"
	"github.com/luagen/luagen/runtime/luagenimpl"
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

	clusterOnce   sync.Once
	clusterDir    string
	cluster       *redistest.Cluster
	clusterClient rueidis.Client
	clusterErr    error
}

func single(b *testing.B) {
	b.Helper()
	env.once.Do(func() {
		if env.dir, env.err = os.MkdirTemp("", "bench-stock-"); env.err != nil {
			return
		}
		if env.srv, env.err = redistest.NewServer(env.dir); env.err != nil {
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
	if env.clusterClient != nil {
		env.clusterClient.Close()
	}
	if env.cluster != nil {
		env.cluster.Stop()
	}
	if env.clusterDir != "" {
		os.RemoveAll(env.clusterDir)
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
func parallel(b *testing.B, op func(ctx context.Context, n int64) error) {
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
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "ops/s")
}

// args is call n's arguments: a fresh order id for one and the same buyer,
// as in the ceiling's requests (which cannot vary the buyer, see ceiling),
// so that every row does the same work per sale.
func args(n int64) stock.DeductArgs {
	return stock.DeductArgs{Order: "o" + strconv.FormatInt(n, 10), Buyer: "u", Qty: 1, At: time.UnixMilli(1_700_000_000_000 + n)}
}

// rawArgs is args as the ARGV strings the script takes.
func rawArgs(n int64) []string {
	a := args(n)
	return []string{a.Order, a.Buyer, "1", "0", strconv.FormatInt(a.At.UnixMilli(), 10)}
}

// The three clients under test, each one deduct per call with the same
// script and arguments.
func wrapperOp(s *stock.Scripts, k stock.SKUKeys) func(context.Context, int64) error {
	dk := k.Deduct()
	return func(ctx context.Context, n int64) error {
		_, err := s.Deduct(ctx, dk, args(n))
		return err
	}
}

func rueidisOp(c rueidis.Client, k stock.SKUKeys) func(context.Context, int64) error {
	lua := rueidis.NewLuaScript(stock.DeductScript().Source())
	return func(ctx context.Context, n int64) error {
		_, err := lua.Exec(ctx, c, []string{k.Stock, k.Orders, k.Buyers}, rawArgs(n)).AsInt64()
		return err
	}
}

func goredisOp(c *goredis.Client, k stock.SKUKeys) func(context.Context, int64) error {
	script := goredis.NewScript(stock.DeductScript().Source())
	return func(ctx context.Context, n int64) error {
		a := rawArgs(n)
		_, err := script.Run(ctx, c, []string{k.Stock, k.Orders, k.Buyers}, a[0], a[1], a[2], a[3], a[4]).Int64()
		return err
	}
}

func BenchmarkDeduct(b *testing.B) {
	b.Run("wrapper", func(b *testing.B) {
		single(b)
		parallel(b, wrapperOp(stock.New(runtime.NewRueidisExecutor(env.rueidis)), freshSKU(b, env.rueidis)))
	})
	b.Run("rueidis", func(b *testing.B) {
		single(b)
		parallel(b, rueidisOp(env.rueidis, freshSKU(b, env.rueidis)))
	})
	b.Run("go-redis", func(b *testing.B) {
		single(b)
		parallel(b, goredisOp(env.goredis, freshSKU(b, env.rueidis)))
	})
	b.Run("coalesced", func(b *testing.B) {
		single(b)
		parallel(b, wrapperOp(stock.New(runtime.NewCoalescer(runtime.NewRueidisExecutor(env.rueidis))), freshSKU(b, env.rueidis)))
	})
	// After go-redis, whose run dials the pool's connections.
	b.Run("wrapper-go-redis", func(b *testing.B) {
		single(b)
		parallel(b, wrapperOp(stock.New(goredisexec.NewExecutor(env.goredis)), freshSKU(b, env.rueidis)))
	})
}

// BenchmarkCeiling runs redis-benchmark -P 16 (16 commands per round trip
// on each of its 50 connections) with EVALSHA of the same script, each
// request a sale with a fresh random order id: the most deducts per second
// this server can run on this machine. The buyer is one and the same, in
// every row too (see args): with random buyers, a repeated random order id
// for another buyer is an ORDER_CONFLICT, which stops redis-benchmark. -r
// stays below 2^31: redis-benchmark reads it with atoi, and
// a larger value makes every "random" id the same, so that all but the
// first request would be answered from the order's record. b.N is ignored;
// the metric is what redis-benchmark reports.
func BenchmarkCeiling(b *testing.B) {
	single(b)
	ops, err := ceiling(b, 500000)
	if err != nil {
		b.Fatal(err)
	}
	b.ReportMetric(ops, "ops/s")
}

func ceiling(b *testing.B, requests int) (float64, error) {
	k := freshSKU(b, env.rueidis)
	if err := stock.DeductScript().Load(context.Background(), runtime.NewRueidisExecutor(env.rueidis)); err != nil {
		return 0, err
	}
	host, port, _ := strings.Cut(env.srv.Addr, ":")
	out, err := exec.Command("redis-benchmark", "-h", host, "-p", port, "-P", "16", "-c", "50",
		"-n", strconv.Itoa(requests), "-r", "2000000000", "-q",
		"EVALSHA", stock.DeductScript().SHA1(), "3", k.Stock, k.Orders, k.Buyers,
		"o__rand_int__", args(0).Buyer, "1", "0", "1700000000000").CombinedOutput()
	if err != nil {
		return 0, fmt.Errorf("redis-benchmark: %v\n%s", err, out)
	}
	// -q prints e.g. "EVALSHA ...: 123456.79 requests per second, p50=..."
	m := regexp.MustCompile(`([0-9.]+) requests per second`).FindAllSubmatch(out, -1)
	if len(m) == 0 {
		return 0, fmt.Errorf("redis-benchmark: no rate in %q", out)
	}
	ops, _ := strconv.ParseFloat(string(m[len(m)-1][1]), 64)
	// Every request must take the sale path: a repeated order id would be
	// answered from its record, which is far cheaper than a sale.
	left, err := strconv.Atoi(env.srv.Do(b, "GET", k.Stock))
	if err != nil {
		return 0, err
	}
	if start, _ := strconv.Atoi(stockUnits); start-left < requests*99/100 {
		return 0, fmt.Errorf("redis-benchmark sold %d of %d requests: %s", start-left, requests, out)
	}
	return ops, nil
}

// timedBatches sends batches of batchSize deducts from one goroutine for
// d: deducts per second, allocations per deduct, and the p99 of a batch's
// round trip (the latency each of its calls sees). Send returns the first
// failed call's error, so the Futures need no reading.
func timedBatches(d time.Duration, s *stock.Scripts, k stock.SKUKeys) (measure.Result, error) {
	dk := k.Deduct()
	ctx := context.Background()
	var lat []time.Duration
	var n int64
	end := measure.Start()
	deadline := time.Now().Add(d)
	for t0 := time.Now(); t0.Before(deadline); t0 = time.Now() {
		var batch runtime.Batch
		for range batchSize {
			n++
			s.QueueDeduct(&batch, dk, args(n))
		}
		if err := batch.Send(ctx); err != nil {
			return measure.Result{}, err
		}
		lat = append(lat, time.Since(t0))
	}
	return end(n, lat), nil
}

// BenchmarkRatios is the table: rounds of the ceiling and every client,
// interleaved so that load from elsewhere on a shared machine hits them
// alike, each client for 1.5 s (raw clients and plain wrappers from 128
// goroutines; the coalesced wrapper, and the plain one for comparison,
// from 64 goroutines on one SKU; batches of 1,000 from one goroutine);
// then the wrapper on the cluster. The ratio of a client is the median over
// rounds of its ops/s divided by that round's ceiling; allocations per call
// are counted under that load (every goroutine and the client's own), and
// p99 is of one call's latency. b.N is ignored; TestMain prints the table.
func BenchmarkRatios(b *testing.B) {
	ratiosOnce.Do(func() {
		single(b)
		const rounds = 5
		s := stock.New(runtime.NewRueidisExecutor(env.rueidis))
		sg := stock.New(goredisexec.NewExecutor(env.goredis))
		sc := stock.New(runtime.NewCoalescer(runtime.NewRueidisExecutor(env.rueidis)))
		sgc := stock.New(runtime.NewCoalescer(goredisexec.NewExecutor(env.goredis)))
		for r := range rounds {
			ceil, err := ceiling(b, 300000)
			if err != nil {
				b.Fatal(err)
			}
			table.add("ceiling", measure.Result{Ops: ceil}, 1)
			variants := []struct {
				name string
				run  func() (measure.Result, error)
			}{
				{"wrapper", goroutines(128, wrapperOp(s, freshSKU(b, env.rueidis)))},
				{"rueidis", goroutines(128, rueidisOp(env.rueidis, freshSKU(b, env.rueidis)))},
				{"go-redis", goroutines(128, goredisOp(env.goredis, freshSKU(b, env.rueidis)))},
				{"wrapper go-redis", goroutines(128, wrapperOp(sg, freshSKU(b, env.rueidis)))},
				{"wrapper 64", goroutines(64, wrapperOp(s, freshSKU(b, env.rueidis)))},
				{"coalesced", goroutines(64, wrapperOp(sc, freshSKU(b, env.rueidis)))},
				{"coalesced go-redis", goroutines(64, wrapperOp(sgc, freshSKU(b, env.rueidis)))},
				{"batch", func() (measure.Result, error) {
					return timedBatches(1500*time.Millisecond, s, freshSKU(b, env.rueidis))
				}},
			}
			round := map[string]float64{}
			for i := range variants { // rotate the order each round
				v := variants[(i+r)%len(variants)]
				m, err := v.run()
				if err != nil {
					b.Fatalf("%s: %v", v.name, err)
				}
				table.add(v.name, m, m.Ops/ceil)
				round[v.name] = m.Ops
			}
			table.add("wrapper go-redis / Script.Run", measure.Result{}, round["wrapper go-redis"]/round["go-redis"])
			table.add("wrapper / rueidis", measure.Result{}, round["wrapper"]/round["rueidis"])
		}
		c, keys := clusterSKUs(b)
		for range 3 {
			m, err := measure.Timed(2*time.Second, 128, func(ctx context.Context, n int64) error {
				_, err := c.Deduct(ctx, keys[n%3], args(n))
				return err
			})
			if err != nil {
				b.Fatal(err)
			}
			table.add("cluster 3 SKUs", m, 0)
		}
	})
}

var (
	ratiosOnce sync.Once
	table      results
)

// results are the rounds of BenchmarkRatios: name → ops/s and ratio to
// the round's ceiling, one per round.
type results struct {
	mu     sync.Mutex
	ops    map[string][]float64
	ratios map[string][]float64
	allocs map[string][]float64
	p99    map[string][]float64 // µs
}

func (r *results) add(name string, m measure.Result, ratio float64) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.ops == nil {
		r.ops, r.ratios = map[string][]float64{}, map[string][]float64{}
		r.allocs, r.p99 = map[string][]float64{}, map[string][]float64{}
	}
	r.ops[name] = append(r.ops[name], m.Ops)
	r.ratios[name] = append(r.ratios[name], ratio)
	r.allocs[name] = append(r.allocs[name], m.Allocs)
	r.p99[name] = append(r.p99[name], float64(m.P99.Microseconds()))
}

// goroutines is a timed run of op from n goroutines for 1.5 s.
func goroutines(n int, op func(context.Context, int64) error) func() (measure.Result, error) {
	return func() (measure.Result, error) { return measure.Timed(1500*time.Millisecond, n, op) }
}

// BenchmarkClusterDeduct3SKUs is the wrapper on a local 3+3 cluster, with
// three SKUs whose hash tags land on the three primaries: total deducts
// per second across the shards.
func BenchmarkClusterDeduct3SKUs(b *testing.B) {
	s, keys := clusterSKUs(b)
	parallel(b, func(ctx context.Context, n int64) error {
		_, err := s.Deduct(ctx, keys[n%3], args(n))
		return err
	})
}

// clusterSKUs starts the run's cluster on first use and returns scripts
// on a cluster client (preloaded) and three fresh SKUs, one per primary.
func clusterSKUs(b *testing.B) (*stock.Scripts, []stock.DeductKeys) {
	b.Helper()
	env.clusterOnce.Do(func() {
		dir, err := os.MkdirTemp("", "bench-cluster-")
		if err != nil {
			env.clusterErr = err
			return
		}
		env.clusterDir = dir
		if env.cluster, env.clusterErr = redistest.NewCluster(dir); env.clusterErr != nil {
			return
		}
		env.clusterClient, env.clusterErr = rueidis.NewClient(rueidis.ClientOption{InitAddress: env.cluster.Addrs(), DisableCache: true})
	})
	if env.clusterErr != nil {
		b.Fatal(env.clusterErr)
	}
	s := stock.New(runtime.NewRueidisExecutor(env.clusterClient))
	if err := s.Preload(context.Background()); err != nil {
		b.Fatal(err)
	}
	var keys []stock.DeductKeys
	seen := map[*redistest.Server]bool{}
	for len(keys) < 3 {
		k := freshSKU(b, env.clusterClient)
		p, _, err := env.cluster.PrimaryOf(runtime.Slot(k.Stock))
		if err != nil {
			b.Fatal(err)
		}
		if !seen[p] {
			seen[p] = true
			keys = append(keys, k.Deduct())
		}
	}
	return s, keys
}

// BenchmarkAllocs measures allocations of one call, serially: the
// wrapper's extra over raw rueidis is the figure the design bounds (≤ 1).
// It measures once per run; b.N is ignored.
func BenchmarkAllocs(b *testing.B) {
	single(b)
	allocsOnce.Do(func() {
		ctx := context.Background()
		s := stock.New(runtime.NewRueidisExecutor(env.rueidis))
		lua := rueidis.NewLuaScript(stock.DeductScript().Source())
		k := freshSKU(b, env.rueidis)
		var n int64
		// Warm up: the client's first calls grow its buffers.
		for range 1000 {
			n++
			if _, err := s.Deduct(ctx, k.Deduct(), args(n)); err != nil {
				b.Fatal(err)
			}
		}
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
		// The wrapper's own cost, arguments built once outside the loop:
		// typed for the wrapper, strings for rueidis (same order id, so
		// every call after the first replays its recorded outcome).
		dk, da := k.Deduct(), args(0)
		rk, ra := []string{k.Stock, k.Orders, k.Buyers}, rawArgs(0)
		allocs.fixedWrapper = testing.AllocsPerRun(2000, func() {
			if _, err := s.Deduct(ctx, dk, da); err != nil {
				b.Fatal(err)
			}
		})
		allocs.fixedRaw = testing.AllocsPerRun(2000, func() {
			if _, err := lua.Exec(ctx, env.rueidis, rk, ra).AsInt64(); err != nil {
				b.Fatal(err)
			}
		})
		// A plain script without keys or arguments: runtime.Script.Exec
		// and the decoder, which is all a generated method does for it.
		plain := runtime.NewScript(runtime.ScriptSpec{Name: "bench.Plain", File: "plain.lua", Body: "return 1"})
		plainLua := rueidis.NewLuaScript(plain.Source())
		e := runtime.NewRueidisExecutor(env.rueidis)
		allocs.plainWrapper = testing.AllocsPerRun(2000, func() {
			v, err := plain.Exec(ctx, e, nil, nil)
			if err == nil {
				_, err = luagenimpl.Int64(plain, v)
			}
			if err != nil {
				b.Fatal(err)
			}
		})
		allocs.plainRaw = testing.AllocsPerRun(2000, func() {
			if _, err := plainLua.Exec(ctx, env.rueidis, nil, nil).AsInt64(); err != nil {
				b.Fatal(err)
			}
		})
		sg := stock.New(goredisexec.NewExecutor(env.goredis))
		allocs.goWrapper = testing.AllocsPerRun(2000, func() {
			n++
			if _, err := sg.Deduct(ctx, k.Deduct(), args(n)); err != nil {
				b.Fatal(err)
			}
		})
		script := goredis.NewScript(stock.DeductScript().Body())
		allocs.goRaw = testing.AllocsPerRun(2000, func() {
			n++
			a := rawArgs(n)
			if _, err := script.Run(ctx, env.goredis, []string{k.Stock, k.Orders, k.Buyers}, a[0], a[1], a[2], a[3], a[4]).Int64(); err != nil {
				b.Fatal(err)
			}
		})
	})
	b.ReportMetric(allocs.wrapper, "wrapper-allocs/op")
	b.ReportMetric(allocs.raw, "rueidis-allocs/op")
	b.ReportMetric(allocs.wrapper-allocs.raw, "extra-allocs/op")
	b.ReportMetric(allocs.fixedWrapper, "fixed-args-wrapper-allocs/op")
	b.ReportMetric(allocs.fixedRaw, "fixed-args-rueidis-allocs/op")
	b.ReportMetric(allocs.plainWrapper, "plain-wrapper-allocs/op")
	b.ReportMetric(allocs.plainRaw, "plain-rueidis-allocs/op")
	b.ReportMetric(allocs.goWrapper, "go-redis-wrapper-allocs/op")
	b.ReportMetric(allocs.goRaw, "go-redis-Script.Run-allocs/op")
}

var (
	allocsOnce sync.Once
	allocs     struct {
		wrapper, raw, goWrapper, goRaw float64
		fixedWrapper, fixedRaw         float64 // arguments built once
		plainWrapper, plainRaw         float64 // "return 1"
	}
)

func printTable() {
	batchRates.print()
	table.mu.Lock()
	defer table.mu.Unlock()
	if len(table.ops) == 0 {
		return
	}
	fmt.Println()
	fmt.Printf("deduct, sale path (decrement + buyer counter + order record); %d interleaved rounds, medians\n\n", len(table.ops["ceiling"]))
	fmt.Println("| what | ops/s | ratio to ceiling | allocs/op under load | p99 latency | ops/s per round |")
	fmt.Println("|---|---:|---:|---:|---:|---|")
	for _, row := range [][2]string{
		{"ceiling", "redis-benchmark -P 16 -c 50 EVALSHA, one redis-server (the ceiling)"},
		{"rueidis", "raw rueidis.Lua.Exec, 128 goroutines, one client"},
		{"wrapper", "luagen wrapper stock.Deduct, same goroutines, same client"},
		{"go-redis", "go-redis v9 Script.Run, 128 goroutines, pool of 128"},
		{"wrapper go-redis", "luagen wrapper stock.Deduct on goredis.NewExecutor, same go-redis client"},
		{"batch", "luagen runtime.Batch of 1,000 QueueDeducts, one goroutine (p99 of a batch)"},
		{"wrapper 64", "luagen wrapper stock.Deduct, 64 goroutines, one SKU"},
		{"coalesced", "luagen wrapper on runtime.NewCoalescer(rueidis), 64 goroutines, one SKU"},
		{"coalesced go-redis", "luagen wrapper on runtime.NewCoalescer(goredis.NewExecutor), 64 goroutines, one SKU"},
		{"cluster 3 SKUs", "luagen wrapper, 3+3 cluster, 3 SKUs on 3 primaries (total), 128 goroutines"},
	} {
		xs, ok := table.ops[row[0]]
		if !ok {
			continue
		}
		ratio, allocsCol, p99Col := "–", "–", "–"
		if row[0] != "cluster 3 SKUs" {
			ratio = fmt.Sprintf("%.2f", measure.Median(table.ratios[row[0]]))
		}
		if row[0] != "ceiling" {
			allocsCol = fmt.Sprintf("%.1f", measure.Median(table.allocs[row[0]]))
			p99Col = fmt.Sprintf("%.0f µs", measure.Median(table.p99[row[0]]))
		}
		runs := make([]string, len(xs))
		for i, x := range xs {
			runs[i] = strconv.FormatFloat(x, 'f', 0, 64)
		}
		fmt.Printf("| %s | %.0f | %s | %s | %s | %s |\n", row[1], measure.Median(xs), ratio, allocsCol, p99Col, strings.Join(runs, ", "))
	}
	if rs := table.ratios["wrapper / rueidis"]; len(rs) > 0 {
		fmt.Printf("\nwrapper / raw rueidis: %.2f (median of per-round ratios)\n", measure.Median(rs))
	}
	if rs := table.ratios["wrapper go-redis / Script.Run"]; len(rs) > 0 {
		per := make([]string, len(rs))
		for i, x := range rs {
			per[i] = strconv.FormatFloat(x, 'f', 2, 64)
		}
		fmt.Printf("wrapper on the go-redis executor / go-redis Script.Run: %.2f (median of per-round ratios: %s)\n", measure.Median(rs), strings.Join(per, ", "))
	}
	if allocs.wrapper > 0 {
		fmt.Printf("allocs per call (serial, testing.AllocsPerRun): wrapper %.1f, raw rueidis %.1f, extra %.1f\n",
			allocs.wrapper, allocs.raw, allocs.wrapper-allocs.raw)
		fmt.Printf("allocs per call, arguments built once: wrapper %.1f (KEYS, ARGV and their digits in one allocation), raw rueidis %.1f; plain script: wrapper %.1f, raw rueidis %.1f\n",
			allocs.fixedWrapper, allocs.fixedRaw, allocs.plainWrapper, allocs.plainRaw)
		fmt.Printf("allocs per call, go-redis: wrapper on goredis.NewExecutor %.1f, Script.Run %.1f, extra %.1f\n",
			allocs.goWrapper, allocs.goRaw, allocs.goWrapper-allocs.goRaw)
	}
}
