package lock

import (
	"context"
	"sync"

	"github.com/redis/rueidis"

	"github.com/luagen/luagen/runtime"
)

// Client is the shared part of every Mutex made from it: the rueidis client
// the scripts run on, the unlock subscriptions (one per lock name that has
// waiters, shared by all of them, on rueidis' shared pub/sub connection),
// the Mutexes waiting for each lock, to which a release of another of its
// Mutexes hands the lock over (WaitStrategy.MaxHandoffs), and default
// options. Create one per rueidis client with NewClient, share it between
// the goroutines that lock the same names (handoffs happen only within a
// Client), and Close it when done; it is safe for concurrent use.
type Client struct {
	rc       rueidis.Client // nil: no notifications, waiters poll
	sharded  bool           // SPUBLISH/SSUBSCRIBE instead of PUBLISH/SUBSCRIBE
	defaults []Option
	base     config

	hmu   sync.Mutex
	heirs map[string]*heirQueue // by lock key: Mutexes a release may hand the lock to

	mu     sync.Mutex
	subs   map[string]*subscription // by channel
	holds  map[*hold]struct{}       // running holds, ended by Close
	closed bool
	ctx    context.Context // cancelled by Close
	stop   context.CancelFunc
	done   <-chan struct{} // ctx.Done()
	wg     sync.WaitGroup  // every goroutine the Client started
}

// NewClient returns a Client running lock scripts on rc. opts are the
// default options of every Mutex made with New (each may override them).
//
// On a Redis Cluster client (rc.Mode() == rueidis.ClientModeCluster)
// unlock notifications use sharded pub/sub: the scripts SPUBLISH and waiters
// SSUBSCRIBE, so a message travels only within the lock's shard instead of
// being broadcast over the cluster bus to every node as PUBLISH is. On a
// single server or Sentinel they use PUBLISH/SUBSCRIBE, which every Redis
// version has (SPUBLISH needs 7.0) and which costs the same there.
//
// rc may be nil only together with WithExecutor: waiters then poll. The
// Client does not close rc. NewClient fails with an error matching
// ErrBadOption when an option is invalid.
func NewClient(rc rueidis.Client, opts ...Option) (*Client, error) {
	c := &Client{
		rc:       rc,
		defaults: opts,
		base:     defaultConfig(),
		subs:     map[string]*subscription{},
		heirs:    map[string]*heirQueue{},
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

// executor is the default executor: runtime.Rueidis(rc).
func (c *Client) executor(cfg *config) runtime.Executor {
	if cfg.exec != nil {
		return cfg.exec
	}
	return runtime.Rueidis(c.rc)
}

// Close stops the Client: waiters return ErrClosed, watchdogs stop (held
// contexts are cancelled with cause ErrClosed; the locks themselves are not
// released and expire when their lease runs out), and every unlock
// subscription is unsubscribed. Close waits for the Client's goroutines to
// finish and is idempotent. It does not close the rueidis client.
func (c *Client) Close() {
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
		h.over(ErrClosed, false)
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
