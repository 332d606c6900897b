package runtime

import (
	"context"
	"crypto/sha1"
	"encoding/hex"
	"errors"
	"slices"
	"strconv"
	"time"
)

// Executor runs scripts on a server or an offline fake. It is deliberately
// narrow (three calls) so fakes and fault injectors are easy to write;
// [NewRueidisExecutor] adapts a rueidis.Client, runtime/goredis a go-redis v9 client,
// and luatest runs scripts in gopher-lua.
//
// Error replies must be returned as *[ReplyError]; anything else (network,
// context) is passed to the caller unchanged. Implementations must not retry
// EvalSha or Eval on their own: scripts are not idempotent in general.
type Executor interface {
	// EvalSha sends EVALSHA (EVALSHA_RO for read-only scripts) with
	// s.SHA1(). A server without the script in its script cache answers
	// NOSCRIPT, which [Script.Exec] handles.
	EvalSha(ctx context.Context, s *Script, keys, args []string) (Value, error)
	// Eval sends EVAL (EVAL_RO) with the script body, which also adds it to
	// the server's script cache.
	Eval(ctx context.Context, s *Script, keys, args []string) (Value, error)
	// Load sends SCRIPT LOAD to every node that may run s (on a cluster:
	// every primary and replica, since Redis 7 does not replicate SCRIPT LOAD).
	Load(ctx context.Context, s *Script) error
}

// Script is one Lua script as a generated package (or a wrapper written
// by hand, see the package doc) declares it. Create it with [NewScript]
// at package initialisation; it is immutable and safe for concurrent use
// ([NewLibrary] attaches it to a library once, during package
// initialisation too).
type Script struct {
	// What every call reads comes first, in one cache line: a call's
	// goroutine finds it cold, after the kernel's network stack ran.
	sha1     string // of body
	readOnly bool
	anySlot  bool
	idem     bool
	lib      *Library             // set once by NewLibrary, during package initialisation
	ints     map[int64]*CodeError // codes whose Reply is an integer
	onNil    *CodeError           // the code whose Reply is "nil"
	// intMin and intMax bound ints' codes: a reply outside them (a
	// script's usual answer) skips the map, whose buckets a call would
	// find cold.
	intMin, intMax int64

	name      string
	file      string
	source    string  // the .lua file's text
	body      string  // source as sent: wrapBody(source)
	coalesce  int     // ---@coalesce: most calls per merged run; 0: never merged
	companion *Script // the merged-run script, when coalesce > 0
	codes     []*CodeError
	prefixes  map[string]*CodeError
	// Set once by NewLibrary, with lib.
	fn     string // function name in lib
	fnLine int    // the library line holding line 1 of the .lua file

	// lines says where source's lines come from when it inlines
	// ---@include files (ScriptSpec.Lines).
	lines []LineRange
}

// ScriptSpec describes a script to [NewScript].
type ScriptSpec struct {
	Name string // Go name with package, e.g. "stock.Deduct"
	File string // source file, e.g. "lua/stock/deduct.lua"
	// Body is the text of the .lua file, with the files its ---@include
	// lines name inlined (see Lines). NewScript sends it wrapped so that
	// a reply the script returns is never taken for the server's NOSCRIPT,
	// MOVED, TRYAGAIN and the like;
	// line numbers and the shebang stay (see [Script.Body]).
	Body string
	// ReadOnly sends EVALSHA_RO/EVAL_RO; set when the shebang has
	// flags=no-writes, which Redis requires for the _RO variants.
	ReadOnly bool
	// AllowCrossSlot skips Exec's hash-slot check; set when the shebang
	// has flags=allow-cross-slot-keys. Keys of several slots then run on a
	// single node; a cluster executor still refuses them with
	// *[CrossSlotError] (see [NewRueidisExecutor]), as Redis Cluster would.
	AllowCrossSlot bool
	// Idempotent lets Exec send the script again after an [IsTransient]
	// failure; set when the header says ---@idempotent, i.e. running the
	// script twice with the same KEYS and ARGV has the effect and the reply
	// of running it once.
	Idempotent bool
	// CoalesceLimit, when above 1, lets a [Coalescer] merge up to this many
	// concurrent calls of the script on one hash slot into one run of a
	// companion script that NewScript builds from Body; set from the
	// header's ---@coalesce, which luagen allows only for scripts whose
	// calls cannot tell a merged run from runs of their own. It is ignored
	// with AllowCrossSlot (merged calls must share a slot).
	CoalesceLimit int
	// Lines maps Body's lines back to the files they come from when the
	// .lua file inlines others (---@include): one [LineRange] for each
	// change of file after line 1, in Body order. Without it, line N of
	// Body is line N of File. A *[ScriptError] names the file and line
	// it gives.
	Lines []LineRange
	// Errors are the script's declared failure replies (---@error). Exec
	// returns the matching sentinel instead of the reply. NewScript keeps a
	// copy of the slice.
	Errors []*CodeError
}

