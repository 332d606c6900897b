// Package lock is a reentrant Redis lock with Redisson's RLock semantics:
// a hash of owner → hold count under a PEXPIRE lease, refused owners told the
// holder's remaining lease, and release by the owner only.
//
// The scripts in lua/lock are wrapped by generated code (NewScripts and the
// Scripts methods Acquire, Renew and Release); the Mutex built on them lives
// in hand-written files of this package.
package lock

//go:generate go run github.com/luagen/luagen/cmd/luagen generate -new NewScripts ../lua/lock
