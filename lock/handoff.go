package lock

import (
	"time"
)

// DefaultMaxHandoffs is how many times in a row, by default, a release
// hands the lock straight to a waiting Mutex of the same Client before it
// frees the lock for everyone (see WaitStrategy.MaxHandoffs).
const DefaultMaxHandoffs = 8

// heir is a Mutex waiting for a lock that a release by another Mutex of
// the same Client may hand the lock to (the Handoff script) instead of
// freeing it: no unlock message, no acquire round trip of its own.
//
// A waiter enlists before it sleeps with a latch of its own reserved for
// the grant: the Handoff script records the grant there as the answer of
// an Acquire call of the heir. So whatever becomes of the releaser's
// reply, the heir can settle it with the latch: an Acquire with it
// (sealed, so that a Handoff still on its way grants nothing) returns the
// grant while the heir holds it, and an Abandon with it gives the grant
// back.
//
// The states, guarded by Client.hmu: waiting (in the queue) → claimed by a
// releaser (out of the queue; the Handoff may be running) → settled (the
// verdict is in ch). A waiter that wakes for another reason withdraws while
// still waiting; once claimed it must take the verdict, or leave (its
// context ended) and let the releaser undo a grant (gone).
type heir struct {
	m     *Mutex
	latch string       // the grant's latch, an Acquire latch of m
	ch    chan verdict // the verdict, buffered: sending never blocks
	state heirState
	q     *heirQueue
	prev  *heir // queue links while waiting
	next  *heir
}

type heirState uint8

const (
	heirWaiting heirState = iota
	heirClaimed
	heirSettled
	heirWithdrawn
	heirGone
)

// verdict is what a releaser tells a claimed heir. The zero verdict means
// "no grant: attempt".
type verdict struct {
	granted bool      // the heir holds the lock, with token
	unknown bool      // the Handoff may have run: settle it with the latch
	token   int64     // the heir's fencing token
	sent    time.Time // when the Handoff was first sent: the heir's lease runs from no earlier
}

// heirQueue is one lock's state within one Client: the heirs, oldest
// first, and which Mutex of the Client holds the lock, as far as the
// Client knows. It exists while the lock has heirs or a run of handoffs.
type heirQueue struct {
	head, tail *heir
	// run counts handoffs since this Client last left the lock free; at
	// the limit the next release frees it, so that waiters elsewhere get a
	// turn.
	run int
	// holder holds the lock since its acquire or grant was sent at since;
	// nil when the Client knows of no holder of its own.
	holder *Mutex
	since  time.Time
}

// queue returns m's lock's queue, creating it; c.hmu must be held.
func (c *Client) queue(m *Mutex) *heirQueue {
	q := c.heirs[m.keys.lock]
	if q == nil {
		q = &heirQueue{}
		c.heirs[m.keys.lock] = q
	}
	return q
}

// enlist queues m as an heir of its lock; nil when m takes no handoffs.
func (c *Client) enlist(m *Mutex) *heir {
	if m.cfg.maxHandoffs() <= 0 {
		return nil
	}
	w := &heir{m: m, latch: m.newLatch(), ch: make(chan verdict, 1)}
	c.hmu.Lock()
	defer c.hmu.Unlock()
	q := c.queue(m)
	w.q = q
	if q.tail == nil {
		q.head = w
	} else {
		q.tail.next, w.prev = w, q.tail
	}
	q.tail = w
	return w
}

// queueBehind enlists m without an attempt when another Mutex of this
// Client holds the lock: that attempt would be refused. The holder's
// release will hand the lock over or, freeing it, publish an unlock
// message, which reaches the returned subscription because it was
// confirmed before the holder's acquire was sent. Without such a
// subscription, or a holder, it returns nil and m attempts as usual.
func (c *Client) queueBehind(m *Mutex) (*heir, *subscription, time.Duration) {
	if m.cfg.maxHandoffs() <= 0 || !m.notifies() {
		return nil, nil, 0
	}
	c.hmu.Lock()
	q := c.heirs[m.keys.lock]
	if q == nil || q.holder == nil || q.holder == m || q.holder.execKey != m.execKey {
		c.hmu.Unlock()
		return nil, nil, 0
	}
	since, lease := q.since, q.holder.cfg.leaseFor()
	c.hmu.Unlock()
	s := c.subscribed(m.keys.channel, since)
	if s == nil {
		return nil, nil, 0
	}
	// The fallback poll: the holder's lease, as a refused attempt would
	// have reported it at most.
	return c.enlist(m), s, m.cfg.wait.poll(lease)
}

// unlink takes a waiting heir out of its queue; c.hmu must be held.
func (c *Client) unlink(w *heir) {
	q := w.q
	if w.prev == nil {
		q.head = w.next
	} else {
		w.prev.next = w.next
	}
	if w.next == nil {
		q.tail = w.prev
	} else {
		w.next.prev = w.prev
	}
	w.prev, w.next = nil, nil
	c.forget(w.m.keys.lock, q)
}

