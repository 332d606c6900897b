package lock

import (
	"context"
	"errors"
	"fmt"
	"math"
	"time"

	"github.com/luagen/luagen/lock/internal/scripts"
	"github.com/luagen/luagen/runtime"
)

// acquisition is one Lock or TryLock call, from its start to its return:
// acquire reads top to bottom as its steps (turn, reentrant attempt,
// attempts, claim, sleep in the queue), and the steps too long to stand
// inline follow it in this file: attempt (with the replicas' confirmation
// and the rollback of an unknown outcome), validity, won, sleep, fail.
type acquisition struct {
	m *Mutex
	// ctx is the caller's: it bounds the hold, the sleeps in the queue and
	// the wait for a rollback a *ReplicaError promises. actx bounds every
	// server call and the waits for this Mutex's turn and for earlier
	// rollbacks: TryLock's ends at deadline + grace, Lock's is ctx.
	ctx, actx context.Context
	start     time.Time
	deadline  time.Time // the end of TryLock's wait
	bounded   bool      // TryLock: the wait ends at deadline
	n         int       // attempts so far
	trigger   Trigger   // what started the attempt in progress
	answered  bool      // an attempt got the server's answer: another owner holds the lock
	late      bool      // the attempt's own call failed with a deadline past TryLock's wait

	// In the queue: the wake subscription (nil: none yet, or PollOnly),
	// the polls' pace without one, and when the first refused attempt was
	// sent (the place in the queue dates from it).
	sub    *subscription
	pace   queuePace
	queued time.Time
}

