package runtime

import (
	"context"
	"errors"
	"strconv"
	"time"
)

// Hook sees every script call an executor runs: [Script.Exec] (and so every
// generated method) and each call of a [Batch]. It is the one place
// observability plugs in, modelled on pgx's QueryTracer: CallStart runs
// before anything is sent and returns the context the call runs under (so a
// span started there is the parent of the Redis client's own span, e.g.
// rueidisotel's or redisotel's EVALSHA span), and CallEnd runs once, after
// the call's outcome is known, with the context CallStart returned.
//
// Attach a Hook where the executor is built: [NewRueidisExecutor](c, [WithHook](h)),
// goredis.NewExecutor(c, runtime.WithHook(h)); a [Coalescer] reports to the hook
// of the executor it wraps. Any other [Executor] gets one by implementing
// [Hooked]. Package github.com/luagen/luagen/luagenotel implements Hook
// with OpenTelemetry spans and metrics; package runtime itself depends on
// nothing for it, and an executor without a hook pays one type assertion
// per call and no allocation.
//
// Both methods run synchronously on the caller's goroutine and may be
// called concurrently; they must return quickly and must not call scripts
// on the same executor (that would recurse). The values they get are
// passed by value and are theirs; [CallEnd.Err] is the error the caller
// gets.
type Hook interface {
	// CallStart is called before a call's first command is sent (before
	// its hash-slot check too) and returns the context to run it under;
	// return ctx itself to add nothing. A nil context returned counts as
	// ctx itself: the call runs, and CallEnd gets, ctx.
	CallStart(ctx context.Context, call CallStart) context.Context
	// CallEnd is called once per CallStart, with the context CallStart
	// returned, when the call's outcome is final: after every retry and
	// fallback.
	CallEnd(ctx context.Context, call CallEnd)
}

// callStart runs h's CallStart for a call under ctx and returns the
// context the call runs under: what CallStart returned, or ctx when it
// returned nil (a hook's bug must not become the caller's panic, and a
// caller's own nil ctx is refused before any hook runs).
func callStart(ctx context.Context, h Hook, start CallStart) context.Context {
	if c := h.CallStart(ctx, start); c != nil {
		return c
	}
	return ctx
}

// Hooked is implemented by an [Executor] that carries a [Hook]:
// [RueidisExecutor] and runtime/goredis's Executor built with [WithHook],
// and, through Unwrap, [Coalescer] (the hook of the executor it wraps). [Script.Exec] and
// [Batch.Send] ask for it once per call (per group for a batch); a nil
// Hook means none.
type Hooked interface {
	Hook() Hook
}

// hookOf returns e's hook, or nil.
func hookOf(e Executor) Hook {
	// This package's own executor first, by its type alone: no call.
	if r, ok := e.(*RueidisExecutor); ok && r != nil {
		return r.hook
	}
	// The assertion in place next: unlike the one in the generic
	// capability, it has a cache of its own at this call site, which
	// spares every call a lookup in the runtime's itab table.
	if h, ok := e.(Hooked); ok {
		return h.Hook()
	}
	if h, ok := capability[Hooked](e); ok {
		return h.Hook()
	}
	return nil
}

// unwrapper is an executor that wraps another ([Coalescer], the one
// [WithoutShebang] returns): what it does not implement itself (a [Hook],
// [Addressed], [ArgReleaser]), the executor it wraps answers for.
type unwrapper interface {
	Unwrap() Executor
}

// capability returns e, or the first executor it wraps (through Unwrap),
// that implements C. A type assertion to an interface allocates nothing.
func capability[C any](e Executor) (C, bool) {
	for e != nil {
		if c, ok := e.(C); ok {
			return c, true
		}
		u, ok := e.(unwrapper)
		if !ok {
			break
		}
		e = u.Unwrap()
	}
	var none C
	return none, false
}

// ExecutorConfig holds what [ExecutorOption]s set. Executors of other
// packages (runtime/goredis) read it with [NewExecutorConfig].
type ExecutorConfig struct {
	// Hook sees every call run on the executor; nil for none.
	Hook Hook
}

// ExecutorOption configures an executor at construction: [NewRueidisExecutor],
// goredis.NewExecutor. A nil ExecutorOption is ignored.
type ExecutorOption func(*ExecutorConfig)

// WithHook attaches h to the executor being built: h sees every call run
// on it (see [Hook]). A nil h means no hook.
func WithHook(h Hook) ExecutorOption {
	return func(c *ExecutorConfig) { c.Hook = h }
}

