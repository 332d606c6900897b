package main

import (
	"context"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/luagen/luagen/stock"
)

// report is the outcome of one race. Its JSON keys are the demo's contract:
// sold, refused, oversold, errors, ops_per_sec and p99_us at least.
type report struct {
	Server      string `json:"server"`
	SKU         string `json:"sku"`
	Buyers      int    `json:"buyers"`
	Stock       int    `json:"stock"`
	Qty         int    `json:"qty"`
	Limit       int    `json:"limit"` // units per buyer; 0: no limit
	Concurrency int    `json:"concurrency"`
	Coalesce    bool   `json:"coalesce"` // concurrent Deducts merged by runtime.NewCoalescer

	Sold      int `json:"sold"`       // buyers whose Deduct succeeded (orders, not units)
	UnitsSold int `json:"units_sold"` // sold × qty
	Refused   int `json:"refused"`    // buyers told ErrOutOfStock or ErrLimitExceeded
	Oversold  int `json:"oversold"`   // units sold beyond the stock; must be 0
	Errors    int `json:"errors"`     // buyers who got any other error

	Retries     int64    `json:"retries"`     // calls repeated with the same order id after a transient error
	StockLeft   int64    `json:"stock_left"`  // the counter after the race
	Records     int64    `json:"records"`     // orders recorded as sold
	Differences []string `json:"differences"` // what stock.Reconcile found; must be empty
	FirstError  string   `json:"first_error,omitempty"`

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

// audit reconciles the SKU after the race (stock.Reconcile: the counter
// against the sold orders' records and the buyer counters, read in one
// atomic script) and compares it with what the buyers were told.
func (r *report) audit(ctx context.Context, s *stock.Scripts, k stock.SKUKeys) error {
	rec, err := s.Reconcile(ctx, k.Audit(), int64(r.Stock))
	if err != nil {
		return err
	}
	r.StockLeft = rec.Left
	r.Records = rec.SoldOrders
	r.UnitsSold = r.Sold * r.Qty
	r.Oversold = max(0, r.UnitsSold-r.Stock, int(-rec.Left))
	r.Differences = []string{}
	for _, d := range rec.Differences {
		r.Differences = append(r.Differences, d.String())
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
	if r.Records != int64(r.Sold) {
		p = append(p, fmt.Sprintf("%d purchase records for %d sales", r.Records, r.Sold))
	}
	if len(r.Differences) > 0 {
		p = append(p, "reconciliation: "+strings.Join(r.Differences, "; "))
	}
	if r.Errors > 0 {
		p = append(p, fmt.Sprintf("%d buyers got errors (first: %s)", r.Errors, r.FirstError))
	}
	return p
}

func reconciled(diffs []string) string {
	if len(diffs) == 0 {
		return "0 differences"
	}
	return strconv.Itoa(len(diffs)) + " differences"
}

func (r *report) print(w io.Writer) {
	merged := ""
	if r.Coalesce {
		merged = ", coalesced"
	}
	fmt.Fprintf(w, "seckill on %s: %d buyers × %d unit(s) for %d units of %s, %d in flight%s\n",
		r.Server, r.Buyers, r.Qty, r.Stock, r.SKU, r.Concurrency, merged)
	fmt.Fprintf(w, "  sold        %d orders, %d units\n", r.Sold, r.UnitsSold)
	fmt.Fprintf(w, "  refused     %d (out of stock or over the limit)\n", r.Refused)
	fmt.Fprintf(w, "  oversold    %d\n", r.Oversold)
	fmt.Fprintf(w, "  errors      %d\n", r.Errors)
	fmt.Fprintf(w, "  stock left  %d\n", r.StockLeft)
	fmt.Fprintf(w, "  records     %d orders recorded as sold; reconciliation: %s\n", r.Records, reconciled(r.Differences))
	fmt.Fprintf(w, "  retries     %d (same order id, after transient errors)\n", r.Retries)
	fmt.Fprintf(w, "  throughput  %s deducts/s over %s ms\n", strconv.FormatFloat(r.OpsPerSec, 'f', 0, 64), strconv.FormatFloat(r.ElapsedMS, 'f', 1, 64))
	fmt.Fprintf(w, "  latency     p50 %d µs, p99 %d µs, max %d µs\n", r.P50us, r.P99us, r.MaxUs)
}
