package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestIsTerminal(t *testing.T) {
	assert.False(t, isTerminal(&bytes.Buffer{}))
	f, err := os.Create(filepath.Join(t.TempDir(), "log"))
	require.NoError(t, err)
	defer f.Close()
	assert.False(t, isTerminal(f), "a regular file gets plain lines")
	if tty, err := os.OpenFile("/dev/tty", os.O_WRONLY, 0); err == nil {
		defer tty.Close()
		assert.True(t, isTerminal(tty))
	}
}

// The bar on a terminal ends full, with the count, on its own line.
func TestBarFinishes(t *testing.T) {
	var out bytes.Buffer
	var done atomic.Int64
	stop := startBar(&out, 400, &done)
	done.Store(400)
	stop()
	last := out.String()[strings.LastIndexByte(strings.TrimRight(out.String(), "\n"), '\r')+1:]
	assert.Contains(t, last, "100%")
	assert.Contains(t, last, "(400/400")
	assert.True(t, strings.HasSuffix(last, "\n"), "the next line starts below the bar: %q", last)
}

// An interrupted run leaves the bar where it stopped.
func TestBarStopsEarly(t *testing.T) {
	var out bytes.Buffer
	var done atomic.Int64
	stop := startBar(&out, 400, &done)
	done.Store(100)
	stop()
	assert.Contains(t, out.String(), "(100/400")
	assert.NotContains(t, out.String(), "(400/400")
	assert.True(t, strings.HasSuffix(out.String(), "\n"))
}

// poll ticks until stopped; stop returns once its goroutine is gone, then
// runs last once.
func TestPoll(t *testing.T) {
	var ticks, lasts atomic.Int64
	ticked := make(chan struct{}, 1)
	stop := poll(time.Millisecond, func() {
		ticks.Add(1)
		select {
		case ticked <- struct{}{}:
		default:
		}
	}, func() { lasts.Add(1) })
	<-ticked
	stop()
	n := ticks.Load()
	assert.Positive(t, n)
	assert.Equal(t, int64(1), lasts.Load())
	time.Sleep(5 * time.Millisecond)
	assert.Equal(t, n, ticks.Load(), "no tick after stop")
}
