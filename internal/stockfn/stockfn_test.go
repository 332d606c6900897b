package stockfn_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/luagen/luagen/internal/exectest"
	"github.com/luagen/luagen/internal/stockfn"
	"github.com/luagen/luagen/luatest"
	"github.com/luagen/luagen/redistest"
	"github.com/luagen/luagen/runtime"
	"github.com/luagen/luagen/stock"
)

var cluster redistest.SharedCluster

func TestMain(m *testing.M) {
	code := m.Run()
	cluster.Stop()
	os.Exit(code)
}

var at = time.UnixMilli(1700000000123)

func fresh(name string) string { return name + "-" + strconv.FormatInt(time.Now().UnixNano(), 36) }

func order(id, buyer string, qty int64) stockfn.DeductArgs {
	return stockfn.DeductArgs{Order: id, Buyer: buyer, Qty: qty, Limit: 0, At: at}
}

// The function library is what NewLibrary builds from lua/stock, and loads
// on a real server with one function per script and the shebang's flags.
func TestLibraryOnRealServer(t *testing.T) {
	lib := stockfn.Library()
	assert.Equal(t, "stockfn", lib.Name())
	assert.Equal(t, int64(1), lib.Revision())
	exectest.Run(t, func(t *testing.T, k exectest.Kind) {
		srv := redistest.Start(t)
		s := stockfn.New(k.Single(t, srv))
		require.NoError(t, s.Preload(context.Background()))
		list := srv.Do(t, "FUNCTION", "LIST", "LIBRARYNAME", lib.Name())
		for _, sc := range stockfn.All() {
			assert.Contains(t, list, sc.FunctionName())
		}
		assert.Contains(t, list, "no-writes", "audit.lua's flags=no-writes")
		assert.Contains(t, list, "Deduct takes qty units of a SKU", "the header is the description")
	})
}

// The same calls in EVAL mode (package stock) and function mode, offline:
// the same results, the same typed errors, and a runtime error names the
// same .lua line.
func TestOfflineSameAsEvalMode(t *testing.T) {
	ctx := context.Background()
	type outcome struct {
		v   string
		err string
	}
	run := func(deduct func(k [3]string, a stockfn.DeductArgs) (int64, error),
		cancel func(k [3]string, o string) (int64, error), r *luatest.Redis) []outcome {
		k := [3]string{"s:{1}:stock", "s:{1}:orders", "s:{1}:buyers"}
		var out []outcome
		rec := func(v int64, err error) {
			o := outcome{v: strconv.FormatInt(v, 10)}
			if err != nil {
				o.err = strings.ReplaceAll(err.Error(), "stockfn", "stock")
				var se *runtime.ScriptError
				if errors.As(err, &se) {
					o.err = fmt.Sprintf("%s:%d %s", se.File, se.Line, se.Message())
				}
			}
			out = append(out, o)
		}
		rec(deduct(k, order("o1", "u1", 2)))
		r.Set(k[0], "5")
		rec(deduct(k, order("o1", "u1", 2)))
		rec(deduct(k, order("o1", "u1", 2)))
		rec(deduct(k, order("o2", "u2", 9)))
		rec(deduct(k, order("", "u2", 1)))
		rec(deduct(k, order("o1", "u9", 2)))
		rec(cancel(k, "o1"))
		rec(cancel(k, "o1"))
		r.Do("DEL", k[0])
		r.Do("HSET", k[0], "f", "v")
		rec(deduct(k, order("o3", "u3", 1)))
		return out
	}
	r1 := luatest.New(t, luatest.WithTime(at))
	s1 := stock.New(r1)
	evalMode := run(func(k [3]string, a stockfn.DeductArgs) (int64, error) {
		return s1.Deduct(ctx, stock.DeductKeys{Stock: k[0], Orders: k[1], Buyers: k[2]}, stock.DeductArgs(a))
	}, func(k [3]string, o string) (int64, error) {
		return s1.Cancel(ctx, stock.CancelKeys{Stock: k[0], Orders: k[1], Buyers: k[2]}, stock.CancelArgs{Order: o, At: at})
	}, r1)
	r2 := luatest.New(t, luatest.WithTime(at))
	s2 := stockfn.New(r2)
	fnMode := run(func(k [3]string, a stockfn.DeductArgs) (int64, error) {
		return s2.Deduct(ctx, stockfn.DeductKeys{Stock: k[0], Orders: k[1], Buyers: k[2]}, a)
	}, func(k [3]string, o string) (int64, error) {
		return s2.Cancel(ctx, stockfn.CancelKeys{Stock: k[0], Orders: k[1], Buyers: k[2]}, stockfn.CancelArgs{Order: o, At: at})
	}, r2)
	assert.Equal(t, evalMode, fnMode)
	assert.Contains(t, fnMode[len(fnMode)-1].err, "lua/stock/deduct.lua:", "a WRONGTYPE inside the script names the .lua line")
	assert.Equal(t, fnMode[len(fnMode)-1].err[:strings.Index(fnMode[len(fnMode)-1].err, " ")],
		evalMode[len(evalMode)-1].err[:strings.Index(evalMode[len(evalMode)-1].err, " ")])
	// The call log speaks in .lua lines too.
	var lines []int
	for _, c := range r2.Calls() {
		lines = append(lines, c.Line)
	}
	var evalLines []int
	for _, c := range r1.Calls() {
		evalLines = append(evalLines, c.Line)
	}
	assert.Equal(t, evalLines, lines)
	t.Logf("%d outcomes equal in both modes", len(fnMode))
}

