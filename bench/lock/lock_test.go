package lock

// Run from bench/:
//
//	go test -run '^$' -bench . -count 5 ./lock/
//
// LUAGEN_BENCH_LIBS=luagen,redislock runs only the libraries named (for a
// profile of one of them). One redis-server serves every benchmark of the run: the one at
// $LUAGEN_BENCH_REDIS (host:port) or, by default, a redis-server this test
// starts on a free loopback port with redistest. After the
// benchmarks a table of the results with luagen's ratio to the best peer is
// printed.
//
// The machine the numbers come from is shared, and its round trip drifts
// (between about 20 and 60 µs on loopback within a minute), so each call
// of a benchmark is one round: every library in turn, the order rotated
// from round to round, each for a fixed time (or number of hand-offs). Run
// with -count 3 or more: the table shows each library's median over the
// rounds and the median over rounds of luagen's ratio to the best peer of
// the same round, so that drift hits every library alike. b.N is ignored.
//
// Peers and their settings, chosen to give each its best showing:
//
//   - bsm/redislock v0.9.4 on go-redis v9: Obtain with LinearBackoff(1 ms).
//   - redsync v4 (one node, go-redis v9 pool): WithRetryDelay(1 ms), tries
//     without limit.
//   - rueidislock (rueidis v1.0.79): KeyMajority 1, one key instead of its
//     default three, so it pays one script per acquire like the others;
//     waiters wake on client-side caching invalidations, and ask again
//     after 200 ms without the lock (a missed wake-up otherwise hangs the
//     cross-client benchmark).
//   - luagen lock: defaults (watchdog lease 30 s, FIFO queue on the
//     server, a release hands the lock to the first waiter).
//
// Contended comes in two forms: within one client (8 goroutines share one
// Redis client and one lock client) and across clients (each goroutine has
// its own Redis client and lock client, as separate processes would: the
// case a distributed lock is for). The cross-client rows also report p99
// of the time from asking for the lock to holding it, fairness (the
// fewest sections any goroutine got over the most), allocations per
// section (runtime.MemStats over the run, all goroutines), the share of
// sections that went back to the goroutine that held the lock last (a lock
// that stays with one client passes without waking another), and where the
// CPU goes per section (see cost). BenchmarkLuagenHandoffPath splits
// luagen's critical path into its legs.
//
// Every lock uses an 8 s lease or validity where it has one to set.
//
// CPU layout (bench/internal/layout). In production the Redis server runs
// on a host of its own and every process that takes the lock on another;
// here they share one machine. By default (LUAGEN_BENCH_LAYOUT=split) the redis-server this
// test starts gets the first CPU the test may run on, and the benchmark
// process (every library's clients) the others, with GOMAXPROCS set to
// their number, so that clients do not take CPU time from the server.
// LUAGEN_BENCH_LAYOUT=shared leaves both on every CPU, as a single small
// host running the server and its clients would be. The layout decides the
// contended rows: a lock that hands over to the next waiter wakes another
// client every section, and on shared cores that client competes with the
// server for the CPU; a lock whose releaser takes it again (most sections
// of redislock and redsync) wakes nobody. The table's first line names the
// layout. With LUAGEN_BENCH_REDIS nothing is moved (and
// LUAGEN_BENCH_LAYOUT is refused); with one CPU, or off Linux, the default
// falls back to shared (and says so), an explicit split fails.

import (
	"context"
	"fmt"
	"net"
	"os"
	goruntime "runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/bsm/redislock"
	"github.com/go-redsync/redsync/v4"
	"github.com/go-redsync/redsync/v4/redis/goredis/v9"
	goredislib "github.com/redis/go-redis/v9"
	"github.com/redis/rueidis"
	"github.com/redis/rueidis/rueidislock"

	benchlayout "github.com/luagen/luagen/bench/internal/layout"
	"github.com/luagen/luagen/bench/internal/measure"
	"github.com/luagen/luagen/lock"
	"github.com/luagen/luagen/redistest"
)

