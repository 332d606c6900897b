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
// Acquire and Release record their answers in per-call latch keys that
// live 2*d, so a retry returns the first answer instead of counting or
// releasing a hold twice. d must be between 1 ms and MaxLease; longer
// windows keep more latches in Redis (one per owner, see the package
// documentation).
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
// rueidis client: for fault injection in tests (wrap runtime.Rueidis(rc)
// and fail chosen calls) or an offline executor. Unlock notifications still
// use the Client's rueidis client. A nil e restores the default.
func WithExecutor(e runtime.Executor) Option {
	return func(c *config) { c.exec = e }
}

// WaitStrategy says how a waiter waits for a lock another owner holds. The
// zero value is the default: wake on the holder's unlock notification, and
// fall back to polling after the holder's remaining lease.
//
// After a refused attempt a waiter sleeps until the unlock notification
// arrives or until a fallback poll fires, whichever is first. The poll
// sleeps for the holder's remaining lease (the TTL the refused attempt
// returned) less a random 0–25 % so waiters do not poll in step, and at
// least MinPoll so nobody spins; a lost notification therefore costs at
// most one TTL and never a hang.
type WaitStrategy struct {
	// PollOnly turns unlock notifications off, for deployments where
	// pub/sub is unavailable (some proxies). Waiters then rely on the
	// fallback poll alone; set MaxPoll, or hand-offs wait for the holder's
	// lease to be reported as over.
	PollOnly bool
	// MinPoll is the shortest fallback sleep, default 5 ms.
	MinPoll time.Duration
	// MaxPoll caps the fallback sleep; 0 means no cap beyond the holder's
	// remaining lease. A lock key without expiry (not one this package
	// wrote) is polled every MaxPoll, or every second when MaxPoll is 0.
	MaxPoll time.Duration
	// MaxHandoffs bounds the handoffs in a row: a release of a Mutex's
	// last hold gives the lock straight to the longest-waiting Mutex of
	// the same Client for the same lock, in the release's own script, and
	// wakes it in-process, so the lock passes in one round trip instead of
	// an unlock message and an acquire. After MaxHandoffs handoffs in a row
	// the next release frees the lock and notifies every waiter, so waiters
	// in other processes (or on other Clients) get their turn. 0 means
	// DefaultMaxHandoffs; negative turns handoffs off. Both the releasing
	// and the waiting Mutex must allow them.
	MaxHandoffs int
}

const (
	defaultMinPoll   = 5 * time.Millisecond
	noExpiryPoll     = time.Second
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
	w := c.wait
	if w.MinPoll < 0 || w.MaxPoll < 0 || w.MinPoll > MaxLease || w.MaxPoll > MaxLease {
		return optionError("wait strategy polls must be between 0 and %v, got MinPoll %v, MaxPoll %v", MaxLease, w.MinPoll, w.MaxPoll)
	}
	if w.MaxPoll > 0 && w.MinPoll > w.MaxPoll {
		return optionError("wait strategy MinPoll %v is above MaxPoll %v", w.MinPoll, w.MaxPoll)
	}
	return nil
}

func checkDuration(what string, d, min time.Duration) error {
	if d < min || d > MaxLease {
		return optionError("%s must be between %v and %v, got %v", what, min, MaxLease, d)
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

// maxHandoffs is the resolved WaitStrategy.MaxHandoffs; 0: none.
func (c *config) maxHandoffs() int {
	switch n := c.wait.MaxHandoffs; {
	case n < 0:
		return 0
	case n == 0:
		return DefaultMaxHandoffs
	default:
		return n
	}
}