// acquire is Lock (bounded false) and TryLock (bounded, waiting at most
// wait), step by step.
func (m *Mutex) acquire(ctx context.Context, wait time.Duration, bounded bool) (context.Context, bool, error) {
	if ctx == nil {
		return notHeld, false, ErrNilContext
	}
	a := &acquisition{m: m, ctx: ctx, actx: ctx, start: time.Now(), bounded: bounded, trigger: TriggerFirst}
	if m.c.isClosed() { // ErrClosed whatever ctx, as every other method
		m.emit(Event{Kind: EventAcquireFailed, Err: ErrClosed})
		return notHeld, false, ErrClosed
	}
	if bounded {
		// A wait up to MaxInt64 means "that long": wait + grace must not
		// overflow into a deadline in the past.
		grace := m.cfg.grace()
		wait = min(wait, math.MaxInt64-grace)
		var cancel context.CancelFunc
		a.actx, cancel = context.WithDeadline(ctx, a.start.Add(wait+grace))
		defer cancel()
	}
	a.deadline = a.start.Add(wait)

	// Take this Mutex's turn, counted among the Client's goroutines (Close
	// waits for a rollback this acquire starts), and wait for the rollbacks
	// of earlier attempts. The retry window counts from begun: the wait
	// for another goroutine's call on this Mutex is no silence of the server.
	if err := m.begin(a.actx); err != nil {
		return a.fail(err)
	}
	defer m.end()
	if !m.c.track() {
		return a.fail(ErrClosed)
	}
	defer m.c.wg.Done()
	begun := time.Now()
	if err := m.waitUndo(a.actx, begun); err != nil {
		return a.fail(err)
	}

	// Held already: one attempt raises the hold count under a latch (a
	// retry returns the first answer), unless the server no longer counts
	// this owner's hold: it is then over, and a first acquire follows.
	if m.holding() {
		a.n = 1
		m.emit(Event{Kind: EventAttempt, Attempt: 1, Trigger: TriggerFirst})
		m.mu.Lock()
		losses := m.losses
		m.mu.Unlock()
		keys, args := m.acquireCall(1)
		keys.Latch = []string{m.newLatch()}
		res, sent, err := a.attempt(keys, args, time.Now(), 1)
		var validUntil time.Time
		if err == nil && res.Acquired {
			validUntil, err = m.validity(a.actx, sent, res.TTL, m.cfg.leaseFor())
		}
		if err != nil {
			return a.fail(err)
		}
		if !validUntil.IsZero() {
			if held, ok, err := a.won(res.HoldCount, 0, validUntil, &losses); ok {
				return held, ok, err
			}
		}
		m.forget(res.Acquired, losses)
		if err := m.waitUndo(a.actx, time.Now()); err != nil {
			return a.fail(err)
		}
		a.n = 0
	}

	// A first acquire: attempts, with sleeps in the queue between them,
	// until the lock is taken or handed over, the wait ends, or something
	// fails.
	queue := !bounded || wait > 0
	if queue {
		select { // a handoff left over from an earlier wait
		case <-m.wake:
		default:
		}
		m.c.await(m.owner, m.wake)
		defer m.c.await(m.owner, nil)
	}
	defer func() {
		if a.sub != nil {
			a.sub.leave()
		}
	}()
	var (
		seq    int64
		res    scripts.AcquireResult
		sent   time.Time
		handed bool // res is a handoff's grant, not an attempt's answer
	)
	for {
		if !handed {
			a.n++
			m.emit(Event{Kind: EventAttempt, Attempt: a.n, Trigger: a.trigger, Wait: time.Since(a.start)})
			seq = int64(m.seq.Add(1))
			keys, args := m.acquireCall(seq)
			if queue {
				args.QueueTTL = m.cfg.queueTTL()
			}
			from := time.Now()
			if a.n == 1 {
				from = begun
			}
			var err error
			if res, sent, err = a.attempt(keys, args, from, seq); err != nil {
				// rueidis may report TryLock's end before actx does.
				a.late = bounded && errors.Is(err, context.DeadlineExceeded) && !time.Now().Before(a.deadline)
				return a.fail(err)
			}
		}
		if res.Acquired {
			granted := m.cfg.leaseFor()
			if handed {
				granted = m.cfg.grantLease()
			}
			validUntil, err := m.validity(a.actx, sent, res.TTL, granted)
			if err == nil && !validUntil.IsZero() {
				return a.won(res.HoldCount, res.Token, validUntil, nil)
			}
			// The hold's lease ran out before this process heard of it (a
			// stalled server): give it back, and attempt anew.
			m.abandon(seq)
			if err == nil {
				err = m.waitUndo(a.actx, time.Now())
			}
			if err != nil {
				return a.fail(err)
			}
			a.trigger = TriggerFirst
			if handed {
				a.trigger = TriggerNotified
			}
			handed = false
			continue
		}
		if !queue || (bounded && !time.Now().Before(a.deadline)) {
			if queue {
				m.abandon(seq) // leave the queue
			}
			return a.timedOut()
		}
		a.answered = true
		if a.queued.IsZero() {
			a.queued = sent
		}
		m.emit(Event{Kind: EventRefused, Attempt: a.n, Wait: time.Since(a.start)})

		token, err := a.sleep(res, sent)
		switch {
		case err != nil:
			m.abandon(seq) // gives back a handoff too
			return a.fail(err)
		case token != 0 && m.cfg.replicas == 0:
			// Handed over by a release: claimed above, on the next pass,
			// the grant's lease counted from the refused attempt's send.
			// (With WithReplicas the grant was written on the releaser's
			// connection, which WAIT cannot cover: the next attempt finds
			// the grant, writes its lease anew and WAITs; replicas that
			// have that write have the grant before it.)
			res = scripts.AcquireResult{Acquired: true, HoldCount: 1, Token: token, TTL: m.cfg.grantLease()}
			handed = true
		}
	}
}

// forget ends a hold this Mutex counted that turned out to be over after a
// reentrant attempt (ErrLost): the server no longer counts it, its lease
// ran out before this process heard of the reply, or it ended while the
// call was out (lost, and then given back, which took this count along).
// When the attempt acquired and no loss came since losses, the server
// still counts it, and it is given back.
func (m *Mutex) forget(acquired bool, losses uint64) {
	m.mu.Lock()
	var g *givenUp
	if acquired && m.losses == losses {
		g = m.giveUpLocked(ErrLost)
	}
	h := m.hold
	m.holds, m.token, m.hold = 0, 0, nil
	m.mu.Unlock()
	if g != nil {
		m.startGiveBack(g)
	}
	if h != nil {
		h.end(ErrLost)
		m.emit(Event{Kind: EventLost, Hold: time.Since(h.start), Err: ErrLost})
	}
}