// LineRange says that the lines of a [ScriptSpec.Body] from Body on, up
// to the next LineRange, are the lines of File from Line on: luagen
// generates them for a script whose ---@include lines inline other files.
type LineRange struct {
	Body int    // the first line of the range in Body, 1-based
	File string // the file the lines come from, relative to the module root
	Line int    // the line of File that Body's line Body is
}

// NewScript returns the Script for spec, wrapping its body (see
// [Script.Body]) and computing the SHA1 of what it sends once.
// It panics when two Errors declare the same reply: a programming error
// made at package initialisation, as a bad regexp.MustCompile pattern is
// (luagen check rejects such headers, so generated code never makes it).
func NewScript(spec ScriptSpec) *Script {
	body := wrapBody(spec.Body)
	s := &Script{
		name:     spec.Name,
		file:     spec.File,
		source:   spec.Body,
		body:     body,
		sha1:     sha1Hex(body),
		readOnly: spec.ReadOnly,
		anySlot:  spec.AllowCrossSlot,
		idem:     spec.Idempotent,
		lines:    slices.Clone(spec.Lines),
		codes:    slices.Clone(spec.Errors),
	}
	if spec.CoalesceLimit > 1 && !spec.AllowCrossSlot {
		comp := coalesceBody(spec.Body)
		s.coalesce = spec.CoalesceLimit
		s.companion = &Script{
			name:     spec.Name + " (merged run)",
			file:     spec.File,
			source:   spec.Body,
			body:     comp,
			sha1:     sha1Hex(comp),
			readOnly: spec.ReadOnly,
			lines:    s.lines, // the merged run keeps every line's number too
		}
	}
	for _, c := range spec.Errors {
		if c.reply == "nil" {
			if s.onNil != nil {
				panic("luagen: " + spec.Name + ": two ---@error nil declarations")
			}
			s.onNil = c
		} else if n, err := strconv.ParseInt(c.reply, 10, 64); err == nil {
			if s.ints == nil {
				s.ints = map[int64]*CodeError{}
				s.intMin, s.intMax = n, n
			}
			s.intMin, s.intMax = min(s.intMin, n), max(s.intMax, n)
			if s.ints[n] != nil {
				panic("luagen: " + spec.Name + ": duplicate ---@error " + c.reply)
			}
			s.ints[n] = c
		} else {
			if s.prefixes == nil {
				s.prefixes = map[string]*CodeError{}
			}
			if s.prefixes[c.reply] != nil {
				panic("luagen: " + spec.Name + ": duplicate ---@error " + c.reply)
			}
			s.prefixes[c.reply] = c
		}
	}
	return s
}

// sha1Hex returns the lowercase hex SHA1 of body: its key in the server's
// script cache.
func sha1Hex(body string) string {
	sum := sha1.Sum([]byte(body))
	return hex.EncodeToString(sum[:])
}

// Name returns the script's Go name, e.g. "stock.Deduct".
func (s *Script) Name() string { return s.name }

// File returns the script's .lua file as given to [NewScript].
func (s *Script) File() string { return s.file }

// Source returns the script text as given to [NewScript]: the .lua file,
// verbatim, with the files its ---@include lines name inlined.
func (s *Script) Source() string { return s.source }

// Position returns the file and line that line n of [Script.Source] comes
// from (see [ScriptSpec.Lines]): [Script.File] and n, unless the line was
// inlined from an ---@include file.
func (s *Script) Position(n int) (file string, line int) {
	file, line = s.file, n
	for _, r := range s.lines {
		if r.Body > n {
			break
		}
		file, line = r.File, r.Line+n-r.Body
	}
	return file, line
}

// Body returns the text an [Executor] sends with EVAL and SCRIPT LOAD: the
// source with its code wrapped in a function whose result is checked before
// it is returned, so that an error reply the script returns can never be
// taken for the server's NOSCRIPT, MOVED, TRYAGAIN or any code a client
// reads (such a returned reply is sent with the code LUAGEN in front, which
// [Script.Exec] removes; see wire.go).
// Every line of the source keeps its number, the shebang line stays first,
// and the reply is otherwise the script's own.
func (s *Script) Body() string { return s.body }

// SHA1 returns the lowercase hex SHA1 of [Script.Body]: the script's key in
// the server's script cache, as EVALSHA and SCRIPT LOAD use it.
func (s *Script) SHA1() string { return s.sha1 }

// ReadOnly reports whether the script runs with EVALSHA_RO/EVAL_RO.
func (s *Script) ReadOnly() bool { return s.readOnly }

