package main

import (
	"fmt"
	"io"
	"os"
	"sync/atomic"
	"time"

	"github.com/schollz/progressbar/v3"
)

// startProgress shows how many of total buyers are done until the returned
// stop is called; stop waits for the display to finish. On a terminal it is
// one progress bar redrawn in place (schollz/progressbar); elsewhere (a
// log, a pipe, a test) a "done/total" line once a second, starting after
// the first second so short runs stay quiet.
func startProgress(w io.Writer, total int, done *atomic.Int64) (stop func()) {
	if isTerminal(w) {
		return startBar(w, total, done)
	}
	return startLines(w, total, done)
}

// isTerminal reports whether w is a character device such as a terminal
// (not a file, a pipe or a buffer), where a bar redrawn with '\r' reads well.
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	fi, err := f.Stat()
	return err == nil && fi.Mode()&os.ModeCharDevice != 0
}

// startBar draws a progress bar on w, polling done ten times a second.
func startBar(w io.Writer, total int, done *atomic.Int64) (stop func()) {
	bar := progressbar.NewOptions(total,
		progressbar.OptionSetWriter(w),
		progressbar.OptionSetDescription("seckill: buying"),
		progressbar.OptionSetItsString("buyers"),
		progressbar.OptionShowCount(),
		progressbar.OptionShowIts(),
		progressbar.OptionSetWidth(30),
		progressbar.OptionThrottle(100*time.Millisecond),
		progressbar.OptionOnCompletion(func() { fmt.Fprintln(w) }),
	)
	return poll(100*time.Millisecond, func() { _ = bar.Set64(done.Load()) }, func() {
		if n := done.Load(); n >= int64(total) {
			_ = bar.Finish()
		} else {
			_ = bar.Set64(n)
			_ = bar.Exit() // interrupted: keep the bar where it stopped
			fmt.Fprintln(w)
		}
	})
}

// startLines prints a "done/total" line to w once a second.
func startLines(w io.Writer, total int, done *atomic.Int64) (stop func()) {
	return poll(time.Second, func() {
		n := done.Load()
		fmt.Fprintf(w, "seckill: %d/%d buyers done (%d%%)\n", n, total, n*100/int64(total))
	}, func() {})
}

// poll calls tick every interval until stop is called, then calls last
// once the ticking goroutine has exited.
func poll(interval time.Duration, tick, last func()) (stop func()) {
	quit := make(chan struct{})
	exited := make(chan struct{})
	go func() {
		defer close(exited)
		t := time.NewTicker(interval)
		defer t.Stop()
		for {
			select {
			case <-quit:
				return
			case <-t.C:
				tick()
			}
		}
	}()
	return func() { close(quit); <-exited; last() }
}
