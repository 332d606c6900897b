package runtime

import (
	"context"
	"errors"
	"reflect"
	"time"
)

// ErrBatchSent is returned by [Batch.Send] on a batch already sent, and by
// the [Future] of a call queued after its batch was sent: a batch runs once.
var ErrBatchSent = errors.New("runtime: batch already sent")

// ErrNotSent is returned by [Future.Result] before its batch was sent.
var ErrNotSent = errors.New("runtime: batch not sent yet")

// PipelineCall is one script call as a [Pipeliner] sends it. The executor
// fills Value and Err; Script, Keys, Args, Eval and FCall are read-only to
// it.
type PipelineCall struct {
	Script *Script
	Keys   []string
	Args   []string
	// Eval sends the body with EVAL (EVAL_RO) instead of EVALSHA
	// (EVALSHA_RO): the server answered NOSCRIPT to the EVALSHA.
	Eval bool
	// FCall sends FCALL (FCALL_RO) of Script.FunctionName() instead of
	// EVALSHA, as [FunctionExecutor.FCall] does: the script belongs to a
	// [Library] and the executor runs functions. Eval is then false.
	FCall bool
	// Value and Err are the reply, as [Executor.EvalSha] returns it.
	Value Value
	Err   error

	trace *callTrace // what the call did, when a Hook watches it
}

// Pipeliner is an optional interface of an [Executor]: one that implements it
// sends a [Batch] in one round trip per node. A Batch on an executor without
// it runs the calls one after another, in queue order (luatest does so).
// [NewRueidisExecutor] implements it with DoMulti, runtime/goredis with a go-redis
// pipeline.
type Pipeliner interface {
	// Pipeline sends every call, in one round trip per node where it can,
	// and sets each call's Value and Err as EvalSha or Eval would. Like
	// them, it must never send a call twice; error replies are
	// *[ReplyError]. A call the executor cannot send (on a cluster, keys of
	// several slots) gets its error without failing the others.
	Pipeline(ctx context.Context, calls []*PipelineCall)
}

// Batch collects script calls to send together with [Batch.Send]: many
// calls, one round trip per node. The zero value is an empty batch ready
// for use. A generated package has, next to each method Name, a QueueName
// method that puts the same call on a Batch and returns a [*Future] of the
// method's result type:
//
//	var b runtime.Batch
//	f1 := s.QueueDeduct(&b, k.Deduct(), args1)
//	f2 := s.QueueCancel(&b, k.Cancel(), args2)
//	b.Send(ctx)
//	left, err := f1.Result() // as s.Deduct would have returned
//
// Send applies the rules of [Script.Exec] per call: a call whose keys hash
// to different slots fails alone before anything is sent; every other call
// is sent with EVALSHA in one pipeline per executor (one round trip per
// node: rueidis DoMulti and go-redis pipelines route each call to its
// slot's node; see [Pipeliner]); the calls the server answered NOSCRIPT,
// and only those, are sent again with EVAL in one more round trip; after a
// [IsTransient] failure the failed calls of ---@idempotent scripts are sent
// again with backoff, the others never.
//
// A call of a script that belongs to a [Library], on an executor that
// runs functions ([FunctionExecutor]), goes as FCALL (FCALL_RO) in the
// same pipeline. The calls the server answered "Function not found" (a
// node that never had the library, a FUNCTION FLUSH, a version another
// binary's load removed), and only those, load their library (once per
// library and round, on every primary; see [Library]) and are sent again
// as FCALL, in the same round trip as the EVAL resends: safe, because the
// function did not run. A library flushed again in between is loaded
// again, at most three loads per call as in Exec; after that, or when the
// load fails, the call is sent with EVAL, the binary's own script, so as
// in Exec no call fails for what the server's libraries hold.
//
// Calls of different scripts, packages and executors may share a batch;
// each executor's calls form one pipeline. A Batch is not safe for
// concurrent use, and it is not a transaction: other clients' commands may
// run between its calls, and calls resent with EVAL after NOSCRIPT run
// after the others.
type Batch struct {
	calls []*batchCall
	sent  bool
}

// batchCall is one queued call and, after Send, its outcome as Exec would
// have returned it.
type batchCall struct {
	exec Executor
	PipelineCall
	done bool // Send finished with it

	// With a Hook: the context its CallStart returned, and the record of
	// what the call did.
	hookCtx context.Context
	trace   callTrace
}

