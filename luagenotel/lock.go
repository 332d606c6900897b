package luagenotel

import (
	"context"
	"errors"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"

	"github.com/luagen/luagen/lock"
)

// Attribute keys of the lock's metrics.
const (
	// AttrLockResult is how a Lock/TryLock call ended: "acquired",
	// "timed_out" or "failed".
	AttrLockResult = attribute.Key("luagen.lock.result")
	// AttrLockHandoff is set on acquisitions a release handed over.
	AttrLockHandoff = attribute.Key("luagen.lock.handoff")
	// AttrLockLost says why a hold was lost: "lost" (the key was gone or
	// held by another owner) or "lease_expired".
	AttrLockLost = attribute.Key("luagen.lock.lost")
)

// waitBuckets span a free lock (well under a millisecond) to long waits
// behind slow holders, in seconds.
var waitBuckets = []float64{0.0005, 0.001, 0.005, 0.01, 0.05, 0.1, 0.5, 1, 5, 10, 30}

// lockInstruments are the lock's metrics. Lock names are left out of
// their attributes: a service that locks per order id would make one
// series per order.
type lockInstruments struct {
	acquires  metric.Int64Counter     // luagen.lock.acquires {result, handoff}
	wait      metric.Float64Histogram // luagen.lock.wait.duration {result}
	attempts  metric.Int64Counter     // luagen.lock.attempts
	refusals  metric.Int64Counter     // luagen.lock.refusals
	releases  metric.Int64Counter     // luagen.lock.releases
	hold      metric.Float64Histogram // luagen.lock.hold.duration
	renewals  metric.Int64Counter     // luagen.lock.renewals {result}
	losses    metric.Int64Counter     // luagen.lock.losses {lost}
	acquired  metric.MeasurementOption
	handedOff metric.MeasurementOption
	timedOut  metric.MeasurementOption
	failed    metric.MeasurementOption
	renewOK   metric.MeasurementOption
	renewFail metric.MeasurementOption
	lost      metric.MeasurementOption
	expired   metric.MeasurementOption
}

func (l *lockInstruments) init(m metric.Meter) error {
	var errs [8]error
	l.acquires, errs[0] = m.Int64Counter("luagen.lock.acquires",
		metric.WithDescription("Lock and TryLock calls, by result (acquired, timed_out, failed) and whether a release handed the lock over."),
		metric.WithUnit("{call}"))
	l.wait, errs[1] = m.Float64Histogram("luagen.lock.wait.duration",
		metric.WithDescription("Time from Lock/TryLock to its result, by result."),
		metric.WithUnit("s"), metric.WithExplicitBucketBoundaries(waitBuckets...))
	l.attempts, errs[2] = m.Int64Counter("luagen.lock.attempts",
		metric.WithDescription("Acquire script calls."), metric.WithUnit("{attempt}"))
	l.refusals, errs[3] = m.Int64Counter("luagen.lock.refusals",
		metric.WithDescription("Acquire attempts the server refused: another owner held the lock or waiters were ahead."),
		metric.WithUnit("{attempt}"))
	l.releases, errs[4] = m.Int64Counter("luagen.lock.releases",
		metric.WithDescription("Unlock calls that released a hold."), metric.WithUnit("{call}"))
	l.hold, errs[5] = m.Float64Histogram("luagen.lock.hold.duration",
		metric.WithDescription("How long a lock was held, from its first acquire to its last release or its loss."),
		metric.WithUnit("s"), metric.WithExplicitBucketBoundaries(waitBuckets...))
	l.renewals, errs[6] = m.Int64Counter("luagen.lock.renewals",
		metric.WithDescription("Watchdog lease renewals, by result (ok, failed)."), metric.WithUnit("{renewal}"))
	l.losses, errs[7] = m.Int64Counter("luagen.lock.losses",
		metric.WithDescription("Holds that learned their lock was gone, by reason (lost, lease_expired)."), metric.WithUnit("{hold}"))
	set := func(kvs ...attribute.KeyValue) metric.MeasurementOption {
		return metric.WithAttributeSet(attribute.NewSet(kvs...))
	}
	l.acquired = set(AttrLockResult.String("acquired"), AttrLockHandoff.Bool(false))
	l.handedOff = set(AttrLockResult.String("acquired"), AttrLockHandoff.Bool(true))
	l.timedOut = set(AttrLockResult.String("timed_out"))
	l.failed = set(AttrLockResult.String("failed"))
	l.renewOK = set(AttrLockResult.String("ok"))
	l.renewFail = set(AttrLockResult.String("failed"))
	l.lost = set(AttrLockLost.String("lost"))
	l.expired = set(AttrLockLost.String("lease_expired"))
	return errors.Join(errs[:]...)
}

// LockEvents returns a lock event hook that records the lock's metrics on
// h's meter; pass it to lock.WithHook (on NewClient for every Mutex, or
// on New for one):
//
//   - luagen.lock.acquires (counter): Lock/TryLock results, with
//     luagen.lock.result acquired / timed_out / failed and, for acquired,
//     luagen.lock.handoff (a release handed the lock over);
//   - luagen.lock.wait.duration (histogram, s): the wait of each result;
//   - luagen.lock.attempts and luagen.lock.refusals (counters): acquire
//     script calls and those another owner or earlier waiters refused;
//   - luagen.lock.releases (counter) and luagen.lock.hold.duration
//     (histogram, s; at the last release of a hold and at a loss);
//   - luagen.lock.renewals (counter, luagen.lock.result ok / failed) and
//     luagen.lock.losses (counter, luagen.lock.lost lost / lease_expired).
//
// Lock names are not recorded (a lock per order id would make a series
// per order). The events carry no context, so the metrics are recorded
// with context.Background().
func (h *Hook) LockEvents() func(lock.Event) {
	l := &h.lock
	return func(e lock.Event) {
		ctx := context.Background()
		switch e.Kind {
		case lock.EventAttempt:
			l.attempts.Add(ctx, 1)
		case lock.EventRefused:
			l.refusals.Add(ctx, 1)
		case lock.EventAcquired:
			opt := l.acquired
			if e.Trigger == lock.TriggerHandoff {
				opt = l.handedOff
			}
			l.acquires.Add(ctx, 1, opt)
			l.wait.Record(ctx, e.Wait.Seconds(), opt)
		case lock.EventTimedOut:
			l.acquires.Add(ctx, 1, l.timedOut)
			l.wait.Record(ctx, e.Wait.Seconds(), l.timedOut)
		case lock.EventAcquireFailed:
			l.acquires.Add(ctx, 1, l.failed)
			l.wait.Record(ctx, e.Wait.Seconds(), l.failed)
		case lock.EventReleased:
			l.releases.Add(ctx, 1)
			if e.HoldCount == 0 {
				l.hold.Record(ctx, e.Hold.Seconds())
			}
		case lock.EventRenewed:
			l.renewals.Add(ctx, 1, l.renewOK)
		case lock.EventRenewFailed:
			l.renewals.Add(ctx, 1, l.renewFail)
		case lock.EventLost:
			opt := l.lost
			if errors.Is(e.Err, lock.ErrLeaseExpired) {
				opt = l.expired
			}
			l.losses.Add(ctx, 1, opt)
			l.hold.Record(ctx, e.Hold.Seconds())
		}
	}
}
