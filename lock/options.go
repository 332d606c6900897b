package lock

import (
	"time"

	"github.com/luagen/luagen/runtime"
)

// Defaults of the options below.
const (
	// DefaultWatchdogLease is the lease of a lock held without WithLease
	// (Redisson's lockWatchdogTimeout). The watchdog renews it every
	// DefaultWatchdogLease/3.
	DefaultWatchdogLease = 30 * time.Second
	// DefaultKeyPrefix starts every key and channel name (see the package
	// documentation for the layout).
	DefaultKeyPrefix = "lock:"
	// DefaultRetryWindow bounds how long a script call whose reply was lost
	// is retried; the latches that make the retries safe live twice as long.
	DefaultRetryWindow = 5 * time.Second
	// DefaultFenceTTL is how long the fencing counter outlives the last
	// first acquire of a lock.
	DefaultFenceTTL = 24 * time.Hour
	// MaxLease is the longest lease, watchdog lease, retry window or fence
	// TTL accepted: longer values are rejected rather than risk overflowing
	// a deadline or Redis' PEXPIRE arithmetic.
	MaxLease = 365 * 24 * time.Hour
)

// Option configures a Mutex. Options given to NewClient are the defaults of
// every Mutex of that Client; options given to New override them. A nil
// Option is ignored. Invalid values make New or NewClient fail with an error
// matching ErrBadOption, never a panic.
type Option func(*config)

// WithLease gives the lock an explicit lease: it expires d after each
// acquire unless released first, and no watchdog renews it (Redisson's
// lock(leaseTime)). The held context is cancelled with cause ErrLeaseExpired
// when d has passed on the holder's monotonic clock, counted from before the
// acquire was sent. d is sent as whole milliseconds and must be between
// 1 ms and MaxLease.
func WithLease(d time.Duration) Option {
	return func(c *config) { c.lease, c.leaseSet = d, true }
}

// WithWatchdogLease holds the lock with lease d renewed by a watchdog every
// d/3 from "now" (each renewal sets the lease to d from the moment it runs,
// never from the previous deadline), for as long as the lock is held and the
// context given to Lock lives. It is the default, with
// DefaultWatchdogLease, and undoes an earlier WithLease. d must be between
// 3 ms and MaxLease.
func WithWatchdogLease(d time.Duration) Option {
	return func(c *config) { c.watchdog, c.lease, c.leaseSet = d, 0, false }
}

// WithKeyPrefix sets the text in front of every key and channel name
// (default DefaultKeyPrefix). Keys are laid out as prefix{name}...; see the
// package documentation.
func WithKeyPrefix(p string) Option {
	return func(c *config) { c.prefix = p }
}

// WithWaitStrategy sets how waiters wait between attempts; see WaitStrategy.
func WithWaitStrategy(w WaitStrategy) Option {
	return func(c *config) { c.wait = w }
}

// WithHook calls h for every Event: acquire attempts and outcomes,
// renewals, releases and lost locks. h runs synchronously on the goroutine
// doing the work and must return quickly; it may be called concurrently.
// A nil h turns events off.
func WithHook(h func(Event)) Option {
	return func(c *config) { c.hook = h }
}

// WithRetryWindow sets how long a script call whose reply was lost (a
// connection error, a server busy or loading) is retried, counted on the
// monotonic clock from its first send (default DefaultRetryWindow).
// A reentrant acquire and a release that leaves holds record their answers
// in per-call latch keys that live 2*d, so a retry returns the first answer
// instead of counting or releasing a hold twice. Lock on a server that does
// not answer fails within d (plus one backoff of at most 250 ms). d must be
// between 1 ms and MaxLease.
func WithRetryWindow(d time.Duration) Option {
	return func(c *config) { c.retryWindow = d }
}

// WithFenceTTL sets how long the fencing counter key outlives the last
// first acquire of a lock (default DefaultFenceTTL), so locks named after
// short-lived things (an order id, a payment id) do not leave a key each
// behind forever. Tokens keep rising after the counter expires because a
// new counter starts from the server's clock in microseconds; see
// Mutex.Token. d must be between 1 ms and MaxLease.
func WithFenceTTL(d time.Duration) Option {
	return func(c *config) { c.fenceTTL = d }
}

// WithExecutor runs the lock's scripts on e instead of the Client's
// rueidis client: for fault injection in tests (wrap runtime.NewRueidisExecutor(rc)
// and fail chosen calls) or an offline executor. Wake messages still
// use the Client's rueidis client. A nil e restores the default.
func WithExecutor(e runtime.Executor) Option {
	return func(c *config) { c.exec = e }
}