// NewExecutorConfig applies opts in order and returns the result; for
// executors built outside this package.
func NewExecutorConfig(opts ...ExecutorOption) ExecutorConfig {
	var c ExecutorConfig
	for _, o := range opts {
		if o != nil {
			o(&c)
		}
	}
	return c
}

// Mode is the command a call ran with.
type Mode uint8

// The commands a script call runs with (their _RO forms for a read-only
// script; see [Mode.Command]).
const (
	// ModeEvalSha: EVALSHA (EVALSHA_RO), the script from the script cache.
	ModeEvalSha Mode = iota
	// ModeEval: EVAL (EVAL_RO), the body sent along; after the server
	// answered NOSCRIPT, or after a library could not be used.
	ModeEval
	// ModeFCall: FCALL (FCALL_RO) of the script's function in its
	// [Library].
	ModeFCall
)

var modeCommands = [...][2]string{
	ModeEvalSha: {"EVALSHA", "EVALSHA_RO"},
	ModeEval:    {"EVAL", "EVAL_RO"},
	ModeFCall:   {"FCALL", "FCALL_RO"},
}

// Command returns the Redis command of m: "EVALSHA", "EVAL" or "FCALL",
// with "_RO" appended when readOnly is set ([Script.ReadOnly]).
func (m Mode) Command(readOnly bool) string {
	if int(m) >= len(modeCommands) {
		return m.String()
	}
	if readOnly {
		return modeCommands[m][1]
	}
	return modeCommands[m][0]
}

// String returns the command without the _RO suffix, e.g. "EVALSHA".
func (m Mode) String() string {
	if int(m) < len(modeCommands) {
		return modeCommands[m][0]
	}
	return "Mode(" + strconv.Itoa(int(m)) + ")"
}

// Outcome classifies how a call ended; see [ClassifyOutcome].
type Outcome uint8

// The outcomes of a call.
const (
	// OutcomeOK: the script ran and returned a reply the header does not
	// declare as a failure.
	OutcomeOK Outcome = iota
	// OutcomeDeclared: the script returned a failure its header declares
	// with ---@error (a *[CodeError] sentinel, e.g. stock.ErrOutOfStock):
	// an answer, not a fault.
	OutcomeDeclared
	// OutcomeScriptError: an error was raised inside the script
	// (*[ScriptError]: a failed redis.call, error(), a Lua runtime error).
	OutcomeScriptError
	// OutcomeServerError: the server answered with an error reply the
	// script did not raise (BUSY, LOADING, OOM, NOPERM, READONLY, ...; a
	// *[ReplyError]) or a reply runtime could not read (*[DecodeError]).
	OutcomeServerError
	// OutcomeTransport: no reply: the context ended, the client was
	// closed ([ErrClientClosed]) or the connection failed.
	OutcomeTransport
	// OutcomeRefused: runtime refused the call before sending it (keys of
	// several hash slots: *[CrossSlotError]).
	OutcomeRefused
)

var outcomeNames = [...]string{"ok", "declared", "script_error", "server_error", "transport", "refused"}

// String returns the outcome's name in snake case, as metrics label it:
// "ok", "declared", "script_error", "server_error", "transport",
// "refused".
func (o Outcome) String() string {
	if int(o) < len(outcomeNames) {
		return outcomeNames[o]
	}
	return "Outcome(" + strconv.Itoa(int(o)) + ")"
}

// ClassifyOutcome returns the [Outcome] of a call that returned err, as
// [Script.Exec] or a batch call's [Future] returns it.
func ClassifyOutcome(err error) Outcome {
	if err == nil {
		return OutcomeOK
	}
	// errors.AsType, not errors.As: no target escapes to the heap.
	if _, ok := errors.AsType[*CodeError](err); ok {
		return OutcomeDeclared
	}
	if _, ok := errors.AsType[*ScriptError](err); ok {
		return OutcomeScriptError
	}
	if _, ok := errors.AsType[*CrossSlotError](err); ok {
		return OutcomeRefused
	}
	if _, ok := errors.AsType[*ReplyError](err); ok {
		return OutcomeServerError
	}
	if _, ok := errors.AsType[*DecodeError](err); ok {
		return OutcomeServerError
	}
	return OutcomeTransport
}

