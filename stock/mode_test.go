package stock_test

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/luagen/luagen/internal/exectest"
	"github.com/luagen/luagen/internal/stockfn"
	"github.com/luagen/luagen/redistest"
	"github.com/luagen/luagen/runtime"
	"github.com/luagen/luagen/stock"
)

// The real-server suites (the seckill race, the fault tests with a flush,
// a restart, a failover and a killed primary) run in both modes luagen
// generates lua/stock in: EVAL mode (this package) and function mode
// (internal/stockfn, the same scripts generated with -functions and called
// with FCALL). One test body serves both through seller.

// seller is what the real-server suites call.
type seller interface {
	Deduct(ctx context.Context, keys stock.DeductKeys, args stock.DeductArgs) (int64, error)
	Reconcile(ctx context.Context, keys stock.AuditKeys, initial int64) (*stock.Reconciliation, error)
	Preload(ctx context.Context) error
	// QueueDeduct's Future returns the mode's own sentinels: compare
	// with stockError(err).
	QueueDeduct(b *runtime.Batch, keys stock.DeductKeys, args stock.DeductArgs) *runtime.Future[int64]
}

// mode is one way of reaching the stock scripts.
type mode struct {
	name string
	new  func(e runtime.Executor) seller
	// flush makes a server forget the code: SCRIPT FLUSH or FUNCTION FLUSH.
	flush []string
	// reload is the commandstats name of the command that teaches a server
	// the code again after a flush: EVAL, or FUNCTION LOAD.
	reload string
	// call is the commandstats name of a call: EVALSHA, or FCALL.
	call string
}

var modes = []mode{
	{name: "eval", new: func(e runtime.Executor) seller { return stock.New(e) },
		flush: []string{"SCRIPT", "FLUSH"}, reload: "eval", call: "evalsha"},
	{name: "functions", new: func(e runtime.Executor) seller { return fnSeller{stockfn.New(e), stock.New(e)} },
		flush: []string{"FUNCTION", "FLUSH"}, reload: "function|load", call: "fcall"},
}

// evalMode is package stock itself: EVALSHA with EVAL on NOSCRIPT.
var evalMode = modes[0]

// runModes runs f once per mode and executor, as subtests mode/executor.
func runModes(t *testing.T, f func(t *testing.T, m mode, ex exectest.Kind)) {
	t.Helper()
	for _, m := range modes {
		t.Run(m.name, func(t *testing.T) {
			exectest.Run(t, func(t *testing.T, ex exectest.Kind) { f(t, m, ex) })
		})
	}
}

// fnCluster is function mode's 3+3 cluster; EVAL mode uses cluster.
var fnCluster redistest.SharedCluster

// runModesOnCluster runs f once per mode and executor on a 3+3 cluster,
// the two modes in parallel, each on a cluster of its own: a failover or a
// killed primary is seconds of waiting for the cluster, which the modes
// then spend side by side, never on each other's nodes.
func runModesOnCluster(t *testing.T, f func(t *testing.T, m mode, ex exectest.Kind, c *redistest.Cluster)) {
	t.Helper()
	for _, m := range modes {
		t.Run(m.name, func(t *testing.T) {
			t.Parallel()
			c := cluster.Get(t)
			if m.name == "functions" {
				c = fnCluster.Get(t)
			}
			exectest.Run(t, func(t *testing.T, ex exectest.Kind) { f(t, m, ex, c) })
		})
	}
}

// fnSeller is internal/stockfn behind seller. Its types are package
// stock's under other names (both are generated from lua/stock), so they
// convert; its sentinels are matched to stock's, so a test's
// errors.Is(err, stock.ErrOutOfStock) holds in both modes. Reconcile is
// package stock's hand-written check over Audit, run in EVAL mode: it is
// the tests' oracle, reading the state the function-mode calls left.
type fnSeller struct {
	fn     *stockfn.Scripts
	oracle *stock.Scripts
}

func (f fnSeller) Deduct(ctx context.Context, keys stock.DeductKeys, args stock.DeductArgs) (int64, error) {
	n, err := f.fn.Deduct(ctx, stockfn.DeductKeys(keys), stockfn.DeductArgs(args))
	return n, stockError(err)
}

func (f fnSeller) Reconcile(ctx context.Context, keys stock.AuditKeys, initial int64) (*stock.Reconciliation, error) {
	return f.oracle.Reconcile(ctx, keys, initial)
}

func (f fnSeller) Preload(ctx context.Context) error { return f.fn.Preload(ctx) }

func (f fnSeller) QueueDeduct(b *runtime.Batch, keys stock.DeductKeys, args stock.DeductArgs) *runtime.Future[int64] {
	return f.fn.QueueDeduct(b, stockfn.DeductKeys(keys), stockfn.DeductArgs(args))
}

// sentinels pairs each stockfn sentinel with package stock's.
var sentinels = [][2]error{
	{stockfn.ErrOutOfStock, stock.ErrOutOfStock},
	{stockfn.ErrNoSuchSKU, stock.ErrNoSuchSKU},
	{stockfn.ErrLimitExceeded, stock.ErrLimitExceeded},
	{stockfn.ErrCancelled, stock.ErrCancelled},
	{stockfn.ErrOrderConflict, stock.ErrOrderConflict},
	{stockfn.ErrBadArgument, stock.ErrBadArgument},
	{stockfn.ErrCorruptRecord, stock.ErrCorruptRecord},
}

// stockError returns err matching package stock's sentinel as well when it
// matches a stockfn one.
func stockError(err error) error {
	for _, p := range sentinels {
		if errors.Is(err, p[0]) {
			return fmt.Errorf("%w (%w)", err, p[1])
		}
	}
	return err
}