// Future is the result of one queued call: the method's typed result and
// typed error, available after [Batch.Send].
type Future[T any] struct {
	call   batchCall
	decode func(Value) (T, error)
}

// Queue adds a call of s with keys as KEYS and args as ARGV, to run on e,
// to b, and returns its Future; decode turns the reply into T as the
// matching Exec wrapper does (a *[DecodeError] for a reply of the wrong
// shape). Generated QueueName methods call it, and so can a wrapper
// written by hand (see the package doc). A call queued on a batch already
// sent fails with [ErrBatchSent], one with a nil e with [ErrNilExecutor].
func Queue[T any](b *Batch, e Executor, s *Script, keys, args []string, decode func(Value) (T, error)) *Future[T] {
	f := &Future[T]{call: batchCall{exec: e, PipelineCall: PipelineCall{Script: s, Keys: keys, Args: args}}, decode: decode}
	switch {
	case b.sent:
		f.call.done, f.call.Err = true, ErrBatchSent
		return f
	case e == nil:
		f.call.done, f.call.Err = true, ErrNilExecutor // and Send skips it
	}
	b.calls = append(b.calls, &f.call)
	return f
}

// NewFailedFuture returns a Future that holds err and is on no batch: what
// a Queue method returns for a call it refuses before queueing it (an
// argument outside its bound, a [*BadArgError]). Its Result returns err at
// once, before and after any Send, and no Send runs the call.
func NewFailedFuture[T any](err error) *Future[T] {
	return &Future[T]{call: batchCall{done: true, PipelineCall: PipelineCall{Err: err}}}
}

// Result returns what the generated method would have returned for the
// call: the decoded reply, or the call's error (a declared *[CodeError],
// *[ScriptError], *[CrossSlotError], a connection error, ...). Before the
// batch is sent it returns [ErrNotSent].
func (f *Future[T]) Result() (T, error) {
	var zero T
	if !f.call.done {
		return zero, ErrNotSent
	}
	if f.call.Err != nil {
		return zero, f.call.Err
	}
	return f.decode(f.call.Value)
}

// Err returns the error [Future.Result] returns, for calls whose result
// does not matter (a status reply).
func (f *Future[T]) Err() error {
	_, err := f.Result()
	return err
}

// Len returns the number of calls queued and not yet sent.
func (b *Batch) Len() int {
	if b.sent {
		return 0
	}
	return len(b.calls)
}

// Send runs every queued call (see the rules above) and returns when all have
// their outcome, within ctx: a call still failing when ctx ends keeps its
// error. It returns nil when every call succeeded, else the first failed
// call's error in queue order; each call's own outcome is in its Future.
// A batch is sent once: a second Send returns [ErrBatchSent].
func (b *Batch) Send(ctx context.Context) error {
	if b.sent {
		return ErrBatchSent
	}
	b.sent = true
	all := b.calls
	b.calls = nil
	if ctx == nil {
		for _, c := range all {
			if !c.done {
				c.Err, c.done = ErrNilContext, true
			}
		}
		return ErrNilContext
	}
	// One group per executor, in order of first use; the first call is in
	// its own group whatever its executor (one that is not comparable
	// shares a pipeline with no other call).
	var todo []*batchCall
	for _, c := range all {
		if !c.done {
			todo = append(todo, c)
		}
	}
	for calls := todo; len(calls) > 0; {
		e := calls[0].exec
		group, rest := []*batchCall{calls[0]}, []*batchCall(nil)
		for _, c := range calls[1:] {
			if sameExecutor(c.exec, e) {
				group = append(group, c)
			} else {
				rest = append(rest, c)
			}
		}
		sendGroup(ctx, e, group)
		calls = rest
	}
	for _, c := range all {
		if c.Err != nil {
			return c.Err
		}
	}
	return nil
}

// sameExecutor compares two executors without panicking on a dynamic value
// that is not comparable (such executors then never share a pipeline).
func sameExecutor(a, b Executor) bool {
	return reflect.ValueOf(a).Comparable() && a == b
}

// errRetryCalls tells Retry that some calls of a batch round failed in a
// way that is worth another round; the calls keep their own errors.
var errRetryCalls = errors.New("runtime: batch calls to retry")