// WaitStrategy says how a waiter waits for a lock another owner holds. The
// zero value is the default.
//
// A waiter whose attempt is refused joins the lock's queue on the server
// (FIFO, shared by every process) and sleeps. The release of the last hold
// hands the lock to the first live waiter in the queue and publishes one
// message on that waiter's Client's wake channel; the waiter then holds
// the lock without a round trip of its own. Should the message be lost, or
// the holder die, the waiter attempts again after a fallback poll: the
// holder's remaining lease, at most QueueTTL/3 (and at most a third of
// the waiter's own grant lease, see QueueTTL), at least MinPoll. Each
// attempt also renews the waiter's place in the queue.
type WaitStrategy struct {
	// PollOnly turns wake messages off, for deployments where pub/sub is
	// unavailable (some proxies). Waiters then follow Go's sync.Mutex (see
	// the package documentation, "Waiting and handoff"): in normal mode a
	// release frees the lock and whoever asks first takes it, mostly the
	// releaser asking again; once the first waiter has waited
	// PollStarvation, releases hand the lock over in queue order
	// (starvation mode). The next two in line ask every millisecond
	// (bsm/redislock's LinearBackoff as its users set it), the waiters
	// behind them once they have waited about PollStarvation, and from then
	// on each asks again as soon as its answer is in, for another
	// PollStarvation, then every millisecond while the lock stays held.
	// MinPoll does not apply. The cost: a contended wait lasts about
	// PollStarvation; with short sections the polls add a few tenths of a
	// script call per section (8 clients on a local server; pub/sub sends
	// about two per wait), and behind a long hold each waiter sends about a
	// thousand script calls a second (pub/sub: none). Use PollOnly only
	// where pub/sub cannot work.
	PollOnly bool
	// QueueTTL is how long a waiter's place in the queue lives without a
	// renewal (default DefaultQueueTTL): a waiter that died is skipped
	// after at most QueueTTL. A release may hand the lock to a waiter that
	// died less than QueueTTL ago; under the watchdog (no WithLease) the
	// lease it grants is min(watchdog lease, QueueTTL), renewed to the
	// full watchdog lease by the heir's watchdog, so a dead waiter stalls
	// the lock at most 2 × QueueTTL. With WithLease(d) the grant is d.
	QueueTTL time.Duration
	// MinPoll is the shortest fallback sleep, default 5 ms (less when a
	// third of QueueTTL or of the grant lease is less); PollOnly waiters
	// and those of a Client without a rueidis client ask sooner. An explicit
	// MinPoll must be at most a third of QueueTTL and of the grant lease:
	// a waiter that sleeps longer loses its place in the queue, or learns
	// of a handoff after the lease it was granted may have run out.
	MinPoll time.Duration
	// Grace is how long past its wait TryLock still waits for the answer
	// to an attempt already sent, default WaitGrace (25 ms); TryLock
	// returns within wait + Grace whatever the server does. Raise it for
	// a server whose round trip can approach 25 ms (another region): an
	// attempt that is not answered in time makes TryLock return
	// ErrNoAnswer.
	Grace time.Duration
}

// DefaultQueueTTL is the default WaitStrategy.QueueTTL.
const DefaultQueueTTL = 3 * time.Second

const (
	defaultMinPoll   = 5 * time.Millisecond
	minWatchdogLease = 3 * time.Millisecond
)

// config is a Mutex's resolved options.
type config struct {
	lease       time.Duration // explicit lease; 0 with leaseSet false: watchdog
	leaseSet    bool
	watchdog    time.Duration
	prefix      string
	wait        WaitStrategy
	hook        func(Event)
	retryWindow time.Duration
	fenceTTL    time.Duration
	exec        runtime.Executor

	replicas       int           // WithReplicas' n; 0: off
	replicaTimeout time.Duration // WithReplicas' timeout
}

func defaultConfig() config {
	return config{
		watchdog:    DefaultWatchdogLease,
		prefix:      DefaultKeyPrefix,
		retryWindow: DefaultRetryWindow,
		fenceTTL:    DefaultFenceTTL,
	}
}

func (c *config) apply(opts []Option) {
	for _, o := range opts {
		if o != nil {
			o(c)
		}
	}
}

// validate reports the first invalid setting.
func (c *config) validate() error {
	if c.leaseSet {
		if err := checkDuration("lease", c.lease, time.Millisecond); err != nil {
			return err
		}
	} else if err := checkDuration("watchdog lease", c.watchdog, minWatchdogLease); err != nil {
		return err
	}
	if err := checkDuration("retry window", c.retryWindow, time.Millisecond); err != nil {
		return err
	}
	if err := checkDuration("fence TTL", c.fenceTTL, time.Millisecond); err != nil {
		return err
	}
	if err := c.validateReplicas(); err != nil {
		return err
	}
	w := c.wait
	if w.MinPoll < 0 || w.MinPoll > MaxLease {
		return optionError("wait strategy MinPoll must be between 0 and %v, got %v", MaxLease, w.MinPoll)
	}
	if w.Grace < 0 || w.Grace > MaxLease {
		return optionError("wait strategy Grace must be between 0 and %v, got %v", MaxLease, w.Grace)
	}
	if w.QueueTTL != 0 {
		if err := checkDuration("wait strategy QueueTTL", w.QueueTTL, 3*time.Millisecond); err != nil {
			return err
		}
	}
	// A waiter sleeping longer than this outlives its place in the queue,
	// or is handed a lease that may have run out by the time it wakes.
	if most := c.mostPoll(); w.MinPoll > most {
		return optionError("wait strategy MinPoll must be at most a third of QueueTTL and of the lease a handoff grants (%v), got %v", most, w.MinPoll)
	}
	return nil
}

