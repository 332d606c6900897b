package lock_test

import (
	"context"
	"errors"
	"expvar"
	"fmt"
	"strconv"
	"sync"
	"time"

	"github.com/redis/rueidis"

	"github.com/luagen/luagen/lock"
)

// The examples run against a redis-server the tests start; redisAddr
// returns its address. In an application, rc is the rueidis client it
// already has.

// A flash-sale request waits briefly for the SKU's lock and answers "busy,
// retry" rather than queueing: under a rush, a short wait keeps latency
// bounded and lets the client retry, instead of piling up goroutines behind
// one lock.
func Example_flashSale() {
	rc, err := rueidis.NewClient(rueidis.ClientOption{InitAddress: []string{redisAddr()}})
	if err != nil {
		panic(err)
	}
	defer rc.Close()
	locks, err := lock.NewClient(rc, lock.WithKeyPrefix("sale:"))
	if err != nil {
		panic(err)
	}
	defer locks.Close()
	ctx := context.Background()
	stock := "sale:{sku42}:stock"
	rc.Do(ctx, rc.B().Set().Key(stock).Value("10").Build())

	buy := func(ctx context.Context, user string) string {
		m, err := lock.New(locks, "sku42") // one Mutex per request: one owner
		if err != nil {
			return err.Error()
		}
		held, ok, err := m.TryLock(ctx, 50*time.Millisecond)
		switch {
		case err != nil:
			return "error: " + err.Error()
		case !ok:
			return user + ": busy, please retry" // HTTP 429
		}
		defer m.Unlock(ctx)
		// Check, charge and write the order under held: it is cancelled
		// if the lock is lost, so a late step cannot oversell.
		left, err := rc.Do(held, rc.B().Decr().Key(stock).Build()).AsInt64()
		if err != nil {
			return "error: " + err.Error()
		}
		return user + ": bought, " + strconv.FormatInt(left, 10) + " left"
	}

	// A slow purchase holds the SKU while u2 arrives.
	slow, _ := lock.New(locks, "sku42")
	if _, err := slow.Lock(ctx); err != nil {
		panic(err)
	}
	fmt.Println(buy(ctx, "u2"))
	_ = slow.Unlock(ctx)
	fmt.Println(buy(ctx, "u3"))
	// Output:
	// u2: busy, please retry
	// u3: bought, 9 left
}

// A payment callback may be delivered more than once, even concurrently
// (the provider retries on a timeout). The lock named after the payment
// serialises the deliveries, a "done" record makes the second one a no-op,
// and the fencing token guards the write against a holder that lost the
// lock while paused.
func Example_paymentCallback() {
	rc, err := rueidis.NewClient(rueidis.ClientOption{InitAddress: []string{redisAddr()}})
	if err != nil {
		panic(err)
	}
	defer rc.Close()
	locks, err := lock.NewClient(rc)
	if err != nil {
		panic(err)
	}
	defer locks.Close()

	var processed sync.Map // stands for the orders table
	handle := func(ctx context.Context, paymentID string) error {
		m, err := lock.New(locks, "payment:"+paymentID)
		if err != nil {
			return err
		}
		// Wait as long as the provider waits for our answer.
		held, ok, err := m.TryLock(ctx, 5*time.Second)
		if err != nil {
			return err
		}
		if !ok {
			return errors.New("payment busy: ask the provider to retry")
		}
		defer m.Unlock(ctx)
		done := "payment:{" + paymentID + "}:done"
		if n, err := rc.Do(held, rc.B().Exists().Key(done).Build()).AsInt64(); err != nil || n == 1 {
			return err // already processed: acknowledge again, do nothing
		}
		// A real store would run: UPDATE orders SET paid = true, fence = $token
		// WHERE id = $order AND fence < $token.
		processed.Store(paymentID, m.Token())
		return rc.Do(held, rc.B().Set().Key(done).Value(strconv.FormatInt(m.Token(), 10)).Ex(24*time.Hour).Build()).Error()
	}

	ctx := context.Background()
	var wg sync.WaitGroup
	for range 3 { // three deliveries of the same callback at once
		wg.Go(func() {
			if err := handle(ctx, "pay-7"); err != nil {
				fmt.Println(err)
			}
		})
	}
	wg.Wait()
	n := 0
	processed.Range(func(any, any) bool { n++; return true })
	fmt.Println("processed", n, "time(s)")
	// Output:
	// processed 1 time(s)
}

