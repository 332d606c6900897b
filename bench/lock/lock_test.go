package lock

// Run from bench/:
//
//	go test -run '^$' -bench . ./lock/
//
// One redis-server serves every benchmark of the run: the one at
// $LUAGEN_BENCH_REDIS (host:port) or, by default, a redis-server this test
// starts on a free loopback port (internal/redistest belongs to the main
// module and cannot be imported from here). After the benchmarks a table
// of the results with luagen's ratio to the best peer is printed.
//
// Peers and their settings, chosen to give each its best showing:
//
//   - bsm/redislock v0.9.4 on go-redis v9: Obtain with LinearBackoff(1 ms).
//   - redsync v4 (one node, go-redis v9 pool): WithRetryDelay(1 ms), tries
//     without limit.
//   - rueidislock (rueidis v1.0.79): KeyMajority 1, one key instead of its
//     default three, so it pays one script per acquire like the others;
//     waiters wake on client-side caching invalidations.
//
// The machine the numbers come from is shared, so run with -count 3 or more:
// the table shows the median of each row's runs.
//   - luagen lock: defaults (watchdog lease 30 s, unlock notification).
//
// Every lock uses an 8 s lease or validity where it has one to set.

import (
	"bufio"
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/bsm/redislock"
	"github.com/go-redsync/redsync/v4"
	"github.com/go-redsync/redsync/v4/redis/goredis/v9"
	goredislib "github.com/redis/go-redis/v9"
	"github.com/redis/rueidis"
	"github.com/redis/rueidis/rueidislock"

	"github.com/luagen/luagen/lock"
)

const lease = 8 * time.Second

var addr string

func TestMain(m *testing.M) {
	addr = os.Getenv("LUAGEN_BENCH_REDIS")
	var stop func()
	if addr == "" {
		var err error
		if addr, stop, err = startRedis(); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
	}
	code := m.Run()
	printTable()
	if stop != nil {
		stop()
	}
	os.Exit(code)
}

// startRedis runs redis-server on a free loopback port without persistence.
func startRedis() (string, func(), error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", nil, err
	}
	port := l.Addr().(*net.TCPAddr).Port
	l.Close()
	dir, err := os.MkdirTemp("", "bench-lock-")
	if err != nil {
		return "", nil, err
	}
	cmd := exec.Command("redis-server", "--port", strconv.Itoa(port), "--bind", "127.0.0.1",
		"--save", "", "--appendonly", "no", "--dir", dir, "--logfile", "redis.log")
	cmd.SysProcAttr = procAttr()
	if err := cmd.Start(); err != nil {
		return "", nil, fmt.Errorf("redis-server: %w", err)
	}
	stop := func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		_ = os.RemoveAll(dir)
	}
	a := "127.0.0.1:" + strconv.Itoa(port)
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		conn, err := net.Dial("tcp", a)
		if err != nil {
			continue
		}
		_, _ = conn.Write([]byte("PING\r\n"))
		reply, _ := bufio.NewReader(conn).ReadString('\n')
		conn.Close()
		if strings.HasPrefix(reply, "+PONG") {
			return a, stop, nil
		}
	}
	stop()
	return "", nil, fmt.Errorf("redis-server on %s did not answer PING", a)
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

