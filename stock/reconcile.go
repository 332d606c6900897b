package stock

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// maxListed is how many mismatching buyers and malformed records Reconcile
// lists one by one; the rest are counted.
const maxListed = 100

// Reconciliation is what [Scripts.Reconcile] found for one SKU: the sums
// the Audit script read in one atomic step, and every way they disagree.
type Reconciliation struct {
	AuditReply
	// Initial is the number of units put on sale, as the caller said.
	Initial int64
	// Differences lists each disagreement; empty when the SKU reconciles.
	Differences []Difference
}

// OK reports whether the SKU reconciles: no differences.
func (r *Reconciliation) OK() bool { return len(r.Differences) == 0 }

// Difference is one disagreement between the stock counter, the order
// records and the buyer counters. Want is what the order records imply and
// Got what the counter holds, both in units.
type Difference struct {
	// Check names the comparison:
	//   - "stock": the counter against Initial minus the sold orders' units
	//     (Got < Want: units left stock without a record of who bought them;
	//     Got > Want: records of sales whose units are still in stock);
	//   - "oversold": the counter is negative;
	//   - "buyers": the buyer counters' sum against the sold units;
	//   - "buyer": one buyer's counter against their sold orders (Subject);
	//   - "record": an order record that does not parse (Subject).
	Check string
	// Subject is the buyer or order id concerned; empty for the SKU.
	Subject string
	Want    int64
	Got     int64
	// Detail says it in words.
	Detail string
}

func (d Difference) String() string {
	if d.Subject != "" {
		return d.Check + " " + strconv.Quote(d.Subject) + ": " + d.Detail
	}
	return d.Check + ": " + d.Detail
}

// Reconcile checks one SKU: initial (the units put on sale; a cancelled
// order's units are back in stock, so initial does not change with
// cancellations) minus the units of every sold order must equal the stock
// counter, and each buyer's counter must equal the units of their sold
// orders. It reads everything in one atomic, read-only script (Audit), so a
// sale running meanwhile cannot make a difference appear; that script reads
// every record, so run Reconcile after a sale or on a quiet shard. It
// returns an error only when it could not check (network, ErrNoSuchSKU,
// initial < 0); differences are in the result.
func (s *Scripts) Reconcile(ctx context.Context, keys AuditKeys, initial int64) (*Reconciliation, error) {
	if initial < 0 {
		return nil, fmt.Errorf("stock.Reconcile: initial stock %d is negative", initial)
	}
	a, err := s.Audit(ctx, keys, AuditArgs{Max: maxListed})
	if err != nil {
		return nil, err
	}
	r := &Reconciliation{AuditReply: a, Initial: initial}
	add := func(check, subject string, want, got int64, format string, args ...any) {
		r.Differences = append(r.Differences, Difference{Check: check, Subject: subject, Want: want, Got: got, Detail: fmt.Sprintf(format, args...)})
	}
	if want := initial - a.SoldUnits; a.Left != want {
		if a.Left < want {
			add("stock", "", want, a.Left, "%d units left of %d, but sold orders record only %d units: %d units left stock without a purchase record",
				a.Left, initial, a.SoldUnits, want-a.Left)
		} else {
			add("stock", "", want, a.Left, "%d units left of %d, but sold orders record %d units: %d recorded units never left stock",
				a.Left, initial, a.SoldUnits, a.Left-want)
		}
	}
	if a.Left < 0 {
		add("oversold", "", 0, a.Left, "the stock counter is %d: %d units oversold", a.Left, -a.Left)
	}
	if a.BuyerUnits != a.SoldUnits {
		add("buyers", "", a.SoldUnits, a.BuyerUnits, "buyer counters sum to %d units, sold orders to %d", a.BuyerUnits, a.SoldUnits)
	}
	for _, line := range a.BuyerDiffList {
		// "counted held buyer": the buyer comes last, it may hold spaces.
		f := strings.SplitN(line, " ", 3)
		if len(f) != 3 {
			return nil, errors.New("stock.Reconcile: malformed buyer difference " + strconv.Quote(line))
		}
		want, err1 := strconv.ParseInt(f[0], 10, 64)
		got, err2 := strconv.ParseInt(f[1], 10, 64)
		if err := errors.Join(err1, err2); err != nil {
			return nil, fmt.Errorf("stock.Reconcile: malformed buyer difference %q: %w", line, err)
		}
		add("buyer", f[2], want, got, "counter holds %d units, sold orders %d", got, want)
	}
	if n := a.BuyerDiffs - int64(len(a.BuyerDiffList)); n > 0 {
		add("buyer", "", 0, 0, "%d more buyers differ (only %d are listed)", n, maxListed)
	}
	for _, id := range a.MalformedIDs {
		add("record", id, 0, 0, "the record does not parse as \"state qty at reply buyer\"")
	}
	if n := a.Malformed - int64(len(a.MalformedIDs)); n > 0 {
		add("record", "", 0, 0, "%d more malformed records (only %d are listed)", n, maxListed)
	}
	return r, nil
}
