package lock

import (
	"context"
	"errors"
	"fmt"
)

// The errors of this package; test for them with errors.Is. Lock, TryLock
// and Unlock return them as they are, except ErrNoAnswer, which comes
// wrapped with the lock's name as a Redis error does ("lock \"order:42\":
// ...").
var (
	// ErrNotHeld is returned by Unlock when this Mutex does not hold the
	// lock: never acquired, already released, expired, or taken over by
	// another owner. Nothing was changed, except after a hold this
	// process gave up on its own clock: then the error says whether the
	// server still counted it (it was released) or not.
	ErrNotHeld = errors.New("lock: not held")
	// ErrNotAcquired is the cause of the context that Lock and TryLock
	// return when they do not acquire the lock: it is cancelled from the
	// start, so using it by mistake stops the work it guards.
	ErrNotAcquired = errors.New("lock: not acquired")
	// ErrNilContext is returned for a nil context.
	ErrNilContext = errors.New("lock: nil context")
	// ErrLost is the cause when the holder learns that the lock is no
	// longer its own: a renewal found the lock gone (expired while the
	// holder was paused, deleted by ForceUnlock or by hand, taken over after
	// a failover), or renewals kept failing until the lease had run out on
	// the holder's clock. Code guarded by the lock must stop.
	ErrLost = errors.New("lock: lost")
	// ErrLeaseExpired is the cause when an explicit lease (WithLease) ran
	// out on the holder's clock. The server drops the lock at about the
	// same time; nothing renews it.
	ErrLeaseExpired = errors.New("lock: lease expired")
	// ErrUnlocked is the cause when the owner released its last hold.
	ErrUnlocked = errors.New("lock: unlocked")
	// ErrClosed is returned by calls on a closed Client and is the cause
	// of held contexts cancelled by Client.Close.
	ErrClosed = errors.New("lock: client closed")
	// ErrNoAnswer is matched by the error TryLock returns when its wait
	// ended before any attempt got an answer from the server (stalled,
	// unreachable, or this Mutex's earlier rollback still in flight), and
	// by the error Lock returns when no try got an answer within the retry
	// window: it says nothing about the lock, where TryLock's (false, nil)
	// means another owner holds it. It wraps the last transport error when
	// an attempt got one before the wait ended (errors.Is(err,
	// syscall.ECONNREFUSED) then works); a TryLock whose short wait ended
	// while its first attempt was still dialing has none to wrap.
	ErrNoAnswer = errors.New("lock: the wait ended without an answer from the server")
	// ErrBadOption is matched by every error that New and NewClient return
	// for an invalid option or lock name.
	ErrBadOption = errors.New("lock: invalid option")
)

// wrap returns this package's errors and context errors as they are, and
// wraps any other with the lock's name, keeping it matchable.
func (m *Mutex) wrap(err error) error {
	switch {
	case err == nil, errors.Is(err, context.Canceled), errors.Is(err, context.DeadlineExceeded),
		errors.Is(err, ErrClosed), errors.Is(err, ErrNotHeld), errors.Is(err, ErrNilContext):
		return err
	}
	return nameError(m.name, err)
}

// nameError wraps err with the lock's name, keeping it matchable with
// errors.Is.
func nameError(name string, err error) error {
	return fmt.Errorf("lock %q: %w", name, err)
}

// optionError is an invalid option or name; it matches ErrBadOption.
func optionError(format string, args ...any) error {
	return fmt.Errorf("%w: "+format, append([]any{ErrBadOption}, args...)...)
}