const lease = 8 * time.Second

var (
	addr   string
	layout = "the server at $LUAGEN_BENCH_REDIS, not moved" // see the package comment; printed above the table
)

func TestMain(m *testing.M) {
	addr = os.Getenv("LUAGEN_BENCH_REDIS")
	if addr != "" && os.Getenv("LUAGEN_BENCH_LAYOUT") != "" {
		fmt.Fprintln(os.Stderr, "LUAGEN_BENCH_LAYOUT places the redis-server this test starts; with LUAGEN_BENCH_REDIS there is none")
		os.Exit(1)
	}
	var stop func()
	if addr == "" {
		var srv *redistest.Server
		var err error
		if srv, stop, err = startRedis(); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		addr = srv.Addr
		if layout, err = benchlayout.Apply(srv.PID()); err != nil {
			fmt.Fprintln(os.Stderr, err)
			stop()
			os.Exit(1)
		}
	}
	if only := os.Getenv("LUAGEN_BENCH_LIBS"); only != "" {
		libraries = slices.DeleteFunc(libraries, func(l library) bool { return !slices.Contains(strings.Split(only, ","), l.name) })
	}
	code := m.Run()
	printTable()
	if stop != nil {
		stop()
	}
	os.Exit(code)
}

// startRedis runs redis-server on a free loopback port without persistence,
// with redistest (importable here: the bench module's path is
// inside luagen's).
func startRedis() (*redistest.Server, func(), error) {
	dir, err := os.MkdirTemp("", "bench-lock-")
	if err != nil {
		return nil, nil, err
	}
	srv, err := redistest.NewServer(dir)
	if err != nil {
		os.RemoveAll(dir)
		return nil, nil, err
	}
	return srv, func() { srv.Stop(); os.RemoveAll(dir) }, nil
}

// A library under test: mutex returns one owner's handle on a named lock.
type library struct {
	name  string
	open  func(b *testing.B) (mutex func(name string) mutex, close func())
	order int
}

type mutex interface {
	lock(ctx context.Context) error // blocks until acquired
	unlock(ctx context.Context) error
}

var libraries = []library{
	{name: "luagen", open: openLuagen},
	{name: "redislock", open: openRedislock},
	{name: "redsync", open: openRedsync},
	{name: "rueidislock", open: openRueidislock},
}

type luagenMutex struct{ m *lock.Mutex }

func (l luagenMutex) lock(ctx context.Context) error   { _, err := l.m.Lock(ctx); return err }
func (l luagenMutex) unlock(ctx context.Context) error { return l.m.Unlock(ctx) }

func openLuagen(b *testing.B) (func(string) mutex, func()) { return openLuagenWith(b) }

// openLuagenWith is openLuagen with the lock client's options.
func openLuagenWith(b *testing.B, opts ...lock.Option) (func(string) mutex, func()) {
	rc, err := rueidis.NewClient(rueidis.ClientOption{InitAddress: []string{addr}, DisableCache: true})
	if err != nil {
		b.Fatal(err)
	}
	c, err := lock.NewClient(rc, opts...)
	if err != nil {
		b.Fatal(err)
	}
	return func(name string) mutex {
			m, err := lock.New(c, name)
			if err != nil {
				b.Fatal(err)
			}
			return luagenMutex{m}
		}, func() {
			c.Close()
			rc.Close()
		}
}

type redislockMutex struct {
	c    *redislock.Client
	name string
	l    *redislock.Lock
}

func (r *redislockMutex) lock(ctx context.Context) (err error) {
	ctx, cancel := context.WithTimeout(ctx, time.Minute) // Obtain gives up after the TTL without a deadline
	defer cancel()
	r.l, err = r.c.Obtain(ctx, r.name, lease, &redislock.Options{RetryStrategy: redislock.LinearBackoff(time.Millisecond)})
	return err
}
func (r *redislockMutex) unlock(ctx context.Context) error { return r.l.Release(ctx) }