// A scheduled job runs on every node, but only one should do the work:
// each node tries once without waiting and skips when another node holds
// the lock. The job runs under the held context, so it stops if the lock
// is lost; the watchdog keeps the lock for as long as the job takes.
func Example_scheduledJob() {
	node := func(name string) (*lock.Client, func()) {
		rc, err := rueidis.NewClient(rueidis.ClientOption{InitAddress: []string{redisAddr()}})
		if err != nil {
			panic(err)
		}
		// A nightly job can afford to wait a second for the server's
		// answer: TryLock(ctx, 0) then reports ErrNoAnswer only when
		// the server gave none in a second, not the default 25 ms.
		locks, err := lock.NewClient(rc, lock.WithWatchdogLease(10*time.Second),
			lock.WithWaitStrategy(lock.WaitStrategy{Grace: time.Second}))
		if err != nil {
			panic(err)
		}
		return locks, func() { locks.Close(); rc.Close() }
	}
	nodeA, closeA := node("a")
	defer closeA()
	nodeB, closeB := node("b")
	defer closeB()

	running := make(chan struct{})
	finish := make(chan struct{})
	runJob := func(ctx context.Context, locks *lock.Client, name string) {
		m, err := lock.New(locks, "job:nightly-report")
		if err != nil {
			panic(err)
		}
		held, ok, err := m.TryLock(ctx, 0)
		if err != nil {
			fmt.Println(name, "error:", err)
			return
		}
		if !ok {
			fmt.Println(name, "skips: another node runs the job")
			return
		}
		defer m.Unlock(ctx)
		fmt.Println(name, "runs the job")
		close(running)
		select {
		case <-finish: // the work
		case <-held.Done():
			fmt.Println(name, "stops:", context.Cause(held))
		}
	}

	ctx := context.Background()
	done := make(chan struct{})
	go func() {
		runJob(ctx, nodeA, "node a")
		close(done)
	}()
	select {
	case <-running:
	case <-done: // node a did not get to run it (it printed why)
	}
	runJob(ctx, nodeB, "node b")
	close(finish)
	<-done
	// Output:
	// node a runs the job
	// node b skips: another node runs the job
}

// The hook feeds the three numbers teams alert on: acquisition success
// rate, wait p99 and timeout rate. This wiring uses expvar from the
// standard library (served at /debug/vars once published); a Prometheus
// or OpenTelemetry wiring looks the same, with counters and a histogram.
func Example_metrics() {
	rc, err := rueidis.NewClient(rueidis.ClientOption{InitAddress: []string{redisAddr()}})
	if err != nil {
		panic(err)
	}
	defer rc.Close()

	metrics := new(expvar.Map).Init() // expvar.Publish("locks", metrics) to serve it
	bounds := []time.Duration{time.Millisecond, 10 * time.Millisecond, 100 * time.Millisecond, time.Second, 10 * time.Second}
	waits := new(expvar.Map).Init() // cumulative histogram of wait times: "le_<bound>" → count
	metrics.Set("wait", waits)
	hook := func(e lock.Event) {
		switch e.Kind {
		case lock.EventAcquired:
			metrics.Add("acquired", 1)
			for _, b := range bounds {
				if e.Wait <= b {
					waits.Add("le_"+b.String(), 1)
				}
			}
			waits.Add("le_inf", 1)
		case lock.EventTimedOut:
			metrics.Add("timed_out", 1)
		case lock.EventAcquireFailed:
			metrics.Add("failed", 1)
		case lock.EventRenewed:
			metrics.Add("renewals", 1)
		case lock.EventLost:
			metrics.Add("lost", 1)
		}
	}
	locks, err := lock.NewClient(rc, lock.WithHook(hook))
	if err != nil {
		panic(err)
	}
	defer locks.Close()

	ctx := context.Background()
	a, _ := lock.New(locks, "report")
	b, _ := lock.New(locks, "report")
	if _, err := a.Lock(ctx); err != nil {
		panic(err)
	}
	if _, ok, _ := b.TryLock(ctx, 20*time.Millisecond); ok {
		panic("b got a held lock")
	}
	_ = a.Unlock(ctx)

	count := func(m *expvar.Map, k string) int64 {
		if v, ok := m.Get(k).(*expvar.Int); ok {
			return v.Value()
		}
		return 0
	}
	acquired, timedOut, failed := count(metrics, "acquired"), count(metrics, "timed_out"), count(metrics, "failed")
	total := float64(acquired + timedOut + failed)
	fmt.Printf("success rate %.2f, timeout rate %.2f\n", float64(acquired)/total, float64(timedOut)/total)
	// wait p99: the smallest bound holding 99 % of acquisitions.
	var p99 time.Duration
	for _, b := range bounds {
		if float64(count(waits, "le_"+b.String())) >= 0.99*float64(acquired) {
			p99 = b
			break
		}
	}
	fmt.Println("wait p99 within a second:", p99 > 0 && p99 <= time.Second)
	// Output:
	// success rate 0.50, timeout rate 0.50
	// wait p99 within a second: true
}
