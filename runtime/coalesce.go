package runtime

import (
	"context"
	"errors"
	"strconv"
	"sync"
	"sync/atomic"
	"time"
)

// Bounds of one merged run (see [Coalescer]). The calls per run are the
// script's own bound, from its ---@coalesce tag ([Script.CoalesceLimit]).
const (
	// CoalesceMaxBytes caps the KEYS and ARGV bytes of the calls merged
	// into one run; a call bigger than this alone runs alone.
	CoalesceMaxBytes = 256 << 10
	// CoalesceRunBudget caps the server time of one merged run: the run
	// starts no further call once this much time has passed since it
	// began (it reads TIME before call 2 and every eighth call after), and
	// the calls it did not start go into the next run. So a run lasts at
	// most this plus eight calls, far from Redis' busy-script limit (busy-reply-threshold, 5 s by
	// default), and other clients of the node wait no longer than that.
	CoalesceRunBudget = 5 * time.Millisecond
)

// coalesceInFlight is how many runs of one script and slot a Coalescer
// keeps in flight: with two, the server runs one while the client reads
// the other's replies and gathers the next, so neither waits for the
// other; a call still goes at once when fewer are in flight.
const coalesceInFlight = 2

// Coalescer is an [Executor] that merges concurrent calls of one script on
// one hash slot into one server-side run, for scripts whose header opts in
// with ---@coalesce ([Script.CoalesceLimit] > 0); calls of every other script,
// and Eval and Load, go to the wrapped executor unchanged. Create it with
// [NewCoalescer]:
//
//	scripts := stock.New(runtime.NewCoalescer(runtime.NewRueidisExecutor(client)))
//
// It keeps at most two runs in flight per script and slot, and batches
// the rest: a call that finds fewer in flight is sent at once, as a plain
// EVALSHA, so coalescing adds no latency without concurrency; calls that
// arrive while two are in flight wait, and when one ends the first of them
// sends all the waiting ones (up to the script's bound and
// [CoalesceMaxBytes]) as one EVALSHA of the script's companion (see
// coalesce_wire.go), which runs the body once per call, in arrival order,
// each with its own KEYS and ARGV. (Two, not one: the server runs one run
// while the client reads the other's replies and gathers the next.)
// Each call gets the reply it would have got alone, byte for byte: a value,
// the script's own error reply, or an error the body raised (xpcall stops
// it from stopping the others; its writes stay, as after a separate call:
// Redis does not roll a script back). Running concurrent calls back to back
// is an order they could have run in anyway, so callers see no difference
// but speed. [Script.Exec] decodes, classifies and retries as for any
// executor.
//
// Whole-run outcomes reach every call of the run: the companion is loaded
// with EVAL after NOSCRIPT like any script (the merged calls did not run);
// a lost reply or an error reply of the server (BUSY, OOM, READONLY,
// LOADING, ...) fails every merged call with the same error a single call
// would have got, and [Script.Exec] then retries the calls of ---@idempotent
// scripts and never resends the others.
//
// Calls never merge across scripts, hash slots (so never across cluster
// nodes) or Coalescers. The goroutine whose call leads a run sends it and
// delivers every reply; no goroutine is started. A caller whose ctx ends
// while it waits returns ctx.Err() (its call was not sent, or is in flight
// and may run, as with a single call); the leader of a run keeps waiting for
// the reply while another caller of the run still waits. A Coalescer runs
// every script with EVALSHA/EVAL: it hides a [FunctionExecutor]'s FCALL.
type Coalescer struct {
	inner    Executor
	budget   time.Duration // CoalesceRunBudget; tests change it
	inFlight int           // coalesceInFlight; tests change it
	mu       sync.Mutex
	queues   map[coalesceKey]*coalesceQueue
}

var (
	_ Executor  = (*Coalescer)(nil)
	_ Pipeliner = (*Coalescer)(nil)
)

// NewCoalescer returns a [Coalescer] that runs scripts on e. It panics when e
// is nil: a programming error, reported where it is made.
func NewCoalescer(e Executor) *Coalescer {
	mustNotBeNil(e, "runtime.NewCoalescer: the Executor")
	return &Coalescer{inner: e, budget: CoalesceRunBudget, inFlight: coalesceInFlight, queues: map[coalesceKey]*coalesceQueue{}}
}

// Unwrap returns the executor the Coalescer sends to. Through it a
// Coalescer has that executor's [Hook], server address and [ArgReleaser]
// promise: a merged run copies its calls' keys and args into its own
// command and answers each call only once that command has its reply (a
// call whose ctx ended first gets the ctx's error, which keeps its buffer
// from reuse).
func (c *Coalescer) Unwrap() Executor { return c.inner }