func openRedislock(b *testing.B) (func(string) mutex, func()) {
	rdb := goredislib.NewClient(&goredislib.Options{Addr: addr})
	c := redislock.New(rdb)
	return func(name string) mutex { return &redislockMutex{c: c, name: name} }, func() { rdb.Close() }
}

type redsyncMutex struct{ m *redsync.Mutex }

func (r redsyncMutex) lock(ctx context.Context) error { return r.m.LockContext(ctx) }
func (r redsyncMutex) unlock(ctx context.Context) error {
	_, err := r.m.UnlockContext(ctx)
	return err
}

func openRedsync(b *testing.B) (func(string) mutex, func()) {
	rdb := goredislib.NewClient(&goredislib.Options{Addr: addr})
	rs := redsync.New(goredis.NewPool(rdb))
	return func(name string) mutex {
		return redsyncMutex{rs.NewMutex(name, redsync.WithExpiry(lease), redsync.WithTries(1<<30),
			redsync.WithRetryDelay(time.Millisecond))}
	}, func() { rdb.Close() }
}

type rueidislockMutex struct {
	l      rueidislock.Locker
	name   string
	cancel context.CancelFunc
}

// lock asks again after 200 ms without the lock: with a Locker per
// goroutine (contended across clients) a waiter of rueidislock v1.0.79 can
// miss its wake-up and wait forever (seen in this benchmark: stuck in
// WithContext's select with the lock free).
func (r *rueidislockMutex) lock(ctx context.Context) error {
	for {
		c, cancel := context.WithCancel(ctx)
		t := time.AfterFunc(200*time.Millisecond, cancel)
		_, unlock, err := r.l.WithContext(c, r.name)
		if err == nil && t.Stop() {
			r.cancel = func() { unlock(); cancel() }
			return nil
		}
		if err == nil {
			unlock()
		}
		cancel()
		if ctx.Err() != nil {
			return ctx.Err()
		}
	}
}
func (r *rueidislockMutex) unlock(context.Context) error { r.cancel(); return nil }

func openRueidislock(b *testing.B) (func(string) mutex, func()) {
	l, err := rueidislock.NewLocker(rueidislock.LockerOption{
		ClientOption: rueidis.ClientOption{InitAddress: []string{addr}},
		KeyMajority:  1,
		KeyValidity:  lease,
		// Not NoLoopTracking: all owners share the Locker's connection, and
		// with NOLOOP a release never invalidates the waiters' cached key,
		// so they would wait forever.
	})
	if err != nil {
		b.Fatal(err)
	}
	return func(name string) mutex { return &rueidislockMutex{l: l, name: name} }, l.Close
}

// results[row][library] are the values of every round, in round order;
// every library has one per round.
var (
	resultsMu sync.Mutex
	results   = map[string]map[string][]float64{}
	rows      []string
	rounds    = map[string]int{} // by benchmark: rounds run so far
)

func record(row, lib string, v float64) {
	resultsMu.Lock()
	defer resultsMu.Unlock()
	if results[row] == nil {
		results[row] = map[string][]float64{}
		rows = append(rows, row)
	}
	results[row][lib] = append(results[row][lib], v)
}

// round runs run once for every library, starting with a different one
// each time the benchmark is called, and reports each library's value as
// a metric named after it. b.N is ignored: one call is one round.
func round(b *testing.B, unit string, run func(b *testing.B, lib library) float64) {
	resultsMu.Lock()
	r := rounds[b.Name()]
	rounds[b.Name()]++
	resultsMu.Unlock()
	for i := range libraries {
		lib := libraries[(i+r)%len(libraries)]
		b.ReportMetric(run(b, lib), lib.name+"-"+unit)
	}
}

