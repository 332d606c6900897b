package plain

// BenchmarkClientCost is what the generated wrapper costs the client per
// call: take.lua (a plain script: GET, DECRBY, SETEX, no shebang) and
// take_shebang.lua (the same with "#!lua"), each sent four ways in the same
// run — the generated wrapper on the rueidis executor, raw rueidis
// Lua.Exec, the wrapper on the go-redis executor and raw go-redis
// Script.Run — with the same key and arguments, from 64 goroutines. Each
// way is compared with its raw peer in pairs: in every round each pair
// runs as four slices of 750 ms, peer order A B B A in even rounds and
// B A A B in odd ones, so that load from elsewhere and any drift of the
// machine within the pair's 3 s hit both ways alike; the pairs' order
// rotates from round to round. A fifth pair runs raw rueidis against
// itself (A/A): its ratios are the measurement's own noise, printed beside
// the others. The rounds run in the CPU layout LUAGEN_BENCH_LAYOUT names
// (split by default: redis-server on a CPU of its own, so that the
// client's own cost shows; shared: both on every CPU), see package
// bench/internal/layout. TestMain prints the table: median calls/s,
// allocations and client CPU time per call of each way (this process's
// CPU time, which holds even on a busy machine), and the wrapper/raw ratio
// of every round with its median, the figure the client-cost issue bounds
// (>= 0.97).
// b.N is ignored.
//
//	cd bench && go test -run '^$' -bench ClientCost ./plain/
//	cd bench && LUAGEN_BENCH_LAYOUT=shared go test -run '^$' -bench ClientCost ./plain/

import (
	"context"
	"fmt"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	goredis "github.com/redis/go-redis/v9"
	"github.com/redis/rueidis"

	"github.com/luagen/luagen/bench/internal/layout"
	"github.com/luagen/luagen/bench/internal/measure"
	"github.com/luagen/luagen/redistest"
	"github.com/luagen/luagen/runtime"
	goredisexec "github.com/luagen/luagen/runtime/goredis"
)

const (
	rounds     = 9
	goroutines = 64
	slice      = 750 * time.Millisecond // a pair's slice: each way runs two per round
)

var env struct {
	srv     *redistest.Server
	rueidis rueidis.Client
	goredis *goredis.Client
	layout  string
}

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "bench-plain-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	code := func() int {
		defer os.RemoveAll(dir)
		if env.srv, err = redistest.NewServer(dir); err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
		defer env.srv.Stop()
		if env.layout, err = layout.Apply(env.srv.PID()); err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
		// Both clients with their default options, as a service would
		// start them.
		if env.rueidis, err = rueidis.NewClient(rueidis.ClientOption{InitAddress: []string{env.srv.Addr}}); err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
		defer env.rueidis.Close()
		env.goredis = goredis.NewClient(&goredis.Options{Addr: env.srv.Addr})
		defer env.goredis.Close()
		code := m.Run()
		costs.print()
		return code
	}()
	os.Exit(code)
}

// way is one way of sending a script: its row name and the op a timed run
// calls, made for a fresh counter.
type way struct {
	name string
	op   func(key string) func(ctx context.Context, n int64) error
}

// ways are the eight rows, both scripts sent four ways each.
func ways() []way {
	s := New(runtime.NewRueidisExecutor(env.rueidis))
	sg := New(goredisexec.NewExecutor(env.goredis))
	var out []way
	for _, sc := range []struct {
		name   string
		script *runtime.Script
		call   func(s *Scripts, ctx context.Context, key string) (int64, error)
	}{
		{"plain", TakeScript(), func(s *Scripts, ctx context.Context, key string) (int64, error) {
			return s.Take(ctx, TakeKeys{Counter: key}, TakeArgs{Qty: 1, TTL: time.Hour})
		}},
		{"shebang", TakeShebangScript(), func(s *Scripts, ctx context.Context, key string) (int64, error) {
			return s.TakeShebang(ctx, TakeShebangKeys{Counter: key}, TakeShebangArgs{Qty: 1, TTL: time.Hour})
		}},
	} {
		lua := rueidis.NewLuaScript(sc.script.Source())
		script := goredis.NewScript(sc.script.Source())
		wrapper := func(s *Scripts) func(string) func(context.Context, int64) error {
			return func(key string) func(context.Context, int64) error {
				return func(ctx context.Context, _ int64) error {
					_, err := sc.call(s, ctx, key)
					return err
				}
			}
		}
		out = append(out,
			way{sc.name + " wrapper", wrapper(s)},
			way{sc.name + " rueidis Lua.Exec", func(key string) func(context.Context, int64) error {
				return func(ctx context.Context, _ int64) error {
					return lua.Exec(ctx, env.rueidis, []string{key}, []string{"1", "3600"}).Error()
				}
			}},
			way{sc.name + " wrapper go-redis", wrapper(sg)},
			way{sc.name + " go-redis Script.Run", func(key string) func(context.Context, int64) error {
				return func(ctx context.Context, _ int64) error {
					return script.Run(ctx, env.goredis, []string{key}, "1", "3600").Err()
				}
			}},
		)
	}
	return out
}

var counterSeq atomic.Int64