// raceResult counts a race's outcomes.
type raceResult struct {
	sold, refused atomic.Int64
	mu            sync.Mutex
	errs          []error
	retried       atomic.Int64
}

// race runs buyers (one order each) with workers in flight, each worker
// pausing 20 ms between buyers so the race lasts about a second; fault
// runs once, after faultAt buyers have started. A buyer whose call fails with
// a transient error tries again with the same order id (Deduct is
// idempotent), up to 50 times.
func race(t *testing.T, s *stockfn.Scripts, k stockfn.SKUKeys, buyers, workers, faultAt int, fault func()) *raceResult {
	t.Helper()
	res := &raceResult{}
	var next atomic.Int64
	var wg sync.WaitGroup
	var faultOnce sync.Once
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				i := int(next.Add(1)) - 1
				if i >= buyers {
					return
				}
				if i == faultAt && fault != nil {
					faultOnce.Do(fault)
				}
				time.Sleep(20 * time.Millisecond)
				o := order("o"+strconv.Itoa(i), "u"+strconv.Itoa(i), 1)
				var err error
				for try := 0; try < 50; try++ {
					_, err = s.Deduct(context.Background(), k.Deduct(), o)
					if err == nil || !runtime.Transient(err) {
						break
					}
					res.retried.Add(1)
					time.Sleep(100 * time.Millisecond)
				}
				switch {
				case err == nil:
					res.sold.Add(1)
				case errors.Is(err, stockfn.ErrOutOfStock):
					res.refused.Add(1)
				default:
					res.mu.Lock()
					res.errs = append(res.errs, err)
					res.mu.Unlock()
				}
			}
		}()
	}
	wg.Wait()
	return res
}

const buyers, units = 600, 150

