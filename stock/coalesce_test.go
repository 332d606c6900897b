package stock_test

import (
	"context"
	"strconv"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/luagen/luagen/internal/exectest"
	"github.com/luagen/luagen/luatest"
	"github.com/luagen/luagen/redistest"
	"github.com/luagen/luagen/runtime"
	"github.com/luagen/luagen/stock"
)

// wrapper is how a test builds the executor its scripts run on from the
// client's: plain, or under a runtime.Coalescer.
type wrapper func(runtime.Executor) runtime.Executor

func plain(e runtime.Executor) runtime.Executor { return e }

// coalesced merges concurrent Deducts of one SKU (---@coalesce), counting
// the merged runs it sends in mergedRuns.
func coalesced(e runtime.Executor) runtime.Executor {
	return runtime.NewCoalescer(&mergeCounting{Executor: e})
}

// mergedRuns counts the merged runs sent by every coalesced executor, and
// mergedCalls the calls they carried (the companion's ARGV[1]).
var mergedRuns, mergedCalls atomic.Int64

// callsMerged is runsMerged for the calls the runs carried.
func callsMerged() func() int64 {
	start := mergedCalls.Load()
	return func() int64 { return mergedCalls.Load() - start }
}

// runsMerged returns a function telling how many merged runs were sent
// since runsMerged was called (by any test of the package; the fault tests
// run one at a time).
func runsMerged() func() int64 {
	start := mergedRuns.Load()
	return func() int64 { return mergedRuns.Load() - start }
}

type mergeCounting struct{ runtime.Executor }

func (m *mergeCounting) EvalSha(ctx context.Context, s *runtime.Script, keys, args []string) (runtime.Value, error) {
	if s == stock.DeductScript().Companion() {
		mergedRuns.Add(1)
		if n, err := strconv.ParseInt(args[0], 10, 64); err == nil {
			mergedCalls.Add(n)
		}
	}
	return m.Executor.EvalSha(ctx, s, keys, args)
}

// coalescedRace runs 1,200 buyers, 64 at a time with no pause, for 300
// units of one SKU through s, and checks what must hold however the calls
// were merged: no error, no oversell, every unit sold, one record per
// order, replays answer the recorded outcome, and reconciliation clean. stockOf reads the counter.
func coalescedRace(t *testing.T, s *stock.Scripts, k stock.SKUKeys, stockOf func() string, set func(units int)) {
	t.Helper()
	const units, buyers = 300, 1200
	set(units)
	merged := runsMerged()
	res := race(t, raceConfig{buyers: buyers, workers: 64, keys: k,
		scripts: func(int) seller { return s }})
	res.requireNoErrors(t)
	left, err := strconv.Atoi(stockOf())
	require.NoError(t, err)
	assert.Equal(t, 0, left, "sold out, no oversell")
	assert.Equal(t, units, res.sold, "every unit sold once")
	r := requireReconciles(t, s, k, units)
	requireRecords(t, s, k, res, r)
	t.Logf("%d merged runs", merged())
}

// TestDeductCoalescedRace: 64 buyers at once on one SKU, merged by a
// runtime.Coalescer, on a server through both clients, on a cluster (one
// SKU per primary) and offline.
func TestDeductCoalescedRace(t *testing.T) {
	exectest.Run(t, func(t *testing.T, ex exectest.Kind) {
		t.Run("single", func(t *testing.T) {
			srv := redistest.Start(t)
			k := keysFor("coalesced")
			coalescedRace(t, stock.New(coalesced(ex.Single(t, srv))), k,
				func() string { return srv.Do(t, "GET", k.Stock) },
				func(n int) { srv.Do(t, "SET", k.Stock, strconv.Itoa(n)) })
		})
		t.Run("cluster", func(t *testing.T) {
			c := sharedCluster(t)
			s := stock.New(coalesced(ex.Cluster(t, c)))
			for _, sku := range skusOnEveryPrimary(t, c, fresh("coalesced")) {
				k := keysFor(sku)
				p, _, err := c.PrimaryOf(runtime.Slot(sku))
				require.NoError(t, err)
				coalescedRace(t, s, k,
					func() string { return p.Do(t, "GET", k.Stock) },
					func(n int) { p.Do(t, "SET", k.Stock, strconv.Itoa(n)) })
			}
		})
	})
	t.Run("luatest", func(t *testing.T) {
		r := luatest.Start(t, luatest.WithTime(at))
		k := keysFor("coalesced")
		coalescedRace(t, stock.New(coalesced(r)), k,
			func() string { v, _ := r.Do("GET", k.Stock); return v.Str },
			func(n int) { _, err := r.Do("SET", k.Stock, strconv.Itoa(n)); require.NoError(t, err) })
	})
}
