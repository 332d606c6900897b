package main

import (
	"fmt"
	"io"
	"sync/atomic"
	"time"
)

// startProgress prints a "done/total" line to w once a second, starting
// after the first second so short runs stay quiet. The returned func stops it and
// waits for the printer to exit.
func startProgress(w io.Writer, total int, done *atomic.Int64) (stop func()) {
	quit := make(chan struct{})
	exited := make(chan struct{})
	go func() {
		defer close(exited)
		t := time.NewTicker(time.Second)
		defer t.Stop()
		for {
			select {
			case <-quit:
				return
			case <-t.C:
				n := done.Load()
				fmt.Fprintf(w, "seckill: %d/%d buyers done (%d%%)\n", n, total, n*100/int64(total))
			}
		}
	}()
	return func() { close(quit); <-exited }
}