// attempt runs one attempt: the acquire script with keys and args, retried
// after a lost reply within the retry window counted from from. It returns
// the answer and when the try that got it was sent: the answer's lease
// began after that, so sent + its TTL is a safe end of the hold even when
// the answer came late. A retried first acquire that finds the owner
// holding takes that hold as it is; a reentrant one replays its latch.
//
// With WithReplicas each try that acquired is followed by WAIT. A first
// acquire whose WAIT failed (a failover sent the script to the new
// primary, WAIT to the old one) is tried again and writes its lease anew;
// a reentrant one whose answer came from a retry (a replayed latch writes
// nothing) writes its lease once more (Renew) for WAIT to cover.
//
// With a deadline on actx (TryLock's, or the caller's) the call runs on a
// goroutine of its own, and attempt returns at the deadline or at Close
// even if the executor does not (rueidis holds a call while it redials);
// without one it runs on the caller's goroutine (a goroutine per attempt
// would cost the uncontended Lock a quarter of its allocations).
//
// An attempt that failed after it may have run is rolled back (Abandon of
// attempt seq; a reentrant one is sent again and released, undoAgain),
// in the background; when the replicas did not confirm it (WAIT fell
// short, failed, or had not answered by actx's deadline: Redis may answer
// 1/hz late) and ctx is live, attempt waits for the rollback, so that
// nothing is held when it returns the *ReplicaError (ErrNoAnswer when the
// rollback got no answer; the wait may pass TryLock's bound).
func (a *acquisition) attempt(keys scripts.AcquireKeys, args scripts.AcquireArgs, from time.Time, seq int64) (scripts.AcquireResult, time.Time, error) {
	m := a.m
	window := max(m.cfg.retryWindow-time.Since(from), time.Millisecond)
	var r acquireReply
	if _, ok := a.actx.Deadline(); !ok {
		r = m.send(a.actx, keys, args, window)
	} else {
		// The call itself may outlive actx, so that an answer that came
		// in time but found this goroutine not yet running again (a GC
		// pause, a busy or throttled host) still counts; it is cancelled
		// once the caller stops waiting.
		cctx, cancel := context.WithCancel(context.WithoutCancel(a.actx))
		ch := make(chan acquireReply, 1)
		go func() {
			defer cancel()
			ch <- m.send(cctx, keys, args, window)
		}()
		select {
		case r = <-ch:
		case <-a.actx.Done():
		case <-m.c.done:
		}
		select { // an answer that came as the wait ended still counts
		case r = <-ch:
		default:
		}
		if r == (acquireReply{}) {
			cancel()
			if r.err = a.actx.Err(); r.err == nil {
				r.err = ErrClosed
			}
		}
	}
	err := r.err
	if err == nil || !mayHaveRun(err) {
		return r.res, r.sent, err
	}
	undo := m.abandonCall(seq)
	if len(keys.Latch) > 0 {
		undo = m.undoAgain(keys.Latch[0])
	}
	rolledBack := m.rollback(true, false, undo)
	var ra *ReplicaError
	if m.cfg.replicas == 0 || a.ctx.Err() != nil || m.c.isClosed() ||
		!(errors.As(err, &ra) || (errors.Is(err, context.DeadlineExceeded) && a.actx.Err() != nil)) {
		return r.res, r.sent, err
	}
	var u undone
	select {
	case u = <-rolledBack:
	case <-a.ctx.Done():
		return r.res, r.sent, a.ctx.Err()
	case <-m.c.done:
		return r.res, r.sent, ErrClosed
	}
	switch {
	case u.err != nil:
		err = fmt.Errorf("%w: the rollback of a hold the replicas did not acknowledge failed: %w", ErrNoAnswer, u.err)
	case ra != nil:
		err = ra
	case u.released:
		err = &ReplicaError{Want: m.cfg.replicas, Timeout: m.cfg.replicaTimeout}
	}
	return r.res, r.sent, err
}

// acquireReply is an attempt's outcome: its answer, when the try that got
// it was sent, and its error (a *ReplicaError for a hold too few replicas
// acknowledged).
type acquireReply struct {
	res  scripts.AcquireResult
	sent time.Time
	err  error
}