// The seckill race on one node while FUNCTION FLUSH empties the server's
// functions every 50 ms: each FCALL after a flush answers "Function not
// found", which must turn into a load and a second FCALL inside runtime,
// never into a buyer's error, an oversell or a double deduction.
func TestRaceWithFunctionFlush(t *testing.T) {
	exectest.Run(t, func(t *testing.T, ex exectest.Kind) {
		srv := redistest.Start(t)
		s := stockfn.New(ex.Single(t, srv))
		k := stockfn.KeysFor("fn:", fresh("flush"))
		srv.Do(t, "SET", k.Stock, strconv.Itoa(units))
		stop, done := make(chan struct{}), make(chan int)
		go func() {
			n := 0
			tick := time.NewTicker(50 * time.Millisecond)
			defer tick.Stop()
			for {
				select {
				case <-stop:
					done <- n
					return
				case <-tick.C:
					srv.Do(t, "FUNCTION", "FLUSH")
					n++
				}
			}
		}()
		res := race(t, s, k, buyers, 16, -1, nil)
		close(stop)
		flushes := <-done
		require.Empty(t, res.errs)
		assert.Zero(t, res.retried.Load(), "no error at all reached a buyer")
		assert.Equal(t, int64(units), res.sold.Load())
		assert.Equal(t, int64(buyers-units), res.refused.Load())
		assert.Equal(t, "0", srv.Do(t, "GET", k.Stock))
		assert.Equal(t, strconv.Itoa(buyers), srv.Do(t, "HLEN", k.Orders))
		assert.GreaterOrEqual(t, flushes, 3, "the functions were flushed during the race")
		assert.GreaterOrEqual(t, commandCalls(t, srv, "function|load"), 3, "buyers met Function not found and loaded the library")
		t.Logf("%d flushes, %d library loads", flushes, commandCalls(t, srv, "function|load"))
	})
}

// The race while the server is stopped and restarted with its AOF: the
// library is part of the persisted state, so the restarted server runs
// FCALL at once (no reload); calls cut off by the restart are retried with
// the same order id. No error other than a transient one reaches a buyer,
// nothing is oversold and no acknowledged sale is lost.
func TestRaceWithServerRestart(t *testing.T) {
	exectest.Run(t, func(t *testing.T, ex exectest.Kind) {
		srv := redistest.Start(t, "--appendonly", "yes", "--appendfsync", "always")
		s := stockfn.New(ex.Single(t, srv))
		require.NoError(t, s.Preload(context.Background()))
		k := stockfn.KeysFor("fn:", fresh("restart"))
		srv.Do(t, "SET", k.Stock, strconv.Itoa(units))
		pid := srv.PID()
		res := race(t, s, k, buyers, 16, 100, func() {
			srv.Stop()
			time.Sleep(300 * time.Millisecond)
			assert.NoError(t, srv.Restart())
		})
		require.Empty(t, res.errs)
		assert.NotEqual(t, pid, srv.PID())
		assert.Equal(t, int64(units), res.sold.Load())
		assert.Equal(t, "0", srv.Do(t, "GET", k.Stock))
		assert.Equal(t, strconv.Itoa(buyers), srv.Do(t, "HLEN", k.Orders))
		assert.Zero(t, commandCalls(t, srv, "function|load"), "the restarted server had the library from its AOF")
		assert.Positive(t, commandCalls(t, srv, "fcall"))
		assert.Less(t, commandCalls(t, srv, "fcall"), buyers, "some buyers ran before the restart")
		t.Logf("%d buyer retries after the restart", res.retried.Load())
	})
}

// The race on the 3+3 cluster with a coordinated failover of the SKU's
// slot mid-race: the replica received the library by replication, so the
// promoted replica runs FCALL with no reload and no error reaches a buyer.
func TestRaceWithClusterFailover(t *testing.T) {
	exectest.Run(t, func(t *testing.T, ex exectest.Kind) {
		c := cluster.Get(t)
		s := stockfn.New(ex.Cluster(t, c))
		require.NoError(t, s.Preload(context.Background()))
		sku := fresh("failover-" + ex.Name)
		k := stockfn.KeysFor("fn:", sku)
		slot := runtime.Slot(k.Stock)
		primary, replica, err := c.PrimaryOf(slot)
		require.NoError(t, err)
		primary.Do(t, "SET", k.Stock, strconv.Itoa(units))
		require.Eventually(t, func() bool {
			return strings.Contains(replica.Do(t, "FUNCTION", "LIST"), stockfn.Library().Name())
		}, 20*time.Second, 50*time.Millisecond)
		replica.Do(t, "CONFIG", "RESETSTAT")
		var promoted *redistest.Server
		res := race(t, s, k, buyers, 16, 150, func() {
			_, p, err := c.Failover(slot, 30*time.Second)
			assert.NoError(t, err)
			promoted = p
		})
		require.Empty(t, res.errs)
		assert.Zero(t, res.retried.Load(), "no error at all reached a buyer")
		require.Equal(t, replica, promoted)
		assert.Equal(t, int64(units), res.sold.Load())
		assert.Equal(t, "0", promoted.Do(t, "GET", k.Stock))
		assert.Equal(t, strconv.Itoa(buyers), promoted.Do(t, "HLEN", k.Orders))
		assert.Positive(t, commandCalls(t, promoted, "fcall"), "buyers ran on the promoted replica")
		assert.Zero(t, commandCalls(t, promoted, "function|load"), "which had the library already")
	})
}

