package lock_test

// The server-side queue of waiters on a real redis-server: releases hand
// the lock to the first live waiter, across Clients (processes), in FIFO
// order; waiters that died or gave up do not stall the lock.

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/luagen/luagen/lock"
)

// asleep waits until the server has refused attempts attempts of the
// waiter (EventRefused comes after the answer), the last of which sends
// it to sleep: a release from now on reaches it as a handoff.
func asleep(t *testing.T, ev *events, attempts int) {
	t.Helper()
	require.Eventually(t, func() bool { return len(ev.of(lock.EventRefused)) == attempts }, 5*time.Second, time.Millisecond)
	require.Len(t, ev.of(lock.EventAttempt), attempts, "no attempt since")
}

type lockResult struct {
	held context.Context
	ok   bool
	err  error
}

// goLock runs m.TryLock (wait > 0) or m.Lock (wait 0) in a goroutine.
func goLock(ctx context.Context, m *lock.Mutex, wait time.Duration) <-chan lockResult {
	ch := make(chan lockResult, 1)
	go func() {
		var r lockResult
		if wait > 0 {
			r.held, r.ok, r.err = m.TryLock(ctx, wait)
		} else {
			r.held, r.err = m.Lock(ctx)
			r.ok = r.err == nil
		}
		ch <- r
	}()
	return ch
}

func await(t *testing.T, ch <-chan lockResult) lockResult {
	t.Helper()
	select {
	case r := <-ch:
		return r
	case <-time.After(10 * time.Second):
		t.Fatal("Lock did not return")
		return lockResult{}
	}
}

// wakeChannel is the channel on which m's Client hears of handoffs.
func wakeChannel(m *lock.Mutex) string {
	id, _, _ := strings.Cut(m.Owner(), ".")
	return m.Key() + ":wake:" + id
}

func holdCount(t *testing.T, m *lock.Mutex) int64 {
	t.Helper()
	n, err := m.HoldCount(context.Background())
	require.NoError(t, err)
	return n
}
