package stock_test

import (
	"context"
	"fmt"
	"net"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/luagen/luagen/internal/exectest"
	"github.com/luagen/luagen/redistest"
)

const faultBuyers, faultUnits = 2000, 500

// 2,000 buyers race for 500 units while SCRIPT FLUSH empties the script
// cache every 50 ms: every EVALSHA after a flush answers NOSCRIPT, which
// must turn into EVAL inside runtime, never into a buyer's error. In
// function mode FUNCTION FLUSH empties the functions: every FCALL after a
// flush answers "Function not found", which must turn into FUNCTION LOAD
// and a second FCALL.
func TestFaultScriptFlushEvery50ms(t *testing.T) {
	runModes(t, func(t *testing.T, m mode, ex exectest.Kind) { testFaultScriptFlush(t, m, plain, ex) })
}

// The same with calls merged by a runtime.Coalescer (EVAL mode): the
// companion script is flushed too, and merged runs fall back to EVAL like
// single calls.
func TestFaultScriptFlushEvery50msCoalesced(t *testing.T) {
	exectest.Run(t, func(t *testing.T, ex exectest.Kind) { testFaultScriptFlush(t, evalMode, coalesced, ex) })
}

func testFaultScriptFlush(t *testing.T, m mode, wrap wrapper, ex exectest.Kind) {
	srv := redistest.Start(t)
	merged, mergedCalls := runsMerged(), callsMerged()
	s := m.new(wrap(ex.Single(t, srv)))
	k := keysFor("flush")
	srv.Do(t, "SET", k.Stock, strconv.Itoa(faultUnits))

	stop, flushed := make(chan struct{}), make(chan int)
	go func() {
		n := 0
		tick := time.NewTicker(50 * time.Millisecond)
		defer tick.Stop()
		for {
			select {
			case <-stop:
				flushed <- n
				return
			case <-tick.C:
				srv.Do(t, m.flush...)
				n++
			}
		}
	}()
	// 16 buyers in flight, each 8 ms apart: about a second of buying.
	res := race(t, raceConfig{buyers: faultBuyers, workers: 16, pace: 8 * time.Millisecond, keys: k,
		scripts: func(int) seller { return s }})
	close(stop)
	n := <-flushed

	res.requireNoErrors(t)
	assert.Zero(t, res.retried, "not even a transient error reached a buyer: %q", res.transient)
	assert.Equal(t, faultUnits, res.sold, "sold = 500")
	assert.Equal(t, faultBuyers-faultUnits, res.refused)
	assert.GreaterOrEqual(t, n, 3, "the cache was flushed during the race")
	reloads := srv.CommandCalls(t, m.reload)
	assert.GreaterOrEqual(t, reloads, 3, "buyers hit NOSCRIPT (Function not found) and fell back to %s", m.reload)
	runs, calls := merged(), mergedCalls()
	t.Logf("%d flushes, %d %s fallbacks, %d merged runs of %d calls", n, reloads, m.reload, runs, calls)
	// Every buyer's call, alone or in a merged run, began with m.call:
	// one per call alone, one per merged run.
	assert.GreaterOrEqual(t, srv.CommandCalls(t, m.call), faultBuyers-int(calls)+int(runs), "every buyer called with %s", m.call)
	if m.name == "functions" {
		assert.Zero(t, srv.CommandCalls(t, "evalsha"), "no EVALSHA in function mode (before the EVAL-mode oracle)")
	}
	r := requireReconciles(t, s, k, faultUnits)
	requireRecords(t, s, k, res, r)
}

// The same race while the server is killed (SIGKILL) and, 300 ms later,
// restarted once mid-run. With appendonly yes and appendfsync always, Redis writes and
// fsyncs the AOF before it replies, so every acknowledged sale survives the
// restart; a script killed before its AOF write is lost whole (its effects
// are one MULTI/EXEC in the AOF), stock and record together. Buyers whose
// calls fail retry with the same order id. So: sold = 500, every sold unit
// has its record, and no order was deducted twice (the counter equals
// initial minus the sold records, and replaying every sold order changes
// nothing). In function mode the library is part of the AOF: the restarted
// server runs FCALL with no reload.
func TestFaultServerRestartMidRace(t *testing.T) {
	runModes(t, func(t *testing.T, m mode, ex exectest.Kind) { testFaultServerRestart(t, m, plain, ex) })
}

