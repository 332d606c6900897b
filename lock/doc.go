// Package lock is a reentrant Redis lock with Redisson's RLock semantics
// and Go idioms: a watchdog that renews the lease while the lock is held, a
// context that is cancelled when the lock is lost, waiters woken by the
// holder's unlock notification, fencing tokens, and retries that are safe
// for non-idempotent scripts.
//
//	c, err := lock.NewClient(rc) // rc: any rueidis.Client, single node or cluster
//	defer c.Close()
//	m, err := lock.New(c, "order:42")
//	held, err := m.Lock(ctx) // or m.TryLock(ctx, 100*time.Millisecond)
//	if err != nil { ... }
//	defer m.Unlock(ctx)
//	// work under held: it is cancelled if the lock is lost
//
// # Semantics
//
// A Mutex is one owner (a random 128-bit token) of one named lock. The lock
// is a Redis hash owner → hold count with a PEXPIRE lease: acquiring again
// through the same Mutex raises the hold count, each Unlock lowers it, and
// the last Unlock deletes the key and publishes an unlock message (or
// hands the lock to a waiting Mutex of the same Client: see Handoffs).
// Another owner is refused and told the holder's remaining lease (PTTL).
// An Unlock by an owner that does not hold the lock changes nothing and
// returns ErrNotHeld.
//
// Without WithLease the lease is DefaultWatchdogLease (30 s) and a watchdog
// renews it every lease/3, each time from "now": the lease is set to its
// full length when the renewal runs, never added to the previous deadline.
// The watchdog stops on the last Unlock, when the context given to Lock
// ends, and when a renewal finds the lock gone; a renewal that fails to get
// an answer is retried while the lease lasts. With WithLease(d) nothing
// renews the lock and the held context ends after d. Either way the
// holder's idea of validity runs on Go's monotonic clock, counted from
// before the acquire or renewal was sent, less 1 % for clock drift: when it
// runs out without a successful renewal the held context is cancelled, so a
// holder that was paused (GC, SIGSTOP, a VM migration) learns of the loss as
// soon as it runs again.
//
// Lock waits without a bound (ctx ends it), TryLock at most a given wait.
// A waiter first tries once; when refused it subscribes to the lock's
// unlock channel, tries again (the lock may have been released while it
// subscribed; not needed when its Client's subscription was confirmed
// before the first try) and then sleeps until a notification or a fallback
// poll after the holder's remaining lease less a jitter (see WaitStrategy).
// All waiters of one Client share one subscription per lock name, on
// rueidis' shared pub/sub connection; each message wakes one of them. A
// lost message costs at most one lease, never a hang, and nobody spins.
//
// # Handoffs
//
// Within one Client the lock passes without an unlock message: a Mutex that
// sleeps waiting for a lock enlists with its Client, and the release of the
// last hold of another Mutex of that Client gives the lock to the
// longest-waiting one in the release's own script (Handoff), then wakes it
// in-process. The heir holds one hold, with its own lease, a new fencing
// token and its watchdog started from when the Handoff was sent, and a
// contended section costs one round trip instead of two plus a pub/sub hop.
// A Mutex that finds another Mutex of its Client holding the lock waits
// for it without an attempt the server would refuse.
//
// The grant is recorded in a latch of the heir's as the answer of an
// Acquire call of the heir, so it is never lost: a retried Handoff returns
// it; when the releaser never learns the outcome, the heir's next attempt
// runs under that latch, sealed, and gets the grant if there was one (and
// nothing later can grant it); an heir whose context ends, or whose Client
// closes, while a Handoff to it is under way gives the grant back (Abandon)
// and its next Lock waits for that. The worst case, a Handoff that never
// ran and a releaser that never learned it, is the releaser's hold running
// out its lease, as for any release whose outcome is unknown.
//
// After WaitStrategy.MaxHandoffs handoffs in a row (DefaultMaxHandoffs), the
// next release frees the lock and publishes as usual, so waiters of other
// Clients (other processes) get their turn: they compete for it on the same
// terms as before handoffs existed, at least once every MaxHandoffs + 1
// sections. A negative MaxHandoffs turns handoffs off.
//
// # Retries and latches
//
// A script call whose reply is lost (connection reset, timeout below the
// caller's context, LOADING, BUSY, TRYAGAIN, CLUSTERDOWN, READONLY) is
// retried for up to the retry window (DefaultRetryWindow, WithRetryWindow).
// Acquire and Release are not idempotent, so each call carries a latch key
// of its own in which the script records its answer: a retry returns the
// first answer rather than counting or releasing a hold twice (the bug of
// Redisson issues 4871 and 7367, fixed there the same way). The next call
// of the same Mutex deletes the latches of calls whose replies arrived, so
// at rest a Mutex leaves at most one latch (living 2 × the retry window).
//
// An acquire whose outcome is unknown because ctx ended mid-call, or
// because the retry window ran out, is rolled back in the background by
// the Abandon script: if it ran, its hold is given back; if it has not run
// yet, its latch is marked so that it does nothing when it arrives. A
// cancelled acquire is never renewed.
//
// # Fencing
//
// Every first acquire (the lock was free) draws a fencing token,
// max(previous token + 1, the server's clock in µs), from a counter in the
// lock's hash slot; Mutex.Token returns it to the holder. Pass it along with
// writes so that the store can refuse a write from a holder that has lost
// the lock to a later one.
//
// # Keys
//
// For a lock called name and the prefix p (DefaultKeyPrefix "lock:"):
//
//	p{name}                        hash owner → hold count, PEXPIRE lease
//	p{name}:fence                  fencing counter (string), expires WithFenceTTL after the last first acquire
//	p{name}:latch:<owner>.<n>      one script call's answer (or a handoff's grant), expires after 2 × the retry window
//	p{name}:unlock                 pub/sub channel of unlock messages (not a key)
//
// All share the {name} hash tag, so on Redis Cluster every script touches
// one slot, and the unlock messages travel with sharded pub/sub (SPUBLISH
// and SSUBSCRIBE) within the lock's shard. On a single server or Sentinel
// they use PUBLISH and SUBSCRIBE, which every Redis version supports.
//
// # Metrics
//
// WithHook receives an Event for every attempt, acquisition, timeout,
// failure, renewal, release and loss, with wait and hold times; see
// EventKind for the three numbers to alert on (acquisition success rate,
// wait p99, timeout rate) and example_test.go for a wiring to expvar.
//
// # Scripts
//
// The scripts live in lua/lock and are wrapped by generated code
// (NewScripts and the methods of Scripts: Acquire, Release, Handoff,
// Renew, Abandon, ForceUnlock and Inspect); Mutex and Client are written by hand
// on top of them and run them through a runtime.Executor, which tests
// replace with one that injects faults (WithExecutor).
package lock

//go:generate go tool luagen generate -new NewScripts ../lua/lock