// BenchmarkUncontended: one goroutine acquires and releases a lock nobody
// else wants, back to back, for a second per library.
func BenchmarkUncontended(b *testing.B) {
	ctx := context.Background()
	round(b, "ops/s", func(b *testing.B, lib library) float64 {
		newMutex, closeLib := lib.open(b)
		defer closeLib()
		m := newMutex("bench:uncontended:" + lib.name)
		var before, after goruntime.MemStats
		goruntime.ReadMemStats(&before)
		n, perSec := lockUnlockFor(ctx, b, m, time.Second)
		goruntime.ReadMemStats(&after)
		record("uncontended acquire+release /s", lib.name, perSec)
		record("uncontended allocs/op (lower is better)", lib.name, float64(after.Mallocs-before.Mallocs)/float64(n))
		return perSec
	})
}

// lockUnlockFor acquires and releases m back to back, from one goroutine,
// for d: how many times, and how many per second.
func lockUnlockFor(ctx context.Context, b *testing.B, m mutex, d time.Duration) (n int, perSec float64) {
	start := time.Now()
	for time.Since(start) < d {
		if err := m.lock(ctx); err != nil {
			b.Fatal(err)
		}
		if err := m.unlock(ctx); err != nil {
			b.Fatal(err)
		}
		n++
	}
	return n, float64(n) / time.Since(start).Seconds()
}

// BenchmarkContended: 8 goroutines, each its own owner, take turns on one
// lock for a second per library, sharing one Redis client and one lock
// client.
func BenchmarkContended(b *testing.B) {
	round(b, "sections/s", func(b *testing.B, lib library) float64 {
		newMutex, closeLib := lib.open(b)
		defer closeLib()
		ms := make([]mutex, contenders)
		for i := range ms {
			ms[i] = newMutex("bench:contended:" + lib.name)
		}
		r := contend(b, lib.name, ms)
		record("contended, one client: sections /s", lib.name, r.perSec)
		return r.perSec
	})
}

// BenchmarkContendedAcrossClients: as BenchmarkContended, but every
// goroutine has a Redis client and a lock client of its own, as separate
// processes would.
func BenchmarkContendedAcrossClients(b *testing.B) {
	round(b, "sections/s", func(b *testing.B, lib library) float64 {
		ms := make([]mutex, contenders)
		for i := range ms {
			newMutex, closeLib := lib.open(b)
			defer closeLib()
			ms[i] = newMutex("bench:across:" + lib.name)
		}
		cost := startCost(b)
		r := contend(b, lib.name, ms)
		c := cost.per(b, r.sections)
		record("contended, 8 clients: sections /s", lib.name, r.perSec)
		record("contended, 8 clients: p99 µs to acquire (lower is better)", lib.name, r.p99)
		record("contended, 8 clients: fairness, min/max sections per goroutine ×100", lib.name, r.fairness*100)
		record("contended, 8 clients: allocs/section (lower is better)", lib.name, r.allocs)
		record("contended, 8 clients: % of sections that went to the goroutine that held the lock last", lib.name, r.repeats*100)
		record("contended, 8 clients: scripts run/section (lower is better)", lib.name, c.scripts)
		record("contended, 8 clients: other commands/section, in scripts or not (lower is better)", lib.name, c.commands)
		record("contended, 8 clients: server CPU µs/section (lower is better)", lib.name, c.serverCPU)
		record("contended, 8 clients: client CPU µs/section (lower is better)", lib.name, c.clientCPU)
		return r.perSec
	})
}

// BenchmarkContendedPollOnly: BenchmarkContendedAcrossClients with
// luagen's waiters polling (WaitStrategy{PollOnly: true}, for proxies
// without pub/sub) against the peers that only poll, redislock and
// redsync; rueidislock, which wakes on invalidations, sits it out.
func BenchmarkContendedPollOnly(b *testing.B) {
	round(b, "sections/s", func(b *testing.B, lib library) float64 {
		open := lib.open
		switch lib.name {
		case "rueidislock":
			return 0
		case "luagen":
			open = func(b *testing.B) (func(string) mutex, func()) {
				return openLuagenWith(b, lock.WithWaitStrategy(lock.WaitStrategy{PollOnly: true}))
			}
		}
		ms := make([]mutex, contenders)
		for i := range ms {
			newMutex, closeLib := open(b)
			defer closeLib()
			ms[i] = newMutex("bench:polled:" + lib.name)
		}
		r := contend(b, lib.name, ms)
		record("polling only, 8 clients: sections /s", lib.name, r.perSec)
		record("polling only, 8 clients: p99 µs to acquire (lower is better)", lib.name, r.p99)
		record("polling only, 8 clients: fairness, min/max sections per goroutine ×100", lib.name, r.fairness*100)
		return r.perSec
	})
}

