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

// heirQueue is one lock's heirs within one Client, oldest first. It exists
// while the lock has heirs or a run of handoffs.
type heirQueue struct {
	head, tail *heir
	// run counts handoffs since this Client last left the lock free; at
	// the limit the next release frees it, so that waiters elsewhere get a
	// turn.
	run int
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
	if q.head == nil && q.run == 0 {
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

// freed ends the run of handoffs of a lock: this Client acquired it while
// free, so it was free in between.
func (c *Client) freed(key string) {
	c.hmu.Lock()
	defer c.hmu.Unlock()
	if q := c.heirs[key]; q != nil {
		q.run = 0
		c.forget(key, q)
	}
}

// settle gives the heir w, if m's release claimed one, the verdict v. An
// heir that has left is not waiting for it: a grant, or a Handoff that may
// have granted, is given back with an Abandon of the grant's latch.
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
			w.m.abandon(w.latch)
		}
	default:
	}
}