// The same with calls merged by a runtime.Coalescer (EVAL mode): a merged
// run cut off by the kill fails every call in it, and runtime retries each
// (Deduct is idempotent), alone or merged again.
func TestFaultServerRestartMidRaceCoalesced(t *testing.T) {
	exectest.Run(t, func(t *testing.T, ex exectest.Kind) { testFaultServerRestart(t, evalMode, coalesced, ex) })
}

func testFaultServerRestart(t *testing.T, m mode, wrap wrapper, ex exectest.Kind) {
	srv := redistest.Start(t, "--appendonly", "yes", "--appendfsync", "always")
	merged := runsMerged()
	counting := &countingExecutor{Executor: ex.Single(t, srv)}
	s := m.new(wrap(counting))
	if m.name == "functions" {
		require.NoError(t, s.Preload(context.Background()))
	}
	k := keysFor("restart")
	srv.Do(t, "SET", k.Stock, strconv.Itoa(faultUnits))
	pid := srv.PID()
	probe := keysFor("restart-probe")
	srv.Do(t, "SET", probe.Stock, "1")
	probeDone := make(chan chan error, 1)

	res := race(t, raceConfig{buyers: faultBuyers, workers: 32, pace: 15 * time.Millisecond, keys: k,
		scripts: func(int) seller { return s },
		faultAt: 200, fault: func() error {
			// A call certainly in flight when the server dies: a busy
			// script holds the server, a probe Deduct (its own SKU)
			// is written behind it, and only then the kill. Without
			// this, whether a buyer's call is cut off depends on
			// timing (go-redis redials a refused connection by itself,
			// before anything is written).
			probeDone <- probeCutOff(t, srv, s)
			// Down for 300 ms, so buyers certainly meet a dead server.
			time.Sleep(300 * time.Millisecond)
			return srv.Restart()
		}})

	res.requireNoErrors(t)
	assert.NotEqual(t, pid, srv.PID(), "the server was restarted")
	assert.Less(t, res.answeredAfterFault, faultBuyers, "buyers were still buying when it was back")
	require.NoError(t, <-<-probeDone, "the probe cut off by the kill was retried after the restart")
	assert.Equal(t, "0", srv.Do(t, "GET", probe.Stock), "the probe deducted once")
	assert.Positive(t, counting.transient.Load(), "calls were cut off by the restart (and retried)")
	t.Logf("%d transient failures retried by runtime, %d buyers retried by hand, %d merged runs", counting.transient.Load(), res.retried, merged())
	assert.Equal(t, faultUnits, res.sold, "sold = 500: no acknowledged sale was lost")
	if m.name == "functions" {
		assert.Zero(t, srv.CommandCalls(t, "function|load"), "the restarted server had the library from its AOF")
	}
	r := requireReconciles(t, s, k, faultUnits)
	requireRecords(t, s, k, res, r)
}

// probeCutOff makes sure a Deduct is in flight when srv dies: it starts a
// script that keeps the server busy on a connection of its own, sends a
// probe Deduct through s (written behind the busy script, so unanswered),
// kills the server and returns the probe's outcome, which arrives once the
// runtime's retries reach the restarted server.
func probeCutOff(t *testing.T, srv *redistest.Server, s seller) chan error {
	busy, err := net.Dial("tcp", srv.Addr)
	require.NoError(t, err)
	defer busy.Close()
	const spin = "for i = 1, 1e9 do end return 1" // seconds of work; killed long before
	_, err = fmt.Fprintf(busy, "*3\r\n$4\r\nEVAL\r\n$%d\r\n%s\r\n$1\r\n0\r\n", len(spin), spin)
	require.NoError(t, err)
	time.Sleep(100 * time.Millisecond) // the server is inside the script
	done := make(chan error, 1)
	go func() {
		_, err := s.Deduct(context.Background(), keysFor("restart-probe").Deduct(), order("probe", "p", 1))
		done <- err
	}()
	time.Sleep(200 * time.Millisecond) // the probe is written and waits behind the script
	srv.Stop()
	return done
}