// freshCounter is a new counter holding more units than any run takes.
func freshCounter(b *testing.B) string {
	b.Helper()
	key := fmt.Sprintf("bench:plain:%d:%d", time.Now().UnixNano(), counterSeq.Add(1))
	if err := env.rueidis.Do(context.Background(), env.rueidis.B().Set().Key(key).Value("1000000000000000").Build()).Error(); err != nil {
		b.Fatal(err)
	}
	return key
}

// aa is the A/A pair's first way: raw rueidis again, under another name.
const aa = "plain rueidis Lua.Exec (A/A)"

// pairs are the ratios BenchmarkClientCost reports: each way against its
// raw peer, and raw rueidis against itself (A/A).
var pairs = [][2]string{
	{"plain wrapper", "plain rueidis Lua.Exec"},
	{"plain wrapper go-redis", "plain go-redis Script.Run"},
	{"shebang wrapper", "shebang rueidis Lua.Exec"},
	{"shebang wrapper go-redis", "shebang go-redis Script.Run"},
	{aa, "plain rueidis Lua.Exec"},
}

func BenchmarkClientCost(b *testing.B) {
	costsOnce.Do(func() {
		ws := ways()
		byName := map[string]way{}
		for _, w := range ws { // warm up every client and script cache
			if _, err := measure.Timed(200*time.Millisecond, goroutines, w.op(freshCounter(b))); err != nil {
				b.Fatalf("%s: %v", w.name, err)
			}
			byName[w.name] = w
		}
		byName[aa] = way{aa, byName["plain rueidis Lua.Exec"].op}
		for r := range rounds {
			for i := range pairs {
				p := pairs[(i+r)%len(pairs)]
				a, c := byName[p[0]], byName[p[1]]
				order := []way{a, c, c, a}
				if r%2 == 1 {
					order = []way{c, a, a, c}
				}
				got := map[string][]measure.Result{}
				for _, w := range order {
					m, err := measure.Timed(slice, goroutines, w.op(freshCounter(b)))
					if err != nil {
						b.Fatalf("%s: %v", w.name, err)
					}
					got[w.name] = append(got[w.name], m)
				}
				ma, mc := merge(got[a.name]), merge(got[c.name])
				if p[0] != aa { // the A/A pair's ways are not rows
					costs.add(a.name, ma)
					costs.add(c.name, mc)
				}
				costs.ratio(p[0]+" / "+p[1], ma.Ops/mc.Ops)
			}
		}
		costs.names = make([]string, len(ws))
		for i, w := range ws {
			costs.names[i] = w.name
		}
	})
}

// merge is one way's slices of a round as one run of their summed length:
// calls/s and allocations averaged (the slices are equally long), CPU
// per call weighted by each slice's calls.
func merge(ms []measure.Result) measure.Result {
	var out measure.Result
	var calls float64
	for _, m := range ms {
		out.Ops += m.Ops / float64(len(ms))
		out.Allocs += m.Allocs / float64(len(ms))
		out.CPU += time.Duration(float64(m.CPU) * m.Ops)
		calls += m.Ops
	}
	if calls > 0 {
		out.CPU = time.Duration(float64(out.CPU) / calls)
	}
	return out
}

var (
	costsOnce sync.Once
	costs     table
)

// table is BenchmarkClientCost's rounds: per way its calls/s and
// allocations per call, and per ratio its value, one per round.
type table struct {
	names            []string
	ops, allocs, cpu map[string][]float64
	ratioNames       []string
	ratios           map[string][]float64
}

func (t *table) add(name string, m measure.Result) {
	if t.ops == nil {
		t.ops, t.allocs, t.cpu, t.ratios = map[string][]float64{}, map[string][]float64{}, map[string][]float64{}, map[string][]float64{}
	}
	t.ops[name] = append(t.ops[name], m.Ops)
	t.allocs[name] = append(t.allocs[name], m.Allocs)
	t.cpu[name] = append(t.cpu[name], float64(m.CPU.Nanoseconds())/1e3)
}

func (t *table) ratio(name string, v float64) {
	if _, ok := t.ratios[name]; !ok {
		t.ratioNames = append(t.ratioNames, name)
	}
	t.ratios[name] = append(t.ratios[name], v)
}

func (t *table) print() {
	if len(t.names) == 0 {
		return
	}
	fmt.Printf("\nCPU layout %s; %d rounds of %v per way (two slices of %v in each pair's A B B A), %d goroutines; medians\n\n", env.layout, rounds, 2*slice, slice, goroutines)
	fmt.Printf("| way | calls/s | allocs/call | client CPU µs/call |\n|---|---:|---:|---:|\n")
	for _, n := range t.names {
		fmt.Printf("| %s | %.0f | %.2f | %.2f |\n", n, measure.Median(t.ops[n]), measure.Median(t.allocs[n]), measure.Median(t.cpu[n]))
	}
	fmt.Printf("\n| ratio | median | per round |\n|---|---:|---|\n")
	for _, n := range t.ratioNames {
		per := make([]string, len(t.ratios[n]))
		for i, v := range t.ratios[n] {
			per[i] = fmt.Sprintf("%.2f", v)
		}
		fmt.Printf("| %s | %.2f | %s |\n", n, measure.Median(t.ratios[n]), strings.Join(per, ", "))
	}
}
