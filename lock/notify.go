package lock

import (
	"context"
	"errors"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/redis/rueidis"

	"github.com/luagen/luagen/runtime"
)

const (
	// subscriptionLinger keeps a channel subscribed this long after its last
	// waiter left, so a lock that is waited on again and again does not
	// SUBSCRIBE and UNSUBSCRIBE for every waiter.
	subscriptionLinger = time.Second
	// unsubscribeTimeout bounds the UNSUBSCRIBE sent when a subscription ends.
	unsubscribeTimeout = 2 * time.Second
	// resubscribeMin and resubscribeMax bound the waits between
	// subscription attempts after a failure (runtime.Retry's jittered
	// doubling), and resubscribeMin is also the pause before subscribing
	// again after the server dropped the subscription.
	resubscribeMin = 20 * time.Millisecond
	resubscribeMax = 2 * time.Second
)

// subscription is the Client's wake channel for one lock, shared by every
// waiter of the Client for that lock. A goroutine holds it open with
// rueidis' Client.Receive on rueidis' shared pub/sub connection
// (SSUBSCRIBE to the slot's node on a cluster) and resubscribes when the
// server drops it (a failover, a slot migration, a broken connection).
//
// Each message names the one owner a release handed the lock to, and its
// fencing token; it goes to that owner's Mutex only (Client.deliver), and
// only the heir's Client receives it: the channel is the Client's own.
type subscription struct {
	c       *Client
	channel string
	cancel  context.CancelFunc // ends run's context

	// Guarded by c.mu.
	refs     int
	linger   *time.Timer // runs expire once the last waiter has left
	stopping bool

	settled chan struct{} // closed at the first confirmation or failure
	settle  sync.Once
	readyAt atomic.Int64 // when first confirmed, as time since epoch (at least 1); 0 until then
}

// epoch is the origin of subscription.readyAt, on the monotonic clock.
var epoch = time.Now()

// readyBefore reports whether the subscription was confirmed before t:
// the server had then subscribed the channel, so every unlock it runs
// after a command sent at t reaches the subscription (a message published
// while a resubscription is under way is made up for by a nudge, see run).
func (s *subscription) readyBefore(t time.Time) bool {
	at := s.readyAt.Load()
	return at != 0 && at < int64(t.Sub(epoch))
}

// subscribe returns the subscription to channel with one more waiter,
// starting it when it is new. Every subscribe must be paired with leave.
func (c *Client) subscribe(channel string) (*subscription, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return nil, ErrClosed
	}
	s := c.subs[channel]
	if s == nil {
		ctx, cancel := context.WithCancel(context.Background())
		s = &subscription{
			c:       c,
			channel: channel,
			cancel:  cancel,
			settled: make(chan struct{}),
		}
		c.subs[channel] = s
		c.wg.Add(1)
		go s.run(ctx)
	}
	s.join()
	return s, nil
}

// join counts one more waiter; c.mu must be held.
func (s *subscription) join() {
	s.refs++
	if s.linger != nil {
		if s.linger.Stop() {
			s.c.wg.Done() // expire will not run
		}
		s.linger = nil
	}
}

// leave drops one waiter; the last one arms the linger timer.
func (s *subscription) leave() {
	c := s.c
	c.mu.Lock()
	defer c.mu.Unlock()
	s.refs--
	if s.refs == 0 && !s.stopping && !c.closed {
		c.wg.Add(1) // expire, or whoever stops the timer, calls Done
		s.linger = time.AfterFunc(subscriptionLinger, s.expire)
	}
}

// expire ends a subscription nobody has waited on for subscriptionLinger.
func (s *subscription) expire() {
	c := s.c
	defer c.wg.Done()
	c.mu.Lock()
	if s.refs > 0 || s.stopping {
		c.mu.Unlock()
		return
	}
	s.linger = nil
	s.stopping = true
	delete(c.subs, s.channel)
	c.mu.Unlock()
	s.unsubscribe()
}

// shutdown ends the subscription for Client.Close.
func (s *subscription) shutdown() {
	c := s.c
	c.mu.Lock()
	if s.linger != nil && s.linger.Stop() {
		c.wg.Done()
	}
	s.linger = nil
	already := s.stopping
	s.stopping = true
	c.mu.Unlock()
	if !already {
		s.unsubscribe()
	}
}

// unsubscribe sends UNSUBSCRIBE (SUNSUBSCRIBE), which makes Receive return,
// then cancels run's context in case the command did not get through.
// Cancelling alone would leave the connection subscribed on the server.
func (s *subscription) unsubscribe() {
	ctx, cancel := context.WithTimeout(context.Background(), unsubscribeTimeout)
	rc := s.c.rc
	var cmd rueidis.Completed
	if s.c.sharded {
		cmd = rc.B().Sunsubscribe().Channel(s.channel).Build()
	} else {
		cmd = rc.B().Unsubscribe().Channel(s.channel).Build()
	}
	_ = rc.Do(ctx, cmd).Error()
	cancel()
	s.cancel()
}

func (s *subscription) stopped(ctx context.Context) bool {
	if ctx.Err() != nil {
		return true
	}
	s.c.mu.Lock()
	defer s.c.mu.Unlock()
	return s.stopping
}

// run keeps the channel subscribed until the subscription is stopped.
func (s *subscription) run(ctx context.Context) {
	defer s.c.wg.Done()
	defer s.markSettled() // waiters never wait for a subscription that is gone
	rc := s.c.rc
	hooked := rueidis.WithOnSubscriptionHook(ctx, func(ps rueidis.PubSubSubscription) {
		if ps.Kind != "subscribe" && ps.Kind != "ssubscribe" {
			return
		}
		if !s.readyAt.CompareAndSwap(0, max(int64(time.Since(epoch)), 1)) {
			// A resubscription: a handoff may have been published while the
			// channel was not subscribed, so let every waiter try now.
			s.c.nudge()
		}
		s.markSettled()
	})
	receive := func(context.Context) error {
		var cmd rueidis.Completed
		if s.c.sharded {
			cmd = rc.B().Ssubscribe().Channel(s.channel).Build()
		} else {
			cmd = rc.B().Subscribe().Channel(s.channel).Build()
		}
		err := rc.Receive(hooked, cmd, func(msg rueidis.PubSubMessage) {
			owner, token, ok := strings.Cut(msg.Message, " ")
			if n, err := strconv.ParseInt(token, 10, 64); ok && err == nil && n > 0 {
				s.c.deliver(owner, n)
			}
		})
		if err != nil {
			// Waiters should not wait for a subscription that failed: they
			// fall back to polling until it comes back.
			s.markSettled()
		}
		return err
	}
	// Every failure is worth another try (a broken connection, a node
	// that is down) until the subscription is stopped or the client closes.
	policy := runtime.RetryPolicy{
		MinBackoff: resubscribeMin,
		MaxBackoff: resubscribeMax,
		Retryable: func(err error) bool {
			return !s.stopped(ctx) && !errors.Is(err, rueidis.ErrClosing)
		},
	}
	for {
		err := runtime.Retry(ctx, policy, receive)
		if s.stopped(ctx) || errors.Is(err, rueidis.ErrClosing) {
			return
		}
		// Receive returned nil: the server unsubscribed us (Redis sends
		// SUNSUBSCRIBE when the slot moves: a failover or a migration).
		// Subscribe again shortly, with a fresh backoff; rueidis follows
		// the slot to its new node.
		t := time.NewTimer(resubscribeMin)
		select {
		case <-ctx.Done():
			t.Stop()
			return
		case <-t.C:
		}
	}
}

func (s *subscription) markSettled() { s.settle.Do(func() { close(s.settled) }) }