// coalesceKey is what merged calls share: the script and the slot of their
// keys (-1 for a script without keys).
type coalesceKey struct {
	s    *Script
	slot int32
}

// coalesceQueue is one key's state: the runs in flight and the calls
// waiting for the next, in arrival order. It exists while a run is in
// flight.
type coalesceQueue struct {
	running int // runs in flight
	pending []*coalesceCall
}

// callState is where a waiting call is; Coalescer.mu guards it.
type callState uint8

const (
	waiting   callState = iota // in pending
	running                    // taken into a run in flight
	leading                    // woken to send the next run, with itself first
	done                       // v and err hold its reply
	abandoned                  // its caller's ctx ended while it ran: never resent
)

// coalesceCall is one call waiting for or inside a merged run.
type coalesceCall struct {
	ctx        context.Context
	keys, args []string
	wake       chan struct{} // one token, sent when state becomes leading or done
	state      callState
	v          Value
	err        error
	merged     int  // the calls of the run that carried it
	noScript   bool // that run's companion met NOSCRIPT
}

func (w *coalesceCall) size() int {
	n := 0
	for _, k := range w.keys {
		n += len(k)
	}
	for _, a := range w.args {
		n += len(a)
	}
	return n
}

// EvalSha implements [Executor]. For a script with ---@coalesce it merges
// the call with concurrent ones (see [Coalescer]); else it is the wrapped
// executor's EvalSha.
func (c *Coalescer) EvalSha(ctx context.Context, s *Script, keys, args []string) (Value, error) {
	return c.evalSha(ctx, s, keys, args, nil)
}

// evalSha is EvalSha; t, when a [Hook] watches the call, learns the size
// of the run that carried it.
func (c *Coalescer) evalSha(ctx context.Context, s *Script, keys, args []string, t *callTrace) (Value, error) {
	if s.companion == nil {
		return c.inner.EvalSha(ctx, s, keys, args)
	}
	k := coalesceKey{s: s, slot: -1}
	if len(keys) > 0 {
		k.slot = int32(Slot(keys[0]))
	}
	c.mu.Lock()
	q := c.queues[k]
	if q == nil {
		q = &coalesceQueue{}
		c.queues[k] = q
	}
	if q.running < c.inFlight {
		q.running++
		c.mu.Unlock()
		t.mergedInto(1, false)
		v, err := c.inner.EvalSha(ctx, s, keys, args)
		c.next(k, q)
		return v, err
	}
	w := &coalesceCall{ctx: ctx, keys: keys, args: args, wake: make(chan struct{}, 1)}
	q.pending = append(q.pending, w)
	c.mu.Unlock()
	select {
	case <-w.wake:
	case <-ctx.Done():
		c.mu.Lock()
		switch w.state {
		case waiting:
			for i, p := range q.pending {
				if p == w {
					q.pending = append(q.pending[:i], q.pending[i+1:]...)
					break
				}
			}
			c.mu.Unlock()
			return Value{}, ctx.Err()
		case running:
			w.state = abandoned
			c.mu.Unlock()
			return Value{}, ctx.Err()
		}
		c.mu.Unlock()
		<-w.wake // leading or done: the token is there
	}
	if w.state == leading {
		c.lead(k, q, w)
	}
	if w.merged > 0 {
		t.mergedInto(w.merged, w.noScript)
	}
	return w.v, w.err
}

// next ends a run on q: the first waiting call, if any, leads the next
// one; else q is idle and forgotten.
func (c *Coalescer) next(k coalesceKey, q *coalesceQueue) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.nextLocked(k, q)
}

// nextLocked is next with c.mu held.
func (c *Coalescer) nextLocked(k coalesceKey, q *coalesceQueue) {
	if len(q.pending) == 0 {
		if q.running--; q.running == 0 {
			delete(c.queues, k)
		}
		return
	}
	w := q.pending[0]
	q.pending[0] = nil
	q.pending = q.pending[1:]
	w.state = leading
	w.wake <- struct{}{}
}