// CallStart describes a call as it starts; a [Hook] gets it by value.
type CallStart struct {
	// Script is the script called; its Name, File, SHA1, ReadOnly and
	// Library say which.
	Script *Script
	// Server is the "host:port" of the one server the executor talks to,
	// or "" when it cannot tell without a round trip (a cluster, where a
	// call goes to its slot's node; a Sentinel-managed primary).
	Server string
	// Batch is the number of calls sent together with this one in one
	// [Batch] (the calls of the batch on the same executor), or 0 for a
	// call of [Script.Exec].
	Batch int
}

// CallEnd describes a call's final outcome; a [Hook] gets it by value.
type CallEnd struct {
	CallStart
	// Mode is the command whose reply is the outcome (the last one sent):
	// EVALSHA normally, EVAL after NOSCRIPT, FCALL for a library's
	// script on an executor that runs functions. A call refused before
	// anything was sent reports the mode it would have used.
	Mode Mode
	// Attempts is the number of tries: 1, or more when an ---@idempotent
	// script was retried after an [IsTransient] failure (the Retry loop of
	// Exec, or a batch's rounds). 0 when nothing was sent.
	Attempts int
	// NoScripts counts EVALs sent after the server answered NOSCRIPT to
	// EVALSHA (the script cache did not hold the script: a restart,
	// SCRIPT FLUSH, a failover), over all attempts; for a merged run, the
	// companion's NOSCRIPT.
	NoScripts int
	// LibraryLoads counts the library loads (FUNCTION LOAD on the call's
	// node, or waits for a concurrent call's load) after FCALL answered
	// "Function not found".
	LibraryLoads int
	// FunctionFallback is set when a library's script ran with
	// EVALSHA/EVAL because its library kept vanishing or could not be
	// loaded (see [Library]).
	FunctionFallback bool
	// Merged is the number of calls in the server-side run of a
	// [Coalescer] that carried this call (1: sent alone through the
	// Coalescer), or 0 when no Coalescer merges the script's calls.
	Merged int
	// Duration is the call's time from CallStart to CallEnd, on the
	// monotonic clock, retries and backoff included.
	Duration time.Duration
	// Err is what the caller gets: nil, a *[CodeError] sentinel, a
	// *[ScriptError], ...
	Err error
	// Outcome is ClassifyOutcome(Err).
	Outcome Outcome
}

// callTrace collects what a hooked call did, for its CallEnd. A nil
// *callTrace (no hook) records nothing.
type callTrace struct {
	mode             Mode
	attempts         int
	noScripts        int
	libraryLoads     int
	functionFallback bool
	merged           int
}

func (t *callTrace) sent(m Mode) {
	if t != nil {
		t.mode = m
	}
}

func (t *callTrace) attempt() {
	if t != nil {
		t.attempts++
	}
}

func (t *callTrace) noScript() {
	if t != nil {
		t.noScripts++
		t.mode = ModeEval
	}
}

func (t *callTrace) libraryLoad() {
	if t != nil {
		t.libraryLoads++
	}
}

func (t *callTrace) fallback() {
	if t != nil {
		t.functionFallback = true
	}
}

func (t *callTrace) mergedInto(n int, noScript bool) {
	if t != nil {
		t.merged = n
		if noScript {
			t.noScripts++
			t.mode = ModeEval
		}
	}
}

// end fills a CallEnd from the trace.
func (t *callTrace) end(start CallStart, began time.Time, err error) CallEnd {
	return CallEnd{
		CallStart:        start,
		Mode:             t.mode,
		Attempts:         t.attempts,
		NoScripts:        t.noScripts,
		LibraryLoads:     t.libraryLoads,
		FunctionFallback: t.functionFallback,
		Merged:           t.merged,
		Duration:         time.Since(began),
		Err:              err,
		Outcome:          ClassifyOutcome(err),
	}
}

// coalescerOf returns e as a *Coalescer when a hooked call (t non-nil)
// runs on one.
func coalescerOf(e Executor, t *callTrace) (*Coalescer, bool) {
	if t == nil {
		return nil, false
	}
	c, ok := e.(*Coalescer)
	return c, ok
}

// Addressed is implemented by an [Executor] that knows the one server it
// talks to ([RueidisExecutor] and runtime/goredis's Executor on a single
// server; a [Coalescer] has its executor's). [CallStart.Server] comes from it.
type Addressed interface {
	// ServerAddress returns "host:port", or "" when calls may go to
	// several servers or the executor cannot tell.
	ServerAddress() string
}

// serverOf returns e's server address, or "".
func serverOf(e Executor) string {
	if a, ok := capability[Addressed](e); ok {
		return a.ServerAddress()
	}
	return ""
}