// send is attempt's script call, on the caller's goroutine or its own.
func (m *Mutex) send(ctx context.Context, keys scripts.AcquireKeys, args scripts.AcquireArgs, window time.Duration) (r acquireReply) {
	reentrant, tries := len(keys.Latch) > 0, 0
	var short *ReplicaError
	r.err = m.retry(ctx, window, func(ctx context.Context) (err error) {
		tries++
		r.sent = time.Now()
		cctx, w := m.askAcks(ctx)
		r.res, err = m.scripts.Acquire(cctx, keys, args)
		short = nil
		if err == nil && r.res.Acquired {
			if short = m.short(w); short != nil && short.Err != nil && !reentrant {
				return short
			}
		}
		return err
	})
	if reentrant && tries > 1 && r.err == nil && r.res.Acquired && short == nil && m.cfg.replicas > 0 {
		cctx, w := m.askAcks(ctx)
		ok, err := m.scripts.Renew(cctx, m.keys.Renew(), scripts.RenewArgs{Owner: m.owner, Lease: m.cfg.leaseFor()})
		if err == nil && !ok {
			err = ErrLost
		}
		if short = m.short(w); err != nil {
			short = &ReplicaError{Want: m.cfg.replicas, Timeout: m.cfg.replicaTimeout, Err: err}
		}
	}
	if r.err == nil && short != nil {
		r.err = short // a hold too few replicas acknowledged
	}
	return r
}

// validity returns until when, on this process' clock, a hold is valid
// that a call sent at sent reported with ttl left (a handoff: its grant):
// sent + ttl. When that leaves less than half of granted (a late reply),
// the server is asked for the hold's PTTL once more, counted from that
// question's send. The zero Time: the hold is gone or has no time left.
func (m *Mutex) validity(ctx context.Context, sent time.Time, ttl, granted time.Duration) (time.Time, error) {
	if ttl <= 0 {
		return time.Time{}, nil
	}
	until := sent.Add(ttl)
	if time.Until(until) >= granted/2 {
		return until, nil
	}
	sent = time.Now()
	in, err := m.ask(ctx)
	switch {
	case err != nil:
		return time.Time{}, err
	case in.HoldCount == 0 || in.TTL <= 0:
		return time.Time{}, nil
	}
	if until = sent.Add(in.TTL); !until.After(time.Now()) {
		return time.Time{}, nil
	}
	return until, nil
}

// won records a hold of count, with token (0: the current hold's), valid
// until validUntil, and returns the caller's context: a new hold's, or,
// reentrant, one that also ends with the running hold. A loss since
// losses (a reentrant acquire's, read before its call) voids it (false).
func (a *acquisition) won(count, token int64, validUntil time.Time, losses *uint64) (context.Context, bool, error) {
	m := a.m
	m.mu.Lock()
	if losses != nil && m.losses != *losses {
		m.mu.Unlock()
		return nil, false, nil
	}
	m.holds, m.gaveUp = count, nil
	if token != 0 {
		m.token = token
		m.newest = max(m.newest, token)
	}
	ctx, cancel := context.WithCancelCause(a.ctx)
	if h := m.hold; h != nil { // reentrant: ends with a.ctx or the hold
		h.extend(validUntil)
		context.AfterFunc(h.ctx, func() { cancel(context.Cause(h.ctx)) })
	} else {
		m.hold = &hold{m: m, ctx: ctx, cancel: cancel, parent: a.ctx, start: time.Now(),
			validUntil: validUntil.Add(-m.cfg.leaseFor() / clockDrift)}
		m.hold.launch()
	}
	token = m.token
	m.mu.Unlock()
	m.emit(Event{Kind: EventAcquired, Attempt: a.n, Trigger: a.trigger, Wait: time.Since(a.start), HoldCount: count, Token: token})
	return ctx, true, nil
}

