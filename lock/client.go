package lock

import (
	"context"
	crand "crypto/rand"
	"sync"
	"sync/atomic"

	"github.com/redis/rueidis"

	"github.com/luagen/luagen/runtime"
)

// Client is the shared part of every Mutex made from it: the rueidis client
// the scripts run on, its wake channels (one subscription per lock name that
// has waiters, shared by all of them, on rueidis' shared pub/sub
// connection), and default options. Create one per rueidis client with
// NewClient (one per process is typical), and Close it when done; it is
// safe for concurrent use.
type Client struct {
	rc       rueidis.Client // nil: no wake messages, waiters poll
	sharded  bool           // SPUBLISH/SSUBSCRIBE instead of PUBLISH/SUBSCRIBE
	id       string         // random; the first part of every owner token, and of wake channels
	seq      atomic.Uint64  // numbers the Client's Mutexes
	defaults []Option
	base     config

	mu      sync.Mutex
	subs    map[string]*subscription // by channel
	waiters map[string]chan int64    // by owner: the Mutexes waiting for a handoff
	holds   map[*hold]struct{}       // running holds, ended by Close
	closed  bool
	ctx     context.Context // cancelled by Close
	stop    context.CancelFunc
	done    <-chan struct{} // ctx.Done()
	wg      sync.WaitGroup  // every goroutine the Client started
}

// NewClient returns a Client running lock scripts on rc. opts are the
// default options of every Mutex made with New (each may override them).
//
// On a Redis Cluster client (rc.Mode() == rueidis.ClientModeCluster) wake
// messages use sharded pub/sub: the scripts SPUBLISH and waiters
// SSUBSCRIBE, so a message travels only within the lock's shard. On a
// single server or Sentinel they use PUBLISH/SUBSCRIBE.
//
// rc may be nil only together with WithExecutor: waiters then poll. The
// Client does not close rc. NewClient fails with an error matching
// ErrBadOption when an option is invalid.
func NewClient(rc rueidis.Client, opts ...Option) (*Client, error) {
	c := &Client{
		rc:       rc,
		id:       crand.Text(),
		defaults: opts,
		base:     defaultConfig(),
		subs:     map[string]*subscription{},
		waiters:  map[string]chan int64{},
		holds:    map[*hold]struct{}{},
	}
	c.ctx, c.stop = context.WithCancel(context.Background())
	c.done = c.ctx.Done()
	c.base.apply(opts)
	if rc == nil && c.base.exec == nil {
		c.stop()
		return nil, optionError("NewClient needs a rueidis client or WithExecutor")
	}
	if err := c.base.validate(); err != nil {
		c.stop()
		return nil, err
	}
	c.sharded = rc != nil && rc.Mode() == rueidis.ClientModeCluster
	return c, nil
}

// executor is the default executor: runtime.NewRueidisExecutor(rc).
func (c *Client) executor(cfg *config) runtime.Executor {
	if cfg.exec != nil {
		return cfg.exec
	}
	return runtime.NewRueidisExecutor(c.rc)
}

// Close stops the Client: every Lock and TryLock in progress returns
// ErrClosed at once, an attempt in flight included (it is rolled back in
// the background, which Close waits for), except an attempt of a Lock
// whose ctx has no deadline, which runs on the caller's goroutine and
// ends within the retry window; watchdogs stop (held
// contexts are cancelled with cause ErrClosed; the locks themselves are not
// released and expire when their lease runs out), later calls of its
// Mutexes (Lock, TryLock, Unlock, HoldCount, IsHeld, IsLocked, RemainingLease and
// ForceUnlock) return ErrClosed and send nothing, and every wake subscription
// is unsubscribed. Close waits for the Client's goroutines to finish (a
// rollback in flight is given up at its next attempt, so against a server
// that does not answer Close can take up to the retry window) and is
// idempotent. It does not close
// the rueidis client. Close on a nil *Client does nothing.
func (c *Client) Close() {
	if c == nil {
		return
	}
	c.mu.Lock()
	if c.closed {
		c.mu.Unlock()
		c.wg.Wait()
		return
	}
	c.closed = true
	c.stop()
	subs := make([]*subscription, 0, len(c.subs))
	for _, s := range c.subs {
		subs = append(subs, s)
	}
	holds := make([]*hold, 0, len(c.holds))
	for h := range c.holds {
		holds = append(holds, h)
	}
	c.mu.Unlock()
	for _, h := range holds {
		h.over(ErrClosed, false, false)
	}
	for _, s := range subs {
		s.shutdown()
	}
	c.wg.Wait()
}

// isClosed reports whether Close has begun.
func (c *Client) isClosed() bool {
	select {
	case <-c.done:
		return true
	default:
		return false
	}
}

// addHold registers a running hold for Close to end; it returns false once
// Close has begun.
func (c *Client) addHold(h *hold) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return false
	}
	c.holds[h] = struct{}{}
	return true
}

// dropHold forgets a hold that has stopped.
func (c *Client) dropHold(h *hold) {
	c.mu.Lock()
	defer c.mu.Unlock()
	delete(c.holds, h)
}

// track counts one more goroutine of the Client; it returns false, counting
// nothing, once Close has begun.
func (c *Client) track() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return false
	}
	c.wg.Add(1)
	return true
}

// await registers owner's wake channel, so that a handoff to owner is
// delivered to ch (its fencing token; 0 means "attempt again"); a nil ch
// forgets it.
func (c *Client) await(owner string, ch chan int64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if ch == nil {
		delete(c.waiters, owner)
	} else {
		c.waiters[owner] = ch
	}
}

// deliver passes a wake message to the waiting owner, if it still waits.
func (c *Client) deliver(owner string, token int64) {
	c.mu.Lock()
	ch := c.waiters[owner]
	c.mu.Unlock()
	if ch != nil {
		select {
		case ch <- token:
		default:
		}
	}
}

// nudge asks every waiter of the Client to attempt again: a wake message
// may have been lost while a subscription was down.
func (c *Client) nudge() {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, ch := range c.waiters {
		select {
		case ch <- 0:
		default:
		}
	}
}
