package lock_test

import (
	"context"
	"syscall"
	"testing"
	"time"

	"github.com/luagen/luagen/lock"
	"github.com/luagen/luagen/redistest"
)

func TestZZStall(t *testing.T) {
	srv := redistest.Start(t)
	ctx := context.Background()
	c := newClient(t, srv.Client(t))
	m0 := newMutex(t, c, "x")
	m0.Lock(ctx)
	m0.Unlock(ctx)
	srv.Signal(syscall.SIGSTOP)
	defer srv.Signal(syscall.SIGCONT)
	for i := 0; i < 3; i++ {
		ev := &events{}
		m := newMutex(t, c, "x", lock.WithHook(ev.hook))
		start := time.Now()
		_, ok, err := m.TryLock(ctx, 0)
		t.Logf("%v %v %v", ok, err, time.Since(start))
	}
}
