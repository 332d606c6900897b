// Package lock is a reentrant Redis lock with Redisson's RLock semantics
// and Go idioms: a watchdog that renews the lease while the lock is held, a
// context that is cancelled when the lock is lost, a fair queue of waiters
// on the server to which a release hands the lock directly, fencing
// tokens, and retries that are safe for non-idempotent scripts.
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
// A Mutex is one owner (a token with 128 random bits) of one named lock.
// The lock is a Redis hash owner → hold count with a PEXPIRE lease:
// acquiring again through the same Mutex raises the hold count, each
// Unlock lowers it, and the last Unlock deletes the key, or hands the lock
// to the first waiter (see Waiting and handoff).
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
// The holder's validity never outlasts the server's lease, nor falls far
// short of it: a reply that came late (a retry through an outage, a
// stalled server) counts from the send of the try that got it, and when
// that leaves less than half the lease Lock asks the server for the
// hold's PTTL once more. A
// hold the holder gave up on its own clock is given back on the server at
// once (the server may still count it: a renewal that ran but answered
// too late), so nobody waits out its lease, and the next Lock of the Mutex
// waits for that, so it never takes the same hold, and its fencing token,
// up again. No two sections report one token.
//
// Lock waits without a bound (ctx ends it); against a server that does
// not answer it fails within the retry window with ErrNoAnswer. TryLock
// waits at most a given wait plus WaitGrace (25 ms), whatever the server
// does. TryLock reports (false, nil) only when another owner holds the
// lock; a wait that ended with no answer from the server is ErrNoAnswer.
//
// # Waiting and handoff
//
// Waiters queue on the server, in FIFO order across every process: a
// refused attempt puts its owner at the end of the lock's queue (a list)
// with a deadline (QueueTTL from now, renewed by each later attempt). The
// release of the last hold does not free the lock when someone is waiting:
// in the same script it hands the lock to the first waiter whose deadline
// has not passed, with that waiter's lease and a new fencing token, and
// publishes one message ("owner token") on the channel of that waiter's
// Client only. The waiter's Mutex is woken in-process and holds the lock
// without a round trip of its own, so a contended lock costs about one
// round trip per section, and nobody waits behind a newcomer. Waiters in
// this process and in others are served by this one mechanism.
//
// With WaitStrategy.PollOnly (no pub/sub) a waiter learns of a handoff
// only at its next poll, so strict FIFO would idle the lock for a poll at
// every section. Polling waiters follow Go's sync.Mutex instead. In normal
// mode a release frees the lock and whoever asks first takes it: the
// releaser asking again, a newcomer, or a waiter, which then leaves the
// queue. Once the first waiter in the queue has waited PollStarvation
// (7 ms), the lock switches to starvation mode: releases hand it to the
// head of the queue, and newcomers queue behind, until the head is a
// waiter that has waited less. Normal mode keeps the lock busy (a holder
// that asks again needs no other client to wake up); starvation mode
// bounds how long a waiter is passed over. A contended lock so passes in
// bursts of about PollStarvation, each followed by a section for every
// waiter that waited that long, in queue order.
// Waiters woken by messages are never passed: a queue whose first live
// waiter is one is strict FIFO.
//
// A waiter subscribes to its Client's wake channel after its first refusal
// (one subscription per Client and lock, shared by its waiters) and
// attempts again once subscribed, unless the subscription was ready
// before; an attempt that finds the lock already handed to its owner takes
// it. A lost message costs a fallback poll, at most QueueTTL/3 later. A
// message that arrives after its grant was taken is recognised by its
// token and ignored.
//
// A waiter that gives up (ctx ends, TryLock's wait passes, Close) leaves
// the queue with the Abandon script, which also gives back a lock handed
// to it meanwhile. A waiter that died without leaving keeps its place for
// at most QueueTTL (DefaultQueueTTL, 3 s); a lock handed to it in that time
// holds for min(watchdog lease, QueueTTL) (the heir's watchdog extends it
// to the full lease at once), so a dead waiter stalls the lock at most
// 2 × QueueTTL. With WithLease(d) the grant is d.
//
// # Concurrency
//
// A Mutex is one owner. Its Lock, TryLock and Unlock run one at a time;
// goroutines sharing a Mutex all hold the lock while any of them does
// (each Lock raises the hold count, each Unlock lowers it), see one Token,
// and their held contexts end together with the last Unlock.
//
// # Retries and latches
//
// A script call whose reply is lost (connection reset, timeout below the
// caller's context, LOADING, BUSY, TRYAGAIN, CLUSTERDOWN, READONLY) is
// retried for up to the retry window (DefaultRetryWindow, WithRetryWindow),
// and no try outlasts the window, so Lock on a dead server fails within it.
// A first acquire needs no latch: a retry that finds its owner holding the
// lock takes that hold as it is. A last release needs none: a retry that
// finds the hold gone reports it released. The two calls that are not
// idempotent otherwise, a reentrant acquire and a release that leaves
// holds, record their answer in a latch key of their own (living 2 × the
// retry window), so a retry returns the first answer rather than counting
// or releasing a hold twice (Redisson issues 4871 and 7367).
//
// An acquire whose outcome is unknown (ctx ended mid-call, TryLock's grace
// passed, the retry window ran out) is rolled back in the background by
// Abandon: every attempt of the owner up to it is marked dead in a tomb
// key, so one that arrives later does nothing; a hold it took is given
// back. A cancelled acquire is never renewed. Should the rollback itself
// not get through, the owner's place in the queue expires with QueueTTL
// and a hold it took with its lease.
//
// # Failover
//
// Redis replicates asynchronously: a hold the primary granted may not have
// reached any replica when the primary dies, and the replica that Sentinel
// or the cluster promotes then has no hold, so another owner acquires the
// lock while the first still holds it. Every Redis lock design names this
// its core risk, and the fencing token does not help against it (the new
// primary draws its tokens from the server clock, so they still rise, but
// both holders hold valid ones).
//
// WithReplicas(n, timeout) (Redisson's checkLockSyncedSlaves) counts a
// hold only once n replicas acknowledged it: each acquire and each
// renewal is followed by WAIT n timeout on the same connection, in the
// same round trip (runtime.ReplicaWaiter; one rueidis DoMulti, one
// go-redis pipeline on the key's primary), so WAIT waits for exactly that
// script's writes, and its reply is always checked. An acquire fewer
// replicas acknowledged is rolled back (Abandon; a reentrant acquire's
// extra hold is released) and, once the rollback has answered, Lock or
// TryLock returns a *ReplicaError{Want, Acked} (errors.Is
// ErrNotReplicated): nothing is held at that moment. Redis checks a
// blocked WAIT's timeout in its event loop, up to 1/hz (100 ms) late; an
// attempt whose WAIT has not answered by TryLock's bound is rolled back at
// once, a *ReplicaError too when that gave back its hold. A renewal fewer
// acknowledged is a failed renewal (EventRenewFailed, retried sooner):
// the hold keeps the validity of its last acknowledged write. A handoff is
// acknowledged by the heir: the grant was written on the releaser's
// connection, which the heir's WAIT cannot cover, so a wake message makes
// the heir attempt at once; the attempt finds the grant, sets its lease
// anew and WAITs, and replicas that have that write have the grant too.
//
// The cases Redisson's users hit: the WAIT reply is checked on every call
// (redisson#3994 ignored it); WAIT goes to the node that ran the script,
// in the same round trip (redisson#4822: WAIT sent to a demoted node
// failed every acquire); a script sent to a demoted node fails with
// READONLY or MOVED before it runs and is retried within the retry window
// while the client moves to the new primary (rueidis on Sentinel's
// +switch-master and on MOVED, go-redis by closing a connection that
// answered READONLY); and a first acquire whose WAIT failed (redirected
// script, WAIT not) is attempted again: the retry finds its own hold and
// writes it anew, so no acquire fails for good after a failover
// (redisson#4706).
//
// What it guarantees: when Lock returns, n replicas had the hold, and a
// failover that promotes one of them keeps it. What it cannot: replication
// stays asynchronous, and WAIT "does not make Redis a strongly consistent
// store" (https://redis.io/docs/latest/commands/wait/). A hold is lost
// when every replica that acknowledged it dies with the primary, or when
// the failover promotes one that had not: Sentinel and the cluster prefer
// the replica with the largest offset, a best effort (redisson#5256); n
// equal to the number of replicas closes that gap at the price of refusing
// every acquire while any replica is down. A primary restarted without
// persistence before a failover, or a replica that loses the write in a
// restart of its own, lose it too. While too few replicas are up every
// acquire fails with a *ReplicaError after timeout; an operator who
// prefers the lock to keep working turns the option off (as many Redisson
// users do, redisson#4672), accepting the hazard. Use it where two holders
// cost more than a failed Lock during a replica outage, and one more
// replication round trip per acquire (see bench/lock) is affordable.
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
//	p{name}                      hash owner → hold count, PEXPIRE lease
//	p{name}:fence                fencing counter (string), expires WithFenceTTL after the last first acquire
//	p{name}:queue                list of waiting owners, oldest first; expires QueueTTL after the last attempt
//	p{name}:waits                hash owner → "deadline grantLease[ since starve]" (server ms), beside queue
//	p{name}:tomb:<owner>         the owner's highest abandoned attempt, expires after 2 × the retry window
//	p{name}:latch:<owner>.<n>    a reentrant acquire's or a partial release's answer, expires likewise
//	p{name}:wake:<client>        pub/sub channel of a Client's handoff messages (not a key)
//
// An owner token is its Client's random 128-bit id, a dot and a number.
// The layout is declared in the scripts' headers (the ---@keys family
// LockKeys and a ---@key template per key, in lua/lock), and luagen
// generates the code that builds the keys; nothing in this package spells
// one by hand. All share the {name} hash tag, so on Redis Cluster every
// script touches one slot, and the wake messages travel with sharded
// pub/sub (SPUBLISH and SSUBSCRIBE) within the lock's shard. On a single server or Sentinel
// they use PUBLISH and SUBSCRIBE, which every Redis version supports.
//
// # Metrics
//
// WithHook receives an Event for every attempt, refusal, acquisition,
// timeout, failure, renewal, release and loss, with wait and hold times; see
// EventKind for the three numbers to alert on (acquisition success rate,
// wait p99, timeout rate) and example_test.go for a wiring to expvar.
//
// # Scripts
//
// The scripts live in lua/lock; their generated wrappers are in the
// internal package lock/internal/scripts, so that only this package runs
// them. Mutex and Client are written by hand on top of them and run them
// through a runtime.Executor, which tests replace with one that injects
// faults (WithExecutor).
package lock