// AllowCrossSlot reports whether the script skips Exec's hash-slot check
// (flags=allow-cross-slot-keys; see [ScriptSpec]).
func (s *Script) AllowCrossSlot() bool { return s.anySlot }

// Idempotent reports whether Exec retries the script after an [IsTransient]
// failure (---@idempotent).
func (s *Script) Idempotent() bool { return s.idem }

// CoalesceLimit returns the most calls a [Coalescer] merges into one run of the
// script (---@coalesce), or 0 when it never merges them.
func (s *Script) CoalesceLimit() int { return s.coalesce }

// Companion returns the script a [Coalescer] sends for a merged run of s
// (its Body runs the .lua file's code once per merged call; see
// coalesce_wire.go), or nil when s has no ---@coalesce.
func (s *Script) Companion() *Script { return s.companion }

// Errors returns the script's declared failure replies, in header order. The
// slice is a copy; the sentinels themselves cannot be changed.
func (s *Script) Errors() []*CodeError { return slices.Clone(s.codes) }

// Exec runs the script with keys as KEYS and args as ARGV on e:
//
//  1. all keys must hash to one slot, else *[CrossSlotError] and nothing is
//     sent (unless the script opted out with flags=allow-cross-slot-keys);
//  2. EVALSHA; on the server's NOSCRIPT (the script cache was flushed, the
//     server restarted or a replica was promoted) EVAL, which is safe
//     because that NOSCRIPT means the script did not run. An error reply
//     the script made itself never counts as NOSCRIPT, whatever its text
//     (see [Script.Body] and [IsNoScript]): no script runs twice in one
//     call;
//  3. an error reply raised inside the script becomes *[ScriptError], one
//     the header declared becomes its *[CodeError] sentinel (wrapped with the
//     server's text), any other error is returned as is;
//  4. an integer or nil reply the header declared with ---@error becomes
//     its *[CodeError] sentinel.
//
// A script that belongs to a [Library], run on a [FunctionExecutor], takes
// FCALL (FCALL_RO) of its function for step 2; on the server's "Function
// not found" the library is loaded on the call's node ([Library]) and
// the call sent again, which is safe because the function did not run. A
// library that keeps vanishing (at most three loads per try) or cannot be
// loaded runs the script with EVALSHA/EVAL instead, so no call fails for
// what the server's libraries hold. Errors raised inside a function name
// the line of the .lua file as under EVAL. On any other executor the
// script runs with EVALSHA/EVAL.
//
// A nil ctx or e is [ErrNilContext] or [ErrNilExecutor], with nothing sent.
//
// Exec never retries a script that may have run, unless its header declares
// it ---@idempotent: then an [IsTransient] failure (a connection error, LOADING,
// CLUSTERDOWN, ...) is retried with backoff, at most [RetryAttempts] tries
// in all and never past ctx; the last failure is returned as it is.
func (s *Script) Exec(ctx context.Context, e Executor, keys, args []string) (Value, error) {
	if err := usable(ctx, e); err != nil {
		return Value{}, err
	}
	if h := hookOf(e); h != nil {
		return s.execHooked(ctx, e, h, keys, args)
	}
	if s.idem || s.lib != nil {
		return s.exec(ctx, e, keys, args, nil)
	}
	// The common call (EVAL mode, no hook, no retry) goes straight to
	// eval, without exec's and run's frames: less stack for each of many
	// goroutines' calls to touch (bench/plain).
	if err := s.checkSlots(keys); err != nil {
		return Value{}, err
	}
	return s.finish(s.eval(ctx, e, keys, args, nil))
}

// checkSlots is [CheckSlots] for a call of s, unless its shebang allows
// keys of several slots (flags=allow-cross-slot-keys).
func (s *Script) checkSlots(keys []string) error {
	if s.anySlot {
		return nil
	}
	return CheckSlots(s.name, keys)
}

// exec is Exec after its nil checks; t records what the call did when a
// [Hook] watches it, and is nil otherwise.
func (s *Script) exec(ctx context.Context, e Executor, keys, args []string, t *callTrace) (Value, error) {
	if err := s.checkSlots(keys); err != nil {
		return Value{}, err
	}
	var (
		v   Value
		err error
	)
	if s.idem {
		err = Retry(ctx, execRetry, func(ctx context.Context) (err error) {
			t.attempt()
			v, err = s.run(ctx, e, keys, args, t)
			return err
		})
	} else {
		t.attempt()
		v, err = s.run(ctx, e, keys, args, t)
	}
	return s.finish(v, err)
}