// commandCalls reads calls=N of cmdstat_<name> from INFO commandstats.
func commandCalls(t *testing.T, srv *redistest.Server, name string) int {
	t.Helper()
	for _, line := range strings.Split(srv.Do(t, "INFO", "commandstats"), "\n") {
		if rest, ok := strings.CutPrefix(line, "cmdstat_"+name+":calls="); ok {
			n, err := strconv.Atoi(rest[:strings.IndexByte(rest, ',')])
			require.NoError(t, err)
			return n
		}
	}
	return 0
}

// The race when the SKU's primary is killed (SIGKILL, no coordination)
// mid-race: buyers meet refused connections until the cluster promotes the
// replica, which has the library by replication; runtime and then the
// buyers (same order id) retry. No error other than a transient one ever
// reaches a buyer — never "Function not found" — and nothing is oversold.
// Replication is asynchronous, so sales the dead primary acknowledged but
// had not replicated may be lost with their records: stock and records
// still agree.
func TestRaceWithPrimaryKilled(t *testing.T) {
	exectest.Run(t, func(t *testing.T, ex exectest.Kind) {
		c := cluster.Get(t)
		s := stockfn.New(ex.Cluster(t, c))
		require.NoError(t, s.Preload(context.Background()))
		k := stockfn.KeysFor("fn:", fresh("killed-"+ex.Name))
		primary, replica, err := c.PrimaryOf(runtime.Slot(k.Stock))
		require.NoError(t, err)
		primary.Do(t, "SET", k.Stock, strconv.Itoa(units))
		require.Eventually(t, func() bool {
			return strings.Contains(replica.Do(t, "FUNCTION", "LIST"), stockfn.Library().Name())
		}, 20*time.Second, 50*time.Millisecond)
		replica.Do(t, "CONFIG", "RESETSTAT")
		t.Cleanup(func() { // rejoin as a replica, for whoever uses the cluster next
			if primary.PID() == 0 {
				assert.NoError(t, primary.Restart())
				assert.NoError(t, c.WaitHealthy(60*time.Second))
			}
		})
		res := race(t, s, k, buyers, 16, 150, func() { primary.Stop() })
		require.Empty(t, res.errs)
		assert.Positive(t, res.retried.Load(), "buyers met the dead primary and tried again")
		newPrimary := replica
		require.Contains(t, newPrimary.Do(t, "INFO", "replication"), "role:master", "the replica was promoted")
		left, err := strconv.Atoi(newPrimary.Do(t, "GET", k.Stock))
		require.NoError(t, err)
		// Records read "state qty at reply buyer"; buyers here are u<n>.
		sold := strings.Count(newPrimary.Do(t, "HVALS", k.Orders), "sold ")
		assert.Equal(t, units, left+sold, "stock and sold records agree")
		// No oversell is a property of what the store holds: a sale the
		// dead primary acknowledged but had not replicated is lost with
		// its record (replication is asynchronous), its unit is sold
		// again, so buyers told "sold" may exceed units by those losses.
		assert.LessOrEqual(t, sold, units, "no oversell")
		assert.GreaterOrEqual(t, left, 0)
		assert.LessOrEqual(t, int64(sold), res.sold.Load(), "no record without a buyer told sold")
		assert.Zero(t, commandCalls(t, newPrimary, "function|load"), "the promoted replica had the library")
		t.Logf("sold %d, recorded %d, %d buyer retries", res.sold.Load(), sold, res.retried.Load())
	})
}