const contenders = 8

type contention struct {
	perSec, p99, fairness, allocs float64
	repeats                       float64 // share of sections whose goroutine held the lock last
	sections                      int
}

// contend runs the goroutines of ms against each other for a second.
// Inside the critical section an occupancy counter checks mutual exclusion
// and a plain counter counts sections; both are verified.
func contend(b *testing.B, name string, ms []mutex) contention {
	ctx := context.Background()
	var inside, overlaps atomic.Int64
	var stop atomic.Bool
	counter := 0           // guarded by the lock alone
	last, repeats := -1, 0 // the goroutine that held the lock last; sections where it took it again
	counts := make([]int, len(ms))
	waits := make([][]time.Duration, len(ms))
	var wg sync.WaitGroup
	var before, after goruntime.MemStats
	goruntime.ReadMemStats(&before)
	start := time.Now()
	for i, m := range ms {
		wg.Go(func() {
			for !stop.Load() {
				asked := time.Now()
				if err := m.lock(ctx); err != nil {
					b.Error(err)
					return
				}
				waits[i] = append(waits[i], time.Since(asked))
				if inside.Add(1) != 1 {
					overlaps.Add(1)
				}
				counter++
				if last == i {
					repeats++
				}
				last = i
				inside.Add(-1)
				if err := m.unlock(ctx); err != nil {
					b.Error(err)
					return
				}
				counts[i]++
			}
		})
	}
	time.Sleep(time.Second)
	stop.Store(true)
	wg.Wait()
	elapsed := time.Since(start)
	goruntime.ReadMemStats(&after)
	var all []time.Duration
	done := 0
	for i := range ms {
		all = append(all, waits[i]...)
		done += counts[i]
	}
	if overlaps.Load() != 0 || counter != done {
		b.Fatalf("%s: mutual exclusion broken: %d overlaps, counter %d, %d sections", name, overlaps.Load(), counter, done)
	}
	if done == 0 {
		b.Fatalf("%s: no section in a second", name)
	}
	slices.Sort(all)
	return contention{
		sections: done,
		repeats:  float64(repeats) / float64(done),
		perSec:   float64(done) / elapsed.Seconds(),
		p99:      float64(all[len(all)*99/100].Microseconds()),
		fairness: float64(slices.Min(counts)) / float64(max(slices.Max(counts), 1)),
		allocs:   float64(after.Mallocs-before.Mallocs) / float64(done),
	}
}

// cost is where the CPU of a contended run goes: the server's (INFO cpu:
// everything redis-server did, network included), the scripts and other
// commands it ran (INFO commandstats, reset at the start; Redis 7 counts
// the commands a script calls there too), and this process' (getrusage:
// every goroutine, the library's and the benchmark's own). Each library
// runs alone in its window, so the difference between libraries is theirs.
type cost struct {
	admin     *goredislib.Client
	serverCPU float64 // seconds, at the start
	clientCPU time.Duration
}

type costs struct {
	scripts, commands, serverCPU, clientCPU float64 // per section
}

func startCost(b *testing.B) *cost {
	ctx := context.Background()
	c := &cost{admin: goredislib.NewClient(&goredislib.Options{Addr: addr})}
	if err := c.admin.ConfigResetStat(ctx).Err(); err != nil {
		b.Fatal(err)
	}
	c.serverCPU = serverCPU(b, c.admin)
	c.clientCPU = processCPU(b)
	return c
}