// execHooked is Exec on an executor with hook h: exec between h's
// CallStart and CallEnd.
func (s *Script) execHooked(ctx context.Context, e Executor, h Hook, keys, args []string) (Value, error) {
	start := CallStart{Script: s, Server: serverOf(e)}
	began := time.Now()
	ctx = callStart(ctx, h, start)
	t := callTrace{mode: s.firstMode(e)}
	v, err := s.exec(ctx, e, keys, args, &t)
	h.CallEnd(ctx, t.end(start, began, err))
	return v, err
}

// firstMode is the command a call of s on e sends first.
func (s *Script) firstMode(e Executor) Mode {
	if s.lib != nil {
		if _, ok := e.(FunctionExecutor); ok {
			return ModeFCall
		}
	}
	return ModeEvalSha
}

// finish turns one call's outcome into what Exec returns: errors
// classified, declared integer and nil replies as their sentinels.
func (s *Script) finish(v Value, err error) (Value, error) {
	if err != nil {
		return Value{}, s.classify(err)
	}
	switch {
	case v.Kind == KindInt && s.ints != nil && v.Int >= s.intMin && v.Int <= s.intMax:
		if c := s.ints[v.Int]; c != nil {
			return v, c
		}
	case v.Kind == KindNil && s.onNil != nil:
		return v, s.onNil
	}
	return v, nil
}

// execRetry is how Exec retries an idempotent script: RetryAttempts tries,
// waits from RetryMinBackoff to RetryMaxBackoff, after IsTransient failures,
// never past the caller's ctx (no window of its own).
var execRetry = RetryPolicy{Attempts: RetryAttempts, MinBackoff: RetryMinBackoff, MaxBackoff: RetryMaxBackoff, Retryable: IsTransient}

// run is one try: EVALSHA, and EVAL when the server does not have the
// script.
func (s *Script) run(ctx context.Context, e Executor, keys, args []string, t *callTrace) (Value, error) {
	if s.lib != nil {
		if fe, ok := e.(FunctionExecutor); ok {
			return s.fcall(ctx, fe, keys, args, t)
		}
	}
	return s.eval(ctx, e, keys, args, t)
}

// eval is one try in EVAL mode: EVALSHA, and EVAL when the server does not
// have the script.
func (s *Script) eval(ctx context.Context, e Executor, keys, args []string, t *callTrace) (v Value, err error) {
	t.sent(ModeEvalSha)
	// A Coalescer tells a hooked call the size of the run that carried
	// it. This package's own executor is called directly rather than
	// through the interface: a call's goroutine finds each table it
	// touches cold, after the kernel's network stack ran (bench/plain).
	if r, ok := e.(*RueidisExecutor); ok {
		v, err = r.EvalSha(ctx, s, keys, args)
	} else if c, ok := coalescerOf(e, t); ok {
		v, err = c.evalSha(ctx, s, keys, args, t)
	} else {
		v, err = e.EvalSha(ctx, s, keys, args)
	}
	if err != nil && IsNoScript(err) {
		t.noScript()
		v, err = e.Eval(ctx, s, keys, args)
	}
	return v, err
}

// Load adds the script to the script cache of every node of e (SCRIPT LOAD).
// Calling it is optional: Exec falls back to EVAL on NOSCRIPT either way; it
// saves that extra round trip on the first call after start-up.
func (s *Script) Load(ctx context.Context, e Executor) error {
	if err := usable(ctx, e); err != nil {
		return err
	}
	return e.Load(ctx, s)
}

func (s *Script) classify(err error) error {
	var re *ReplyError
	if !errors.As(err, &re) {
		return err
	}
	if u := unmark(re); u != re {
		re, err = u, u
	}
	if c := s.prefixes[re.Code()]; c != nil {
		return &codeReplyError{code: c, reply: re}
	}
	line, ok := scriptLine(re.Msg)
	if !ok {
		line, ok = s.functionLine(re.Msg)
	}
	if ok {
		file, line := s.Position(line)
		return &ScriptError{Script: s.name, File: file, Line: line, Err: re}
	}
	return err
}

// Preload adds scripts to the script cache of every node of e (SCRIPT
// LOAD), trying all of them and joining their errors. Generated packages call
// it from their Preload method.
//
// Scripts that belong to a [Library] load it instead, once per library
// (FUNCTION LOAD on every primary that does not hold it; see [Library]),
// when e is a [FunctionExecutor].
func Preload(ctx context.Context, e Executor, scripts ...*Script) error {
	if err := usable(ctx, e); err != nil {
		return err
	}
	var errs []error
	fe, functions := e.(FunctionExecutor)
	loaded := map[*Library]bool{}
	for _, s := range scripts {
		if functions && s.lib != nil {
			if !loaded[s.lib] {
				loaded[s.lib] = true
				if err := fe.LoadLibrary(ctx, s.lib); err != nil {
					errs = append(errs, err)
				}
			}
			continue
		}
		if err := e.Load(ctx, s); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}
