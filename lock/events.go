package lock

import (
	"strconv"
	"time"
)

// EventKind says what an Event reports.
type EventKind uint8

// The events a hook (WithHook) receives. One Lock or TryLock call emits one
// EventAttempt per acquire script call and ends with exactly one of
// EventAcquired, EventTimedOut or EventAcquireFailed, so
//
//	success rate = Acquired / (Acquired + TimedOut + AcquireFailed)
//	timeout rate = TimedOut / (Acquired + TimedOut + AcquireFailed)
//	wait p99     = the 99th percentile of Event.Wait over EventAcquired
//
// are the numbers to alert on; example_test.go wires them to expvar.
const (
	// EventAttempt: one acquire script call is about to be sent. Attempt
	// counts from 1 within the Lock/TryLock call; Trigger says what woke it.
	EventAttempt EventKind = iota + 1
	// EventAcquired: Lock/TryLock got the lock. Wait is the time since the
	// call began, Attempt the attempts it took, HoldCount the owner's
	// holds after it (above 1 for a reentrant acquire), Token the hold's
	// fencing token, Trigger what woke the winning attempt (TriggerHandoff:
	// a release handed the lock over; Attempt is then the attempts made
	// before).
	EventAcquired
	// EventTimedOut: TryLock's wait passed while another owner held the
	// lock. Wait and Attempt as for EventAcquired.
	EventTimedOut
	// EventAcquireFailed: Lock/TryLock gave up on an error: Err is the
	// context's error when ctx ended first, or the Redis error.
	EventAcquireFailed
	// EventReleased: Unlock released one hold; HoldCount is what is left.
	// At 0 the hold is over and Hold is how long it was held; the lock is
	// free or went to the first waiter.
	EventReleased
	// EventRenewed: the watchdog extended the lease.
	EventRenewed
	// EventRenewFailed: a renewal failed with Err (the server did not
	// answer, or, with WithReplicas, a *ReplicaError: too few replicas
	// acknowledged it); the watchdog retries while the lease lasts. A
	// renewal runs under the hold's validity, so the last one before the
	// hold is given up can fail with context.DeadlineExceeded instead.
	EventRenewFailed
	// EventLost: the holder learned that the lock is gone (Err is
	// ErrLost or ErrLeaseExpired); Hold is how long it was held.
	EventLost
	// EventRefused: the server answered attempt Attempt: another owner
	// holds the lock, or waiters are ahead of this one. The waiter then
	// sleeps until a handoff, its next poll or the end of its wait (or
	// attempts again at once when its wake subscription has just become
	// ready). Refusals per acquisition measure contention.
	EventRefused
)

var eventNames = [...]string{"", "attempt", "acquired", "timed out", "acquire failed", "released", "renewed", "renew failed", "lost", "refused"}

// String returns the event's name, e.g. "acquired".
func (k EventKind) String() string {
	if int(k) < len(eventNames) && k != 0 {
		return eventNames[k]
	}
	return "EventKind(" + strconv.Itoa(int(k)) + ")"
}

// Trigger says why an acquire attempt ran.
type Trigger uint8

// The reasons for an attempt.
const (
	TriggerFirst      Trigger = iota + 1 // the first attempt of a Lock/TryLock call
	TriggerSubscribed                    // the wake subscription is ready; attempt in case the lock was handed over meanwhile
	TriggerNotified                      // the wake subscription was restored, or a stale message came: attempt in case a handoff was missed
	TriggerPoll                          // the fallback poll fired (no handoff within the poll interval)
	TriggerDeadline                      // TryLock's wait ran out: the last attempt
	// TriggerHandoff: on EventAcquired, a release handed the lock to this
	// waiter, which sent no attempt after the release (with PollOnly no
	// message says so: the next poll finds the handoff, TriggerPoll).
	TriggerHandoff
)

var triggerNames = [...]string{"", "first", "subscribed", "notified", "poll", "deadline", "handoff"}

// String returns the trigger's name, e.g. "notified".
func (t Trigger) String() string {
	if int(t) < len(triggerNames) && t != 0 {
		return triggerNames[t]
	}
	return "Trigger(" + strconv.Itoa(int(t)) + ")"
}

// Event is one thing that happened to a lock; see EventKind for which
// fields each kind sets. Durations are measured on the monotonic clock.
type Event struct {
	Kind      EventKind
	Name      string        // the lock name given to New
	Attempt   int           // attempts so far in this Lock/TryLock call
	Trigger   Trigger       // EventAttempt: why it ran; EventAcquired, EventReleased: see TriggerHandoff
	Wait      time.Duration // since Lock/TryLock began
	Hold      time.Duration // since the first acquire of the hold
	HoldCount int64         // the owner's holds after the event
	Token     int64         // the hold's fencing token
	Err       error
}

func (m *Mutex) emit(e Event) {
	if m.cfg.hook != nil {
		e.Name = m.name
		m.cfg.hook(e)
	}
}