// per returns the costs since startCost per section, and closes c.
func (c *cost) per(b *testing.B, sections int) costs {
	defer c.admin.Close()
	clientCPU := processCPU(b) - c.clientCPU
	serverCPU := serverCPU(b, c.admin) - c.serverCPU
	scripts, commands := commandStats(b, c.admin)
	n := float64(max(sections, 1))
	return costs{
		scripts:   scripts / n,
		commands:  commands / n,
		serverCPU: serverCPU * 1e6 / n,
		clientCPU: float64(clientCPU.Microseconds()) / n,
	}
}

// serverCPU returns redis-server's CPU time so far (user + system), in
// seconds.
func serverCPU(b *testing.B, admin *goredislib.Client) float64 {
	info, err := admin.Info(context.Background(), "cpu").Result()
	if err != nil {
		b.Fatal(err)
	}
	total := 0.0
	for _, line := range strings.Split(info, "\n") {
		name, v, ok := strings.Cut(strings.TrimSpace(line), ":")
		if ok && (name == "used_cpu_sys" || name == "used_cpu_user") {
			f, _ := strconv.ParseFloat(v, 64)
			total += f
		}
	}
	return total
}

// processCPU returns this process' CPU time so far (user + system).
func processCPU(b *testing.B) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// commandStats returns the calls of scripts (EVAL, EVALSHA, FCALL) and of
// other commands since the last CONFIG RESETSTAT, but CONFIG and INFO (the
// benchmark's own).
func commandStats(b *testing.B, admin *goredislib.Client) (scripts, commands float64) {
	info, err := admin.Info(context.Background(), "commandstats").Result()
	if err != nil {
		b.Fatal(err)
	}
	for _, line := range strings.Split(info, "\n") {
		name, stats, ok := strings.Cut(strings.TrimSpace(line), ":")
		if !ok || !strings.HasPrefix(name, "cmdstat_") || strings.HasPrefix(name, "cmdstat_config") || name == "cmdstat_info" {
			continue
		}
		calls, _, _ := strings.Cut(strings.TrimPrefix(stats, "calls="), ",")
		f, _ := strconv.ParseFloat(calls, 64)
		switch strings.TrimPrefix(name, "cmdstat_") {
		case "eval", "evalsha", "eval_ro", "evalsha_ro", "fcall", "fcall_ro":
			scripts += f
		default:
			commands += f
		}
	}
	return scripts, commands
}

// BenchmarkHandoff: a waiter blocks on a held lock; the time from the
// holder's unlock call to the waiter's lock returning is the hand-off
// latency. p50 and p99 over 250 hand-offs per library.
func BenchmarkHandoff(b *testing.B) {
	const handoffs = 250
	ctx := context.Background()
	round(b, "p50-µs", func(b *testing.B, lib library) float64 {
		newMutex, closeLib := lib.open(b)
		defer closeLib()
		name := "bench:handoff:" + lib.name
		holder, waiter := newMutex(name), newMutex(name)
		lat := make([]time.Duration, 0, handoffs)
		for range handoffs {
			if err := holder.lock(ctx); err != nil {
				b.Fatal(err)
			}
			got := make(chan time.Time, 1)
			go func() {
				if err := waiter.lock(ctx); err != nil {
					b.Error(err)
				}
				got <- time.Now()
			}()
			time.Sleep(3 * time.Millisecond) // the waiter is asleep by now
			unlocked := time.Now()
			if err := holder.unlock(ctx); err != nil {
				b.Fatal(err)
			}
			lat = append(lat, (<-got).Sub(unlocked))
			if err := waiter.unlock(ctx); err != nil {
				b.Fatal(err)
			}
		}
		slices.Sort(lat)
		p50, p99 := lat[len(lat)/2], lat[len(lat)*99/100]
		record("hand-off p50 µs (lower is better)", lib.name, float64(p50.Microseconds()))
		record("hand-off p99 µs (lower is better)", lib.name, float64(p99.Microseconds()))
		return float64(p50.Microseconds())
	})
}