func checkDuration(what string, d, min time.Duration) error {
	if d < min || d > MaxLease {
		return optionError("%s must be between %v and %v, got %v", what, min, MaxLease, d)
	}
	return nil
}

// validateReplicas checks WithReplicas: a WAIT that may take longer than
// a third of the lease would leave a hold little of it once acknowledged.
func (c *config) validateReplicas() error {
	switch {
	case c.replicas < 0:
		return optionError("replicas must be at least 0, got %d", c.replicas)
	case c.replicas == 0:
		return nil
	}
	most := min(c.leaseFor(), c.grantLease()) / 3
	if c.replicaTimeout < time.Millisecond || c.replicaTimeout > most {
		return optionError("replica timeout must be between 1ms and a third of the lease (%v), got %v", most, c.replicaTimeout)
	}
	return nil
}

// renewEvery is the watchdog's interval: a third of the lease, as
// Redisson's internalLockLeaseTime / 3.
func (c *config) renewEvery() time.Duration { return c.watchdog / 3 }

// leaseFor is the lease a hold gets: the explicit one, else the watchdog's.
func (c *config) leaseFor() time.Duration {
	if c.leaseSet {
		return c.lease
	}
	return c.watchdog
}

// latchTTL is how long per-call latches live: twice the retry window, so a
// retry sent at the end of the window still finds the first call's latch
// even when it reaches the server late.
func (c *config) latchTTL() time.Duration { return 2 * c.retryWindow }

// grace is the resolved WaitStrategy.Grace, plus WithReplicas' timeout:
// an attempt's WAIT may take that long.
func (c *config) grace() time.Duration {
	g := c.wait.Grace
	if g == 0 {
		g = WaitGrace
	}
	if c.replicas > 0 {
		g += c.replicaTimeout
	}
	return g
}

// PollStarvation is how long a PollOnly waiter lets others take a free
// lock ahead of it (normal mode) before releases hand it the lock in queue
// order (starvation mode); see WaitStrategy.PollOnly. Go's sync.Mutex uses
// 1 ms for sections of nanoseconds; a Redis section costs two round trips,
// so 7 ms lets a releaser keep the lock for some tens of sections, and it
// is about a contended wait's p99. On loopback with 8 clients (bench/lock)
// 10 or 20 ms bought no more sections and spread them less evenly (the
// fewest of a client 0.79 of the most at 20 ms, 0.9 at 7 ms); 2 to 4 ms
// polled more, which costs server CPU on a host shared with clients.
const PollStarvation = 7 * time.Millisecond

// starve is the bound a waiter puts in its queue entry: PollStarvation
// with PollOnly, else 0 (wake messages: strict FIFO).
func (c *config) starve() time.Duration {
	if c.wait.PollOnly {
		return PollStarvation
	}
	return 0
}

// queueTTL is the resolved WaitStrategy.QueueTTL.
func (c *config) queueTTL() time.Duration {
	if c.wait.QueueTTL == 0 {
		return DefaultQueueTTL
	}
	return c.wait.QueueTTL
}

// mostPoll is the longest a waiter may sleep between attempts: a third of
// its place in the queue and of the lease a handoff grants it.
func (c *config) mostPoll() time.Duration { return min(c.queueTTL(), c.grantLease()) / 3 }

// minPoll is the shortest fallback sleep: WaitStrategy.MinPoll, else
// defaultMinPoll, cut to mostPoll for short leases and queue TTLs.
func (c *config) minPoll() time.Duration {
	if c.wait.MinPoll != 0 {
		return c.wait.MinPoll
	}
	return min(defaultMinPoll, c.mostPoll())
}

// grantLease is the lease a release gives this Mutex when it hands the
// lock over: the explicit lease, else the watchdog's lease capped at the
// queue TTL, so that a waiter that died cannot hold the lock long.
func (c *config) grantLease() time.Duration {
	if c.leaseSet {
		return c.lease
	}
	return min(c.watchdog, c.queueTTL())
}

// poll is the fallback sleep after an attempt refused with the holder's
// remaining lease ttl (negative: none, or free with others queued first):
// soon enough to renew the place in the queue and to learn of a lost
// wake message well within the grant lease.
func (c *config) poll(ttl time.Duration) time.Duration {
	d := c.mostPoll()
	if ttl > 0 && ttl < d {
		d = ttl
	}
	return max(d, c.minPoll())
}
