package lock

import (
	"errors"
	"fmt"
)

// Causes of a held context's cancellation, as context.Cause reports them,
// and errors of the Client. ErrNotHeld, the error of an Unlock by a
// non-owner or of a lock that is gone, is declared by lua/lock/release.lua
// and generated into release.lua.go; test for all of them with errors.Is.
var (
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
	ErrUnlocked = errors.New("lock: unlocked by its owner")
	// ErrClosed is returned by calls on a closed Client and is the cause
	// of held contexts cancelled by Client.Close.
	ErrClosed = errors.New("lock: client closed")
	// ErrBadOption is matched by every error that New and NewClient return
	// for an invalid option or lock name.
	ErrBadOption = errors.New("lock: invalid option")
)

// nameError wraps err with the lock's name, keeping it matchable with
// errors.Is.
func nameError(name string, err error) error {
	return fmt.Errorf("lock %q: %w", name, err)
}

// optionError is an invalid option or name; it matches ErrBadOption.
func optionError(format string, args ...any) error {
	return fmt.Errorf("%w: "+format, append([]any{ErrBadOption}, args...)...)
}