// printTable prints the results as a Markdown table: each library's
// median over the rounds, and the median over rounds of luagen's ratio to
// the best peer of that round (>1 is better for luagen, whichever way the
// row counts).
func printTable() {
	if len(rows) == 0 {
		return
	}
	names := []string{}
	for _, l := range libraries {
		names = append(names, l.name)
	}
	fmt.Printf("\nCPU layout %s; %d rounds; medians\n\n| row | %s | luagen / best peer |\n|---|%s---|\n", layout, len(results[rows[0]]["luagen"]), strings.Join(names, " | "), strings.Repeat("---|", len(names)))
	for _, row := range rows {
		r := results[row]
		lower := strings.Contains(row, "lower is better")
		var cells []string
		for _, n := range names {
			if len(r[n]) == 0 {
				cells = append(cells, "–")
				continue
			}
			cells = append(cells, format(measure.Median(r[n])))
		}
		var ratios []float64
		for i, ours := range r["luagen"] {
			best := 0.0
			for _, n := range names {
				if n == "luagen" || i >= len(r[n]) {
					continue
				}
				if v := r[n][i]; best == 0 || (lower && v < best) || (!lower && v > best) {
					best = v
				}
			}
			switch {
			case best <= 0 || ours <= 0:
			case lower:
				ratios = append(ratios, best/ours)
			default:
				ratios = append(ratios, ours/best)
			}
		}
		ratio := "–"
		if len(ratios) > 0 {
			ratio = strconv.FormatFloat(measure.Median(ratios), 'f', 2, 64)
		}
		fmt.Printf("| %s | %s | %s |\n", row, strings.Join(cells, " | "), ratio)
	}
}

// format prints v with one decimal below 10, as a whole number above.
func format(v float64) string {
	if v < 10 {
		return strconv.FormatFloat(v, 'f', 1, 64)
	}
	return strconv.FormatFloat(v, 'f', 0, 64)
}

// BenchmarkServerTime: redis-server's CPU time (INFO cpu, user and
// system: the scripts and the network) per uncontended acquire+release,
// 2000 sections per library. Lower is better; it does not depend on the
// machine's load as much as the rates do. (INFO commandstats would
// count a script's commands twice: Redis 7 lists them as calls of their
// own, and their time is also in the script's.)
func BenchmarkServerTime(b *testing.B) {
	ctx := context.Background()
	round(b, "server-µs/op", func(b *testing.B, lib library) float64 {
		newMutex, closeLib := lib.open(b)
		defer closeLib()
		m := newMutex("bench:server:" + lib.name)
		const sections = 2000
		cost := startCost(b)
		for range sections {
			if err := m.lock(ctx); err != nil {
				b.Fatal(err)
			}
			if err := m.unlock(ctx); err != nil {
				b.Fatal(err)
			}
		}
		c := cost.per(b, sections)
		record("server CPU µs per uncontended acquire+release (lower is better)", lib.name, c.serverCPU)
		return c.serverCPU
	})
}