// forget drops a queue that has nothing left to record; c.hmu must be
// held.
func (c *Client) forget(key string, q *heirQueue) {
	if q.head == nil && q.run == 0 && q.holder == nil {
		delete(c.heirs, key)
	}
}

// claim picks the heir that m's release of its last hold hands the lock
// to: the longest-waiting Mutex of this Client for the same lock, other
// than m, that runs its scripts on the same executor. It returns nil, and
// ends the run, when there is none or the run has reached m's limit.
func (c *Client) claim(m *Mutex) *heir {
	limit := m.cfg.maxHandoffs()
	if limit <= 0 {
		return nil
	}
	c.hmu.Lock()
	defer c.hmu.Unlock()
	q := c.heirs[m.keys.lock]
	if q == nil {
		return nil
	}
	if q.run < limit && !c.isClosed() {
		for w := q.head; w != nil; w = w.next {
			if w.m != m && w.m.execKey == m.execKey {
				q.run++
				c.unlink(w)
				w.state = heirClaimed
				return w
			}
		}
	}
	q.run = 0
	c.forget(m.keys.lock, q)
	return nil
}

// acquired records that m got the lock by an attempt sent at sent (first:
// the lock was free, so a run of handoffs is over).
func (c *Client) acquired(m *Mutex, sent time.Time, first bool) {
	c.hmu.Lock()
	defer c.hmu.Unlock()
	q := c.heirs[m.keys.lock]
	if q == nil {
		return
	}
	if first {
		q.run = 0
	}
	q.holder, q.since = m, sent
}

// released records the end of m's hold, or that its release may or may
// not have run, and gives the heir w, if m claimed one, the verdict v. A
// grant makes w the holder. An heir that has left is not waiting for the
// verdict: a grant, or a Handoff that may have granted, is given back with
// an Abandon of the grant's latch.
func (c *Client) released(m *Mutex, w *heir, v verdict) {
	c.hmu.Lock()
	gone := c.deliver(w, v)
	if q := c.heirs[m.keys.lock]; q != nil {
		switch {
		case v.granted && !gone:
			q.holder, q.since = w.m, v.sent
		case q.holder == m:
			q.holder = nil
			c.forget(m.keys.lock, q)
		}
	}
	c.hmu.Unlock()
	c.undo(w, v, gone)
}

// settle gives a claimed heir the verdict v of a release that left m
// holding the lock.
func (c *Client) settle(w *heir, v verdict) {
	c.hmu.Lock()
	gone := c.deliver(w, v)
	c.hmu.Unlock()
	c.undo(w, v, gone)
}

// deliver sends w (if any) its verdict and reports false, or true when w
// has left; c.hmu must be held.
func (c *Client) deliver(w *heir, v verdict) (gone bool) {
	if w == nil {
		return false
	}
	gone = w.state == heirGone
	w.state = heirSettled
	if !gone {
		w.ch <- v
	}
	return gone
}

// undo gives back what a release may have granted an heir that has left.
func (c *Client) undo(w *heir, v verdict, gone bool) {
	if !gone {
		return
	}
	if v.granted || v.unknown {
		w.m.abandon(w.latch)
	}
	w.m.endUndo()
}

// lost records that m learned its hold is gone without a release: the
// lock may be free, and no unlock message says so. The longest-waiting
// heir is woken to attempt.
func (c *Client) lost(m *Mutex) {
	c.hmu.Lock()
	defer c.hmu.Unlock()
	q := c.heirs[m.keys.lock]
	if q == nil || q.holder != m {
		return
	}
	q.holder = nil
	if w := q.head; w != nil {
		c.unlink(w)
		w.state = heirSettled
		w.ch <- verdict{}
	}
	c.forget(m.keys.lock, q)
}

// withdraw takes a waiting heir out of the queue and reports true; false
// means a releaser has claimed it, and its verdict is or will be in w.ch.
func (w *heir) withdraw() bool {
	c := w.m.c
	c.hmu.Lock()
	defer c.hmu.Unlock()
	if w.state != heirWaiting {
		return false
	}
	c.unlink(w)
	w.state = heirWithdrawn
	return true
}

// leave is withdraw for an heir whose Lock call is failing (its context
// ended, or the Client closed): whatever a releaser gives it is given back.
func (w *heir) leave() {
	if w == nil {
		return
	}
	c := w.m.c
	c.hmu.Lock()
	switch w.state {
	case heirWaiting:
		c.unlink(w)
		w.state = heirWithdrawn
		c.hmu.Unlock()
		return
	case heirClaimed:
		// The releaser undoes a grant when its verdict comes; until then a
		// new Lock of this Mutex waits, so as not to count a second hold.
		w.m.beginUndo()
		w.state = heirGone
		c.hmu.Unlock()
		return
	case heirWithdrawn, heirGone:
		c.hmu.Unlock()
		return
	}
	c.hmu.Unlock()
	select {
	case v := <-w.ch: // settled: the verdict is there, unread
		if v.granted || v.unknown {
			c.released(w.m, nil, verdict{})
			w.m.abandon(w.latch)
		}
	default:
	}
}
