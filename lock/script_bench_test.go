package lock_test

import (
	"context"
	"strconv"
	"testing"
	"time"

	"github.com/luagen/luagen/lock/internal/scripts"
	"github.com/luagen/luagen/redistest"
	"github.com/luagen/luagen/runtime"
)

// BenchmarkScriptServerTime reports the server's own time per call of each
// path of the lock's scripts that a contended lock runs (INFO commandstats:
// EVALSHA's µs, which include the commands the script calls), n calls per
// path:
//
//   - acquire-free: a first acquire of a free lock nobody waits for;
//   - release-free: the last release with nobody waiting;
//   - acquire-queue: an acquire refused by the holder that joins the queue
//     (what every waiter of a contended lock sends first);
//   - release-handoff: the last release handing the lock to the head of
//     the queue (and publishing its wake message).
//
// It measures the scripts, not the client: run it when changing them.
func BenchmarkScriptServerTime(b *testing.B) {
	const n = 2000
	ctx := context.Background()
	srv := redistest.Start(b)
	rc := srv.Client(b)
	s := scripts.New(runtime.NewRueidisExecutor(rc))
	if err := s.Preload(ctx); err != nil {
		b.Fatal(err)
	}
	k := scripts.LockKeysFor("lock:", "bench")
	acquire := func(owner string, queueTTL time.Duration) scripts.AcquireResult {
		res, err := s.Acquire(ctx, scripts.AcquireKeys{Lock: k.Lock, Fence: k.Fence, Queue: k.Queue, Waits: k.Waits, Tomb: k.Tomb(owner)},
			scripts.AcquireArgs{Owner: owner, Attempt: 1, Lease: 30 * time.Second, FenceTTL: 24 * time.Hour,
				QueueTTL: queueTTL, GrantLease: 3 * time.Second, LatchTTL: 10 * time.Second})
		if err != nil {
			b.Fatal(err)
		}
		return res
	}
	release := func(owner string) {
		if _, err := s.Release(ctx, scripts.ReleaseKeys{Lock: k.Lock, Fence: k.Fence, Queue: k.Queue, Waits: k.Waits, Wake: k.Wake},
			scripts.ReleaseArgs{Owner: owner, FenceTTL: 24 * time.Hour, LatchTTL: 10 * time.Second}); err != nil {
			b.Fatal(err)
		}
	}
	owner := func(i int) string { return "client" + strconv.Itoa(i%8) + "." + strconv.Itoa(i) }
	measure := func(unit string, run func()) {
		srv.Do(b, "CONFIG", "RESETSTAT")
		run()
		calls, usec := srv.CommandStat(b, "evalsha")
		b.ReportMetric(float64(usec)/float64(calls), unit)
	}
	for range b.N {
		srv.Do(b, "FLUSHALL")
		// The lock is freed, or taken, with plain commands (not EVALSHA)
		// between the measured calls: EVALSHA's count must hold only the
		// path measured.
		measure("acquire-free-µs", func() {
			for i := range n {
				acquire(owner(i), 3*time.Second)
				b.StopTimer()
				if err := rc.Do(ctx, rc.B().Del().Key(k.Lock).Build()).Error(); err != nil {
					b.Fatal(err)
				}
				b.StartTimer()
			}
		})
		measure("release-free-µs", func() {
			for i := range n {
				b.StopTimer()
				if err := rc.Do(ctx, rc.B().Hset().Key(k.Lock).FieldValue().FieldValue(owner(i), "1").Build()).Error(); err != nil {
					b.Fatal(err)
				}
				b.StartTimer()
				release(owner(i))
			}
		})
		holder := "holder.0"
		acquire(holder, 0)
		measure("acquire-queue-µs", func() {
			for i := range n {
				if acquire(owner(i), 3*time.Second).Acquired {
					b.Fatal("acquired a held lock")
				}
			}
		})
		measure("release-handoff-µs", func() {
			release(holder)
			for i := range n - 1 {
				release(owner(i)) // hands to owner(i+1)
			}
		})
	}
}
