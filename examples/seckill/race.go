package main

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/alicebob/miniredis/v2"
	"github.com/redis/rueidis"

	"github.com/luagen/luagen/runtime"
	"github.com/luagen/luagen/stock"
)

// patience bounds how long one buyer keeps retrying its order after
// transient failures (a restart, a failover) beyond runtime's own retries.
const patience = 10 * time.Second

// race sets up the SKU, lets cfg.Buyers buyers race for it and checks the
// keyspace afterwards.
func race(ctx context.Context, cfg config, progress io.Writer) (*report, error) {
	client, exec, server, closeFn, err := connect(cfg)
	if err != nil {
		return nil, err
	}
	defer closeFn()

	sku := cfg.SKU
	if sku == "" {
		sku = "sku-" + randomID()
	}
	k := stock.KeysFor("seckill:", sku)
	// A SKU's keys share its {hash tag}, so one DEL removes all three even
	// on a cluster; a rerun with the same -sku starts from scratch.
	if err := client.Do(ctx, client.B().Del().Key(k.Stock, k.Orders, k.Buyers).Build()).Error(); err != nil {
		return nil, fmt.Errorf("clear SKU %s on %s: %w", sku, server, err)
	}
	if err := client.Do(ctx, client.B().Set().Key(k.Stock).Value(strconv.Itoa(cfg.Stock)).Build()).Error(); err != nil {
		return nil, fmt.Errorf("set up stock on %s: %w", server, err)
	}
	if cfg.SKU == "" { // a random SKU is nobody's to keep
		defer client.Do(context.WithoutCancel(ctx), client.B().Del().Key(k.Stock, k.Orders, k.Buyers).Build())
	}

	scripts := stock.New(exec)
	if err := scripts.Preload(ctx); err != nil {
		return nil, fmt.Errorf("preload scripts on %s: %w", server, err)
	}

	rep := &report{Server: server, SKU: sku, Buyers: cfg.Buyers, Stock: cfg.Stock, Qty: cfg.Qty, Limit: cfg.Limit, Concurrency: cfg.Concurrency, Coalesce: cfg.Coalesce}
	outcome := make([]int8, cfg.Buyers) // 1 sold, 2 refused, 3 error
	var retried atomic.Int64
	latency := make([]time.Duration, cfg.Buyers)
	var next, done atomic.Int64
	var firstErr atomic.Value

	stopProgress := startProgress(progress, cfg.Buyers, &done)
	start := time.Now()
	var wg sync.WaitGroup
	for range min(cfg.Concurrency, cfg.Buyers) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				i := int(next.Add(1)) - 1
				if i >= cfg.Buyers || ctx.Err() != nil {
					return
				}
				// Buyer i places order o<i>: the order id makes Deduct
				// idempotent, so a buyer whose call failed transiently tries
				// again with the same id and can never buy twice.
				buyer := "u" + strconv.Itoa(i)
				args := stock.DeductArgs{Order: "o" + strconv.Itoa(i), Buyer: buyer, Qty: int64(cfg.Qty), Limit: int64(cfg.Limit), At: time.Now()}
				t0 := time.Now()
				_, err := scripts.Deduct(ctx, k.Deduct(), args)
				for err != nil && runtime.IsTransient(err) && time.Since(t0) < patience {
					retried.Add(1)
					time.Sleep(50 * time.Millisecond)
					_, err = scripts.Deduct(ctx, k.Deduct(), args)
				}
				latency[i] = time.Since(t0)
				switch {
				case err == nil:
					outcome[i] = 1
				case errors.Is(err, stock.ErrOutOfStock), errors.Is(err, stock.ErrLimitExceeded):
					outcome[i] = 2
				default:
					outcome[i] = 3
					firstErr.CompareAndSwap(nil, err.Error())
				}
				done.Add(1)
			}
		}()
	}
	wg.Wait()
	elapsed := time.Since(start)
	stopProgress()
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("interrupted after %d of %d buyers", done.Load(), cfg.Buyers)
	}

	for _, o := range outcome {
		switch o {
		case 1:
			rep.Sold++
		case 2:
			rep.Refused++
		case 3:
			rep.Errors++
		}
	}
	rep.Retries = retried.Load()
	if e, ok := firstErr.Load().(string); ok {
		rep.FirstError = e
	}
	rep.setTiming(elapsed, latency)
	// Reconciliation reads every order record in one script: on a large
	// run it takes a moment, so it is a step of its own on the progress
	// writer, with its outcome.
	fmt.Fprintf(progress, "seckill: reconciling the stock counter with %d sales (stock.Reconcile)…\n", rep.Sold)
	t0 := time.Now()
	if err := rep.audit(ctx, scripts, k); err != nil {
		fmt.Fprintf(progress, "seckill: reconciliation failed: %v\n", err)
		return nil, fmt.Errorf("audit on %s: %w", server, err)
	}
	fmt.Fprintf(progress, "seckill: reconciled in %s: %s, %d orders recorded as sold, %d units left\n",
		time.Since(t0).Round(time.Millisecond), reconciled(rep.Differences), rep.Records, rep.StockLeft)
	return rep, nil
}

// connect returns a client and executor for cfg: the -redis servers, or an
// embedded miniredis. miniredis rejects the Redis 7 shebang line our scripts
// start with, so the embedded executor comments it out.
func connect(cfg config) (rueidis.Client, runtime.Executor, string, func(), error) {
	addrs := cfg.addrs()
	var mr *miniredis.Miniredis
	server := cfg.Redis
	if len(addrs) == 0 {
		mr = miniredis.NewMiniRedis()
		if err := mr.Start(); err != nil {
			return nil, nil, "", nil, fmt.Errorf("start embedded redis: %w", err)
		}
		addrs = []string{mr.Addr()}
		server = "embedded miniredis " + mr.Addr()
	}
	client, err := rueidis.NewClient(rueidis.ClientOption{
		InitAddress:  addrs,
		DisableCache: true, // no client-side caching: every read goes to the server
		// miniredis answers CLUSTER SLOTS as a one-node cluster; talk to it
		// as the single server it is.
		ForceSingleClient: mr != nil,
	})
	if err != nil {
		if mr != nil {
			mr.Close()
		}
		return nil, nil, "", nil, fmt.Errorf("connect to %s: %w", server, err)
	}
	var exec runtime.Executor = runtime.NewRueidisExecutor(client)
	if mr != nil {
		exec = runtime.WithoutShebang(exec)
	}
	if cfg.Coalesce {
		exec = runtime.NewCoalescer(exec)
	}
	if client.Mode() == rueidis.ClientModeCluster {
		server = "cluster " + server
	}
	return client, exec, server, func() {
		client.Close()
		if mr != nil {
			mr.Close()
		}
	}, nil
}

func randomID() string {
	var b [6]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}