// sleep waits in the queue after res refused an attempt sent at sent, and
// returns the token of a handoff when a wake message brings one; a.trigger
// says what ended the wait. With wake messages (notifies) it subscribes
// first; a subscription not ready before sent may have missed a handoff,
// so it waits for it to settle (at most to a bounded wait's deadline; a
// wake message meanwhile is left for later) and the next attempt comes at
// once (TriggerSubscribed).
func (a *acquisition) sleep(res scripts.AcquireResult, sent time.Time) (token int64, err error) {
	m := a.m
	if a.sub == nil && m.notifies() {
		if a.sub, err = m.c.subscribe(m.keys.Wake + m.c.id); err != nil {
			return 0, err
		}
		if !a.sub.readyBefore(sent) {
			// A wake message (a nudge, a stale token) waits in m.wake
			// meanwhile: taken now, it would send the next attempt before
			// the subscription can hear of a handoff after it.
			var timeout <-chan time.Time
			if a.bounded {
				t := time.NewTimer(time.Until(a.deadline))
				defer t.Stop()
				timeout = t.C
			}
			select {
			case <-a.sub.settled:
			case <-timeout:
			case <-a.ctx.Done():
				return 0, a.ctx.Err()
			case <-m.c.done:
				return 0, ErrClosed
			}
			a.trigger = TriggerSubscribed
			return 0, nil
		}
	}
	d, next := m.pollAfter(res, &a.pace, a.sub, time.Since(a.queued), a.deadline, a.bounded)
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case token = <-m.wake:
		if token <= m.newestToken() {
			// 0: a resubscription, a handoff may have been missed. Else
			// the late message of a handoff this Mutex has already
			// claimed with an attempt, and given back since.
			a.trigger = TriggerNotified
			return 0, nil
		}
		a.trigger = TriggerHandoff
		return token, a.ctx.Err()
	case <-t.C:
		a.trigger = next
		return 0, nil
	case <-a.ctx.Done():
		return 0, a.ctx.Err()
	case <-m.c.done:
		return 0, ErrClosed
	}
}

// pollAfter is how long sleep waits after res refused an attempt when no wake
// message comes, and which Trigger ends that wait: the fallback poll for
// res's lease, cut to a bounded wait's deadline. Without wake messages the
// waiter asks sooner: PollOnly as below, a Client without a rueidis client
// (sub nil) as pace finds the queue moving.
func (m *Mutex) pollAfter(res scripts.AcquireResult, pace *queuePace, sub *subscription, waited time.Duration, deadline time.Time, bounded bool) (time.Duration, Trigger) {
	sleep, next := m.cfg.poll(res.TTL), TriggerPoll
	switch {
	case m.cfg.wait.PollOnly:
		// Normal mode: the next two in line ask every defaultSection, as
		// bsm/redislock's waiters do, and take the lock when they find it
		// free. A waiter further back could take it only from those ahead
		// of it, so it sleeps until it has waited about PollStarvation (a
		// lock freed meanwhile with no one else asking idles until then).
		// From then on a release may hand it the lock (starvation mode),
		// so for another PollStarvation it asks again as soon as each
		// answer is in: a handoff comes within a few sections, and one
		// asleep would idle the lock handed to it. A lock still held after
		// that is held long: it asks every defaultSection again.
		starving := PollStarvation - defaultSection - waited
		switch {
		case starving <= -PollStarvation:
			sleep = min(sleep, defaultSection)
		case starving <= 0:
			sleep = 0
		case res.Ahead <= 1:
			sleep = min(sleep, defaultSection, starving)
		default:
			sleep = min(sleep, starving)
		}
	case sub == nil: // no wake messages
		sleep = pace.next(res.Ahead, res.TTL, sleep)
	}
	if rem := time.Until(deadline); bounded && rem <= sleep {
		sleep, next = max(rem, 0), TriggerDeadline
	}
	return sleep, next
}

// queuePace paces the polls of a waiter that hears of no handoff, of a
// Client without a rueidis client (WithExecutor; PollOnly waiters are
// paced by pollAfter), so that a lock handed over does not idle until a
// fallback poll: the next waiter (ahead 0) asks again as soon as its
// answer is in, and a waiter further back after about the time the
// sections ahead of it take, measured from how fast its place moves (1 ms
// a section until then).
type queuePace struct {
	at      time.Time     // when ahead was last seen to change
	ahead   int64         // waiters ahead at that time
	section time.Duration // time per section ahead, once measured
}

// defaultSection is queuePace's guess of a section's length before it
// has measured one: the polling interval of bsm/redislock's LinearBackoff
// as its users configure it most.
const defaultSection = time.Millisecond