// lead sends one run starting with w, delivers its replies, and hands the
// queue on. w's reply is left in w.
func (c *Coalescer) lead(k coalesceKey, q *coalesceQueue, w *coalesceCall) {
	if err := w.ctx.Err(); err != nil {
		w.err = err
		c.next(k, q)
		return
	}
	s := k.s
	c.mu.Lock()
	w.state = running
	run := []*coalesceCall{w}
	size := w.size()
	for len(q.pending) > 0 && len(run) < s.coalesce {
		p := q.pending[0]
		n := p.size()
		if size+n > CoalesceMaxBytes {
			break
		}
		size += n
		p.state = running
		q.pending[0] = nil
		q.pending = q.pending[1:]
		run = append(run, p)
	}
	c.mu.Unlock()

	var unstarted []*coalesceCall
	if len(run) == 1 {
		w.merged, w.noScript = 1, false
		w.v, w.err = c.inner.EvalSha(w.ctx, s, w.keys, w.args)
	} else {
		unstarted = c.merged(s, run)
	}

	c.mu.Lock()
	if len(unstarted) > 0 {
		// Not run: first in line for the next run, in their order,
		// unless their callers are gone.
		again := unstarted[:0]
		for _, p := range unstarted {
			if p.state == running {
				p.state = waiting
				again = append(again, p)
			}
		}
		q.pending = append(again, q.pending...)
	}
	// The next run's leader is woken before this run's callers, so that
	// the server has the next run as soon as possible.
	c.nextLocked(k, q)
	for _, p := range run[1:] {
		if p.state == running {
			p.state = done
			p.wake <- struct{}{}
		}
	}
	w.state = done
	c.mu.Unlock()
}

// merged sends run as one EVALSHA of s's companion (EVAL after NOSCRIPT)
// and sets each call's reply; it returns the calls the run did not start.
// The run lasts while any of its callers waits: its context is the
// leader's without cancellation, cancelled once every caller's ctx has
// ended; a run that fails then gives each call its own ctx's error
// (context.DeadlineExceeded or context.Canceled), not the run's.
func (c *Coalescer) merged(s *Script, run []*coalesceCall) (unstarted []*coalesceCall) {
	ctx, stop := runContext(run)
	defer stop()
	keys, args := coalesceArgs(run, c.budget.Microseconds())
	comp := s.companion
	v, err := c.inner.EvalSha(ctx, comp, keys, args)
	noScript := err != nil && IsNoScript(err)
	if noScript {
		v, err = c.inner.Eval(ctx, comp, keys, args)
	}
	var status string
	if err == nil {
		var ok bool
		if status, ok = mergedStatus(v, len(run)); !ok {
			err = &DecodeError{Script: comp.name, Want: "an array of " + strconv.Itoa(len(run)) + " replies and their status", Got: v}
		}
	}
	cancelled := err != nil && ctx.Err() != nil
	for i, p := range run {
		p.merged, p.noScript = len(run), noScript
		if err != nil {
			p.v, p.err = Value{}, err
			if cancelled {
				// Every caller's ctx had ended (see runContext):
				// each gets its own ctx's error, as alone.
				p.err = p.ctx.Err()
			}
			continue
		}
		var ran bool
		if p.v, p.err, ran = mergedReply(s, status[i], v.Array[i]); !ran {
			unstarted = append(unstarted, p)
		}
	}
	return unstarted
}

// runContext returns the context a merged run is sent under: the first
// call's values and no deadline, cancelled when every call's context has
// ended (never, when one of them cannot end); stop releases it.
func runContext(run []*coalesceCall) (context.Context, func()) {
	ctx, cancel := context.WithCancel(context.WithoutCancel(run[0].ctx))
	for _, p := range run {
		if p.ctx.Done() == nil {
			return ctx, cancel
		}
	}
	var left atomic.Int32
	left.Store(int32(len(run)))
	stops := make([]func() bool, len(run))
	for i, p := range run {
		stops[i] = context.AfterFunc(p.ctx, func() {
			if left.Add(-1) == 0 {
				cancel()
			}
		})
	}
	return ctx, func() {
		for _, stop := range stops {
			stop()
		}
		cancel()
	}
}

// Eval implements [Executor] with the wrapped executor's Eval: Exec sends
// it only after that executor's own NOSCRIPT, for a call sent alone.
func (c *Coalescer) Eval(ctx context.Context, s *Script, keys, args []string) (Value, error) {
	return c.inner.Eval(ctx, s, keys, args)
}

// Load implements [Executor]: SCRIPT LOAD of s and, for a script with
// ---@coalesce, of its companion, through the wrapped executor.
func (c *Coalescer) Load(ctx context.Context, s *Script) error {
	err := c.inner.Load(ctx, s)
	if s.companion != nil {
		err = errors.Join(err, c.inner.Load(ctx, s.companion))
	}
	return err
}

// Pipeline implements [Pipeliner]: a [Batch] is sent as the wrapped
// executor sends it (its calls are not merged), in one round trip per node
// when that executor is a Pipeliner, else one call after another.
func (c *Coalescer) Pipeline(ctx context.Context, calls []*PipelineCall) {
	if p, ok := c.inner.(Pipeliner); ok {
		p.Pipeline(ctx, calls)
		return
	}
	for _, pc := range calls {
		if pc.Eval {
			pc.Value, pc.Err = c.inner.Eval(ctx, pc.Script, pc.Keys, pc.Args)
		} else {
			pc.Value, pc.Err = c.inner.EvalSha(ctx, pc.Script, pc.Keys, pc.Args)
		}
	}
}
