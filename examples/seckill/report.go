package main

import (
	"context"
	"fmt"
	"io"
	"slices"
	"strconv"
	"time"

	"github.com/redis/rueidis"
)

// report is the outcome of one race. Its JSON keys are the demo's contract:
// sold, refused, oversold, errors, ops_per_sec and p99_us at least.
type report struct {
	Server      string `json:"server"`
	SKU         string `json:"sku"`
	Buyers      int    `json:"buyers"`
	Stock       int    `json:"stock"`
	Qty         int    `json:"qty"`
	Concurrency int    `json:"concurrency"`

	Sold     int `json:"sold"`     // buyers whose Deduct succeeded
	Refused  int `json:"refused"`  // buyers told ErrOutOfStock
	Oversold int `json:"oversold"` // units sold beyond the stock; must be 0
	Errors   int `json:"errors"`   // buyers who got any other error

	StockLeft  int64  `json:"stock_left"` // the counter after the race
	Records    int    `json:"records"`    // purchase records found for sold buyers
	FirstError string `json:"first_error,omitempty"`

	ElapsedMS float64 `json:"elapsed_ms"`
	OpsPerSec float64 `json:"ops_per_sec"` // Deduct calls per second, all outcomes
	P50us     int64   `json:"p50_us"`
	P99us     int64   `json:"p99_us"`
	MaxUs     int64   `json:"max_us"`
}

func (r *report) setTiming(elapsed time.Duration, latency []time.Duration) {
	r.ElapsedMS = float64(elapsed.Microseconds()) / 1000
	if elapsed > 0 {
		r.OpsPerSec = float64(len(latency)) / elapsed.Seconds()
	}
	slices.Sort(latency)
	r.P50us = percentile(latency, 0.50).Microseconds()
	r.P99us = percentile(latency, 0.99).Microseconds()
	r.MaxUs = latency[len(latency)-1].Microseconds()
}

// percentile returns the nearest-rank percentile of sorted.
func percentile(sorted []time.Duration, p float64) time.Duration {
	i := int(p*float64(len(sorted))+0.5) - 1
	return sorted[max(0, min(i, len(sorted)-1))]
}

// audit reads the keyspace after the race: the stock counter, and one
// purchase record per sold buyer (EXISTS in batches; the keys share a hash
// tag, so a batch is one slot even on a cluster).
func (r *report) audit(ctx context.Context, c rueidis.Client, k keys, sold []string) error {
	left, err := c.Do(ctx, c.B().Get().Key(k.stock()).Build()).AsInt64()
	if err != nil {
		return fmt.Errorf("GET %s: %w", k.stock(), err)
	}
	r.StockLeft = left
	r.Oversold = max(0, r.Sold*r.Qty-r.Stock, int(-left))
	for batch := range slices.Chunk(sold, 500) {
		ks := make([]string, len(batch))
		for i, b := range batch {
			ks[i] = k.log(b)
		}
		n, err := c.Do(ctx, c.B().Exists().Key(ks...).Build()).AsInt64()
		if err != nil {
			return fmt.Errorf("EXISTS purchase records: %w", err)
		}
		r.Records += int(n)
	}
	return nil
}

// problems lists what makes the run a failure.
func (r *report) problems() []string {
	var p []string
	if r.Oversold > 0 {
		p = append(p, fmt.Sprintf("oversold %d units", r.Oversold))
	}
	if want := int64(r.Stock - r.Sold*r.Qty); r.StockLeft != want {
		p = append(p, fmt.Sprintf("stock left %d, want stock - sold*qty = %d", r.StockLeft, want))
	}
	if r.Records != r.Sold {
		p = append(p, fmt.Sprintf("%d purchase records for %d sales", r.Records, r.Sold))
	}
	if r.Errors > 0 {
		p = append(p, fmt.Sprintf("%d buyers got errors (first: %s)", r.Errors, r.FirstError))
	}
	return p
}

func (r *report) print(w io.Writer) {
	fmt.Fprintf(w, "seckill on %s: %d buyers × %d unit(s) for %d units of %s, %d in flight\n",
		r.Server, r.Buyers, r.Qty, r.Stock, r.SKU, r.Concurrency)
	fmt.Fprintf(w, "  sold        %d\n", r.Sold)
	fmt.Fprintf(w, "  refused     %d (out of stock)\n", r.Refused)
	fmt.Fprintf(w, "  oversold    %d\n", r.Oversold)
	fmt.Fprintf(w, "  errors      %d\n", r.Errors)
	fmt.Fprintf(w, "  stock left  %d\n", r.StockLeft)
	fmt.Fprintf(w, "  records     %d purchase records\n", r.Records)
	fmt.Fprintf(w, "  throughput  %s deducts/s over %s ms\n", strconv.FormatFloat(r.OpsPerSec, 'f', 0, 64), strconv.FormatFloat(r.ElapsedMS, 'f', 1, 64))
	fmt.Fprintf(w, "  latency     p50 %d µs, p99 %d µs, max %d µs\n", r.P50us, r.P99us, r.MaxUs)
}