// next returns how long to wait before the next attempt, after one that
// found ahead waiters ahead and the holder's lease at ttl, at most most
// (the fallback poll).
func (p *queuePace) next(ahead int64, ttl, most time.Duration) time.Duration {
	now := time.Now()
	switch {
	case p.at.IsZero() || ahead > p.ahead:
		p.at, p.ahead = now, ahead
	case ahead < p.ahead:
		p.section = now.Sub(p.at) / time.Duration(p.ahead-ahead)
		p.at, p.ahead = now, ahead
	}
	section := p.section
	if section == 0 {
		section = defaultSection
	}
	// The next two ask again as soon as their answer is in: the first
	// is the heir of the next release, the second of the one after, and
	// a release comes a round trip or two after a handoff. The others
	// wake when about half the sections ahead of them are done.
	d := section * time.Duration(min(max(ahead-1, 0), 1<<20)) / 2
	if ttl > 0 {
		d = min(d, ttl)
	}
	return min(d, most)
}

// timedOut is TryLock's (false, nil): the wait ended while another owner
// held the lock.
func (a *acquisition) timedOut() (context.Context, bool, error) {
	a.m.emit(Event{Kind: EventTimedOut, Attempt: a.n, Wait: time.Since(a.start)})
	return notHeld, false, nil
}

// fail ends the acquisition without a hold: the caller's ctx error,
// ErrClosed, a *ReplicaError (the replicas fell short) as they are. When
// TryLock's wait and grace are over (actx's deadline; or, before anything
// else, the attempt's own call failed with a deadline past the wait: late),
// TryLock reports (false, nil) if an attempt got the server's answer,
// ErrNoAnswer if none did. A step that got no answer (a dead or stalled
// server) is ErrNoAnswer too, wrapping the last transport error, if any.
func (a *acquisition) fail(err error) (context.Context, bool, error) {
	m := a.m
	var ra *ReplicaError
	waitOver := a.late || (a.bounded && a.actx.Err() != nil)
	switch {
	case a.ctx.Err() != nil:
		if !errors.Is(err, a.ctx.Err()) {
			err = a.ctx.Err()
		}
	case !a.late && m.c.isClosed():
		err = ErrClosed
	case !a.late && errors.As(err, &ra):
	case waitOver && a.answered:
		return a.timedOut()
	case errors.Is(err, ErrNoAnswer):
	case waitOver, unanswered(err):
		took := time.Since(a.start).Round(time.Millisecond)
		if errors.Is(err, context.DeadlineExceeded) || errors.Is(err, context.Canceled) {
			err = fmt.Errorf("%w in %v", ErrNoAnswer, took)
		} else {
			err = fmt.Errorf("%w in %v: %w", ErrNoAnswer, took, err)
		}
	}
	m.emit(Event{Kind: EventAcquireFailed, Attempt: a.n, Wait: time.Since(a.start), Err: err})
	return notHeld, false, m.wrap(err)
}

// acquireCall returns the keys and arguments of acquire attempt seq, with
// no latch and no place in the queue.
func (m *Mutex) acquireCall(seq int64) (scripts.AcquireKeys, scripts.AcquireArgs) {
	keys := scripts.AcquireKeys{Lock: m.keys.Lock, Fence: m.keys.Fence, Queue: m.keys.Queue, Waits: m.keys.Waits, Tomb: m.tomb}
	args := scripts.AcquireArgs{Owner: m.owner, Lease: m.cfg.leaseFor(), LatchTTL: m.cfg.latchTTL(), FenceTTL: m.cfg.fenceTTL,
		Attempt: seq, GrantLease: m.cfg.grantLease(), Starve: m.cfg.starve()}
	return keys, args
}

// askAcks returns ctx asking for WAIT after the script, and the Wait the
// executor fills in; ctx and nil with WithReplicas off.
func (m *Mutex) askAcks(ctx context.Context) (context.Context, *runtime.Wait) {
	if m.cfg.replicas == 0 {
		return ctx, nil
	}
	w := &runtime.Wait{Replicas: int64(m.cfg.replicas), Timeout: m.cfg.replicaTimeout}
	return context.WithValue(ctx, waitKey{}, w), w
}
