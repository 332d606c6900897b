// Command seckill is luagen's demo: N buyers race for S units of one SKU
// through the generated stock.Deduct, and the run checks that nothing was
// oversold and every sale left a purchase record.
//
// Usage:
//
//	go run ./examples/seckill [-buyers 5000] [-stock 300] [-qty 1] [-limit 0] [-concurrency 64] [-redis ADDR[,ADDR...]] [-json]
//
// Without -redis it starts an embedded in-process Redis (miniredis), so it
// runs with nothing installed. With -redis it uses that server; a
// comma-separated seed list, or any address of a cluster node, runs it on
// Redis Cluster (rueidis discovers the topology).
//
// Buyer i places order o<i>; stock.Deduct is idempotent per order id, so a
// buyer whose call fails transiently (a restart, a failover) retries with
// the same id and can never buy twice. At the end stock.Reconcile checks the
// stock counter against every order record.
//
// While buyers run it shows progress on stderr: a bar redrawn in place on a
// terminal, a "done/total" line a second otherwise; then the reconciliation
// step, a line before it and one with its outcome.
//
// It prints sold, refused (out of stock or over -limit), oversold (must be
// 0), errors, throughput and latency percentiles, or with -json one JSON
// object. The exit status is 1 when units were oversold, a sale has no
// purchase record, reconciliation finds a difference, the stock counter
// disagrees with the sales, or a buyer saw an error.
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
)

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

func run(argv []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("seckill", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var cfg config
	fs.IntVar(&cfg.Buyers, "buyers", 5000, "number of buyers; each tries to buy once")
	fs.IntVar(&cfg.Stock, "stock", 300, "units of the SKU on sale")
	fs.IntVar(&cfg.Qty, "qty", 1, "units each buyer asks for")
	fs.IntVar(&cfg.Limit, "limit", 0, "most units one buyer may hold; 0: no limit")
	fs.IntVar(&cfg.Concurrency, "concurrency", 64, "buyers in flight at once")
	fs.StringVar(&cfg.Redis, "redis", "", "Redis address host:port, or a comma-separated cluster seed list; empty: embedded miniredis")
	fs.StringVar(&cfg.SKU, "sku", "", "SKU id used in the keys (default: a fresh random id per run)")
	fs.BoolVar(&cfg.JSON, "json", false, "print one JSON object instead of text")
	fs.BoolVar(&cfg.Coalesce, "coalesce", false, "merge concurrent Deducts of the SKU into server-side runs (runtime.NewCoalescer; stock.Deduct has ---@coalesce)")
	fs.Usage = func() {
		fmt.Fprintln(stderr, "usage: seckill [flags]\n\nN buyers race for S units of one SKU through the generated stock.Deduct.\n\nflags:")
		fs.PrintDefaults()
	}
	if err := fs.Parse(argv); err != nil {
		if err == flag.ErrHelp {
			return 0
		}
		return 2
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "seckill: unexpected argument %q\n", fs.Arg(0))
		fs.Usage()
		return 2
	}
	if err := cfg.validate(); err != nil {
		fmt.Fprintf(stderr, "seckill: %v\n", err)
		return 2
	}

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	rep, err := race(ctx, cfg, stderr)
	if err != nil {
		fmt.Fprintf(stderr, "seckill: %v\n", err)
		return 1
	}
	if cfg.JSON {
		enc := json.NewEncoder(stdout)
		if err := enc.Encode(rep); err != nil {
			fmt.Fprintf(stderr, "seckill: %v\n", err)
			return 1
		}
	} else {
		rep.print(stdout)
	}
	if problems := rep.problems(); len(problems) > 0 {
		fmt.Fprintf(stderr, "seckill: FAILED: %s\n", strings.Join(problems, "; "))
		return 1
	}
	return 0
}
