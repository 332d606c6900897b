package stock_test

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/luagen/luagen/runtime"
	"github.com/luagen/luagen/stock"
)

// raceConfig is one race of buyers for a SKU, optionally with a fault.
// Buyer i places order "o<i>" as buyer "u<i>"; a buyer whose call fails
// transiently (after runtime's own retries) tries again with the same
// order id until it gets an answer or patience runs out, as a client with
// an idempotency key would.
type raceConfig struct {
	buyers   int
	workers  int               // buyers in flight at once
	qty      func(i int) int64 // units buyer i asks for; nil: 1
	scripts  func(i int) seller
	keys     stock.SKUKeys
	patience time.Duration // per buyer; 0: 30 s

	// pace is how long each worker waits before its next buyer, so the
	// race lasts long enough for a fault to land in its middle: buyers
	// arrive over time, as in a real sale, not all in one burst.
	pace time.Duration

	// fault, if set, runs once faultAt buyers have an answer, while the
	// others keep buying. The last afterFault buyers start only once it
	// has ended, so that some buyers always meet what the fault left (a
	// fault that outlasts the race on a busy machine would leave none).
	fault      func() error
	faultAt    int
	afterFault int
}

type raceResult struct {
	sold, refused      int
	soldUnits          int64
	soldOrders         []int   // buyer indexes told "sold"
	errs               []error // final errors buyers were left with
	retried            int     // buyers that had to try again after a transient error
	transient          []string
	noscript           int // NOSCRIPT or "Function not found" seen by a buyer, even transiently: must be 0
	answeredAtFault    int // buyers answered when the fault began
	answeredAfterFault int // … and when it had ended
	faultTook          time.Duration
	elapsed            time.Duration
}

func (r *raceResult) requireNoErrors(t *testing.T) {
	t.Helper()
	for i, err := range r.errs {
		if i == 5 {
			t.Errorf("… and %d more", len(r.errs)-5)
			break
		}
		t.Error(err)
	}
	require.Empty(t, r.errs, "no error reaches a buyer")
	require.Zero(t, r.noscript, "NOSCRIPT (Function not found) never reaches a buyer")
}

func race(t *testing.T, cfg raceConfig) *raceResult {
	t.Helper()
	if cfg.qty == nil {
		cfg.qty = func(int) int64 { return 1 }
	}
	if cfg.patience == 0 {
		cfg.patience = 30 * time.Second
	}
	res := &raceResult{}
	var mu sync.Mutex
	outcome := make([]int8, cfg.buyers) // 1 sold, 2 refused
	var next, answered atomic.Int64
	faultErr := make(chan error, 1)
	faultDone := make(chan struct{}) // closed when the fault has ended
	var faultOnce sync.Once
	startFault := func() {
		faultOnce.Do(func() {
			res.answeredAtFault = int(answered.Load())
			go func() {
				t0 := time.Now()
				err := cfg.fault()
				res.faultTook = time.Since(t0)
				res.answeredAfterFault = int(answered.Load())
				faultErr <- err
				close(faultDone)
			}()
		})
	}
	if cfg.fault == nil {
		faultErr <- nil
		close(faultDone)
	}

	start := time.Now()
	var wg sync.WaitGroup
	for range min(cfg.workers, cfg.buyers) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				i := int(next.Add(1)) - 1
				if i >= cfg.buyers {
					return
				}
				if i >= cfg.buyers-cfg.afterFault {
					<-faultDone
				}
				time.Sleep(cfg.pace)
				args := stock.DeductArgs{Order: "o" + strconv.Itoa(i), Buyer: "u" + strconv.Itoa(i), Qty: cfg.qty(i), At: time.Now()}
				deadline := time.Now().Add(cfg.patience)
				tries := 0
				for {
					tries++
					ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
					_, err := cfg.scripts(i).Deduct(ctx, cfg.keys.Deduct(), args)
					cancel()
					if runtime.IsNoScript(err) || runtime.IsFunctionNotFound(err) {
						mu.Lock()
						res.noscript++
						mu.Unlock()
					}
					switch {
					case err == nil:
						outcome[i] = 1
					case errors.Is(err, stock.ErrOutOfStock):
						outcome[i] = 2
					case (runtime.IsTransient(err) || errors.Is(err, context.DeadlineExceeded)) && time.Now().Before(deadline):
						mu.Lock()
						if len(res.transient) < 5 {
							res.transient = append(res.transient, err.Error())
						}
						mu.Unlock()
						time.Sleep(20 * time.Millisecond)
						continue
					default:
						mu.Lock()
						res.errs = append(res.errs, fmt.Errorf("buyer %d, try %d: %w", i, tries, err))
						mu.Unlock()
					}
					break
				}
				if tries > 1 {
					mu.Lock()
					res.retried++
					mu.Unlock()
				}
				if n := answered.Add(1); cfg.fault != nil && int(n) >= cfg.faultAt {
					startFault()
				}
			}
		}()
	}
	wg.Wait()
	res.elapsed = time.Since(start)
	if cfg.fault != nil {
		startFault() // in case fewer buyers than faultAt
	}
	require.NoError(t, <-faultErr, "the fault itself")
	for i, o := range outcome {
		switch o {
		case 1:
			res.sold++
			res.soldUnits += cfg.qty(i)
			res.soldOrders = append(res.soldOrders, i)
		case 2:
			res.refused++
		}
	}
	t.Logf("race: %d sold (%d units), %d refused, %d errors, %d buyers retried, %v; transient errors seen: %q",
		res.sold, res.soldUnits, res.refused, len(res.errs), res.retried, res.elapsed.Round(time.Millisecond), res.transient)
	if cfg.fault != nil {
		t.Logf("fault: began after %d answers, took %v, ended after %d answers", res.answeredAtFault, res.faultTook.Round(time.Millisecond), res.answeredAfterFault)
	}
	return res
}

// requireReconciles runs Reconcile and requires no difference.
func requireReconciles(t *testing.T, s seller, k stock.SKUKeys, initial int64) *stock.Reconciliation {
	t.Helper()
	r, err := s.Reconcile(context.Background(), k.Audit(), initial)
	require.NoError(t, err)
	assert.Empty(t, r.Differences, "reconciliation differences")
	return r
}

// requireRecords checks that every buyer told "sold" has exactly their
// order recorded as sold, for their quantity.
func requireRecords(t *testing.T, s seller, k stock.SKUKeys, res *raceResult, r *stock.Reconciliation) {
	t.Helper()
	assert.Equal(t, int64(res.sold), r.SoldOrders, "one sold record per buyer told sold")
	assert.Equal(t, res.soldUnits, r.SoldUnits)
	assert.Equal(t, int64(res.refused), r.RefusedOrders, "one refused record per buyer told refused")
	// A repeated order answers its recorded outcome: ask every sold buyer
	// again and count nothing new.
	left := r.Left
	for _, i := range res.soldOrders {
		_, err := s.Deduct(context.Background(), k.Deduct(), stock.DeductArgs{Order: "o" + strconv.Itoa(i), Buyer: "u" + strconv.Itoa(i), Qty: 1, At: time.Now()})
		require.NoError(t, err, "order o%d was recorded as sold", i)
	}
	again, err := s.Reconcile(context.Background(), k.Audit(), r.Initial)
	require.NoError(t, err)
	assert.Equal(t, left, again.Left, "replaying every sold order deducted nothing")
	assert.Empty(t, again.Differences)
}