// sendGroup runs calls, all on e, to their final outcome, between the
// CallStart and CallEnd of e's hook, if any, for each call.
func sendGroup(ctx context.Context, e Executor, calls []*batchCall) {
	h := hookOf(e)
	if h == nil {
		runGroup(ctx, e, calls)
		return
	}
	start := CallStart{Server: serverOf(e), Batch: len(calls)}
	began := time.Now()
	for _, c := range calls {
		start.Script = c.Script
		c.hookCtx = callStart(ctx, h, start)
		c.trace = callTrace{mode: c.Script.firstMode(e)}
		c.PipelineCall.trace = &c.trace
	}
	runGroup(ctx, e, calls)
	for _, c := range calls {
		start.Script = c.Script
		h.CallEnd(c.hookCtx, c.trace.end(start, began, c.Err))
		c.hookCtx, c.PipelineCall.trace = nil, nil
	}
}

// runGroup runs calls, all on e, to their final outcome.
func runGroup(ctx context.Context, e Executor, calls []*batchCall) {
	live := make([]*PipelineCall, 0, len(calls))
	for _, c := range calls {
		if err := c.Script.checkSlots(c.Keys); err != nil {
			c.Err = err
			continue
		}
		live = append(live, &c.PipelineCall)
	}
	// The one retry loop (Retry): each round sends the calls still to
	// go, and only transient failures of idempotent scripts go again.
	todo := live
	_ = Retry(ctx, RetryPolicy{Attempts: RetryAttempts, Retryable: func(err error) bool { return err == errRetryCalls }},
		func(ctx context.Context) error {
			attempt(ctx, e, todo)
			var again []*PipelineCall
			for _, c := range todo {
				if c.Err != nil && c.Script.idem && IsTransient(c.Err) {
					again = append(again, c)
				}
			}
			if todo = again; len(todo) > 0 {
				return errRetryCalls
			}
			return nil
		})
	for _, c := range calls {
		c.Value, c.Err = c.Script.finish(c.Value, c.Err)
		c.done = true
	}
}

// attempt is one try of calls: EVALSHA or FCALL for all of them in one
// pipeline, then, in one more, EVAL for those the server answered NOSCRIPT
// and FCALL again, after loading their library, for those it answered
// "Function not found"; the latter repeat, at most functionLoads loads
// per call, while the library keeps vanishing, and then go as EVAL.
func attempt(ctx context.Context, e Executor, calls []*PipelineCall) {
	p, ok := e.(Pipeliner)
	if !ok {
		for _, c := range calls {
			c.Eval, c.FCall = false, false
			c.trace.attempt()
			c.Value, c.Err = c.Script.run(ctx, e, c.Keys, c.Args, c.trace)
		}
		return
	}
	fe, functions := e.(FunctionExecutor)
	for _, c := range calls {
		c.Eval, c.FCall, c.Value, c.Err = false, functions && c.Script.lib != nil, Value{}, nil
		c.trace.attempt()
		if c.FCall {
			c.trace.sent(ModeFCall)
		} else {
			c.trace.sent(ModeEvalSha)
		}
	}
	p.Pipeline(ctx, calls)
	for loads := 0; ; loads++ {
		var again []*PipelineCall
		ready := map[*Library]bool{} // loaded fine, once per library and round
		for _, c := range calls {
			switch {
			case c.Err == nil:
				continue
			case !c.FCall && !c.Eval && IsNoScript(c.Err):
				c.Eval = true
				c.trace.noScript()
			case c.FCall && IsFunctionNotFound(c.Err):
				ok, done := ready[c.Script.lib]
				if !done {
					ok = loads < functionLoads && ctx.Err() == nil && loaded(fe.LoadLibrary(ctx, c.Script.lib))
					ready[c.Script.lib] = ok
				}
				if ok {
					c.trace.libraryLoad()
				} else {
					// The library keeps vanishing or cannot be loaded:
					// the binary's own script, with EVAL.
					c.FCall, c.Eval = false, true
					c.trace.fallback()
					c.trace.sent(ModeEval)
				}
			default:
				continue
			}
			c.Value, c.Err = Value{}, nil
			again = append(again, c)
		}
		if len(again) == 0 {
			return
		}
		p.Pipeline(ctx, again)
		calls = again
	}
}