// BenchmarkLuagenHandoffPath breaks the critical path of luagen's
// contended, cross-client section into its legs, from the clocks of this
// process and of the server (one machine, so they agree within
// microseconds): a handoff's fencing token is the server's time in µs when
// the release ran (max(last + 1, now) and now wins at these rates). For
// every section handed over: "release" is the holder's Unlock call to the
// server running its release, "wake" is that to the heir's Lock returning
// (message delivery, rueidis' pub/sub dispatch, the goroutine switches,
// starting the hold), and "section" is the heir's Lock returning to its
// Unlock call. Medians and means over 8 clients for a second; the means
// of the legs add up to the time per section when every section is handed
// over (%-handed-over).
func BenchmarkLuagenHandoffPath(b *testing.B) {
	type leg struct{ release, wake, section []float64 }
	var mu sync.Mutex
	var legs leg
	var unlockAt atomic.Int64 // µs since the epoch: the last Unlock call
	var acquiredAt atomic.Int64
	for range b.N {
		hook := func(ev lock.Event) {
			if ev.Kind != lock.EventAcquired || ev.Trigger != lock.TriggerHandoff {
				return
			}
			now := time.Now().UnixMicro()
			acquiredAt.Store(now)
			if u := unlockAt.Load(); u != 0 && ev.Token > u && ev.Token < now {
				mu.Lock()
				legs.release = append(legs.release, float64(ev.Token-u))
				legs.wake = append(legs.wake, float64(now-ev.Token))
				mu.Unlock()
			}
		}
		ms := make([]mutex, contenders)
		closers := make([]func(), contenders)
		for i := range ms {
			var newMutex func(string) mutex
			newMutex, closers[i] = openLuagenWith(b, lock.WithHook(hook))
			ms[i] = timedMutex{newMutex("bench:path"), func() {
				now := time.Now().UnixMicro()
				if a := acquiredAt.Load(); a != 0 {
					mu.Lock()
					legs.section = append(legs.section, float64(now-a))
					mu.Unlock()
				}
				unlockAt.Store(now)
			}}
		}
		r := contend(b, "luagen", ms)
		for _, c := range closers {
			c()
		}
		b.ReportMetric(r.perSec, "sections/s")
		for _, l := range []struct {
			name string
			v    []float64
		}{{"release", legs.release}, {"wake", legs.wake}, {"section", legs.section}} {
			b.ReportMetric(measure.Median(l.v), l.name+"-p50-µs")
			b.ReportMetric(mean(l.v), l.name+"-mean-µs")
		}
		b.ReportMetric(float64(len(legs.wake))/float64(r.sections)*100, "%-handed-over")
		legs = leg{}
	}
}

func mean(vs []float64) float64 {
	sum := 0.0
	for _, v := range vs {
		sum += v
	}
	return sum / float64(max(len(vs), 1))
}

// timedMutex calls beforeUnlock at every unlock call.
type timedMutex struct {
	mutex
	beforeUnlock func()
}

func (t timedMutex) unlock(ctx context.Context) error {
	t.beforeUnlock()
	return t.mutex.unlock(ctx)
}

// BenchmarkReplicas: the cost of lock.WithReplicas(1, …) (WAIT after each
// acquire, on the same connection) against the same lock without it, in
// one run, on the bench server with one replica of its own attached
// (started here, stopped at the end): uncontended acquire+release and 8
// goroutines contending on one lock, a second each.
func BenchmarkReplicas(b *testing.B) {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		b.Fatal(err)
	}
	replica := redistest.Start(b, "--replicaof", host, port)
	deadline := time.Now().Add(30 * time.Second)
	for !strings.Contains(replica.Do(b, "INFO", "replication"), "master_link_status:up") {
		if time.Now().After(deadline) {
			b.Fatal("the replica did not sync within 30 s")
		}
		time.Sleep(50 * time.Millisecond)
	}
	ctx := context.Background()
	for _, mode := range []struct {
		name string
		opts []lock.Option
	}{{"off", nil}, {"WAIT-1", []lock.Option{lock.WithReplicas(1, time.Second)}}} {
		b.Run(mode.name, func(b *testing.B) {
			newMutex, closeLib := openLuagenWith(b, mode.opts...)
			defer closeLib()
			_, perSec := lockUnlockFor(ctx, b, newMutex("bench:replicas:uncontended:"+mode.name), time.Second)
			b.ReportMetric(perSec, "uncontended-ops/s")
			ms := make([]mutex, contenders)
			for i := range ms {
				ms[i] = newMutex("bench:replicas:contended:" + mode.name)
			}
			b.ReportMetric(contend(b, "luagen-"+mode.name, ms).perSec, "contended-sections/s")
		})
	}
}