func openLuagen(b *testing.B) (func(string) mutex, func()) {
	rc, err := rueidis.NewClient(rueidis.ClientOption{InitAddress: []string{addr}, DisableCache: true})
	if err != nil {
		b.Fatal(err)
	}
	c, err := lock.NewClient(rc)
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

func (r *rueidislockMutex) lock(ctx context.Context) (err error) {
	_, r.cancel, err = r.l.WithContext(ctx, r.name)
	return err
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

// results[row][library] are the values of every run (-count), for the
// table printed after the run. The testing package calls a benchmark with
// growing b.N until a run is long enough, and starts each run (-count) from
// a smaller or equal b.N again: a round whose b.N does not exceed the last
// one starts a new value, a larger one replaces it, so the final round of
// each run is what counts.
var (
	resultsMu sync.Mutex
	results   = map[string]map[string][]float64{}
	lastN     = map[string]int{}
	rows      []string
)

func record(b *testing.B, row, lib string, v float64) {
	resultsMu.Lock()
	defer resultsMu.Unlock()
	if results[row] == nil {
		results[row] = map[string][]float64{}
		rows = append(rows, row)
	}
	vs := results[row][lib]
	if n := lastN[row+lib]; b.N <= n || len(vs) == 0 {
		vs = append(vs, v)
	} else {
		vs[len(vs)-1] = v
	}
	lastN[row+lib] = b.N
	results[row][lib] = vs
}

func median(vs []float64) float64 {
	vs = slices.Clone(vs)
	slices.Sort(vs)
	return vs[len(vs)/2]
}

// BenchmarkUncontended: one goroutine acquires and releases a lock nobody
// else wants, back to back.
func BenchmarkUncontended(b *testing.B) {
	ctx := context.Background()
	for _, lib := range libraries {
		b.Run(lib.name, func(b *testing.B) {
			newMutex, closeLib := lib.open(b)
			defer closeLib()
			m := newMutex("bench:uncontended:" + lib.name)
			start := time.Now()
			for b.Loop() {
				if err := m.lock(ctx); err != nil {
					b.Fatal(err)
				}
				if err := m.unlock(ctx); err != nil {
					b.Fatal(err)
				}
			}
			perSec := float64(b.N) / time.Since(start).Seconds()
			b.ReportMetric(perSec, "ops/s")
			record(b, "uncontended acquire+release /s", lib.name, perSec)
		})
	}
}

// BenchmarkContended: 8 goroutines, each its own owner, take turns on one
// lock. Inside the critical section an occupancy counter checks mutual
// exclusion and a plain counter counts sections; both are verified.
func BenchmarkContended(b *testing.B) {
	const goroutines = 8
	ctx := context.Background()
	for _, lib := range libraries {
		b.Run(lib.name, func(b *testing.B) {
			newMutex, closeLib := lib.open(b)
			defer closeLib()
			name := "bench:contended:" + lib.name
			var taken, done, inside, overlaps atomic.Int64
			counter := 0 // guarded by the lock alone
			total := int64(b.N)
			var wg sync.WaitGroup
			b.ResetTimer()
			start := time.Now()
			for range goroutines {
				m := newMutex(name)
				wg.Go(func() {
					for taken.Add(1) <= total {
						if err := m.lock(ctx); err != nil {
							b.Error(err)
							return
						}
						if inside.Add(1) != 1 {
							overlaps.Add(1)
						}
						counter++
						inside.Add(-1)
						if err := m.unlock(ctx); err != nil {
							b.Error(err)
							return
						}
						done.Add(1)
					}
				})
			}
			wg.Wait()
			elapsed := time.Since(start)
			b.StopTimer()
			if overlaps.Load() != 0 || int64(counter) != total || done.Load() != total {
				b.Fatalf("mutual exclusion broken: %d overlaps, counter %d, %d sections, want %d", overlaps.Load(), counter, done.Load(), total)
			}
			perSec := float64(total) / elapsed.Seconds()
			b.ReportMetric(perSec, "sections/s")
			record(b, "contended sections /s (8 goroutines, 1 key)", lib.name, perSec)
		})
	}
}

// BenchmarkHandoff: a waiter blocks on a held lock; the time from the
// holder's unlock call to the waiter's lock returning is the hand-off
// latency. p50 and p99 over b.N hand-offs.
func BenchmarkHandoff(b *testing.B) {
	ctx := context.Background()
	for _, lib := range libraries {
		b.Run(lib.name, func(b *testing.B) {
			newMutex, closeLib := lib.open(b)
			defer closeLib()
			name := "bench:handoff:" + lib.name
			holder, waiter := newMutex(name), newMutex(name)
			lat := make([]time.Duration, 0, b.N)
			for b.Loop() {
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
			b.ReportMetric(float64(p50.Microseconds()), "p50-µs")
			b.ReportMetric(float64(p99.Microseconds()), "p99-µs")
			record(b, "hand-off p50 µs (lower is better)", lib.name, float64(p50.Microseconds()))
			record(b, "hand-off p99 µs (lower is better)", lib.name, float64(p99.Microseconds()))
		})
	}
}

// printTable prints the results as a Markdown table with luagen's ratio
// to the best peer of each row (>1 is better for luagen, whichever way
// the row counts).
func printTable() {
	if len(rows) == 0 {
		return
	}
	names := []string{}
	for _, l := range libraries {
		names = append(names, l.name)
	}
	fmt.Printf("\n| row | %s | luagen / best peer |\n|---|%s---|\n", strings.Join(names, " | "), strings.Repeat("---|", len(names)))
	for _, row := range rows {
		r := results[row]
		lower := strings.Contains(row, "lower is better")
		var cells []string
		best := 0.0
		for _, n := range names {
			if len(r[n]) == 0 {
				cells = append(cells, "–")
				continue
			}
			v := median(r[n])
			cells = append(cells, strconv.FormatFloat(v, 'f', 0, 64))
			if n != "luagen" && (best == 0 || (lower && v < best) || (!lower && v > best)) {
				best = v
			}
		}
		ratio := "–"
		if len(r["luagen"]) > 0 && best > 0 && median(r["luagen"]) > 0 {
			ours := median(r["luagen"])
			if lower {
				ratio = strconv.FormatFloat(best/ours, 'f', 2, 64)
			} else {
				ratio = strconv.FormatFloat(ours/best, 'f', 2, 64)
			}
		}
		fmt.Printf("| %s | %s | %s |\n", row, strings.Join(cells, " | "), ratio)
	}
}
