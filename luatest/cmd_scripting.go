// Commands from https://redis.io/commands/?group=scripting

package luatest

import (
	"context"
	"crypto/sha1"
	"encoding/hex"
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strings"

	"github.com/luagen/luagen/internal/hashtag"
	"github.com/luagen/luagen/internal/lua51"
	"github.com/luagen/luagen/luatest/resp"
	"github.com/luagen/luagen/runtime"
	lua "github.com/yuin/gopher-lua"
	"github.com/yuin/gopher-lua/parse"
)

var scriptingCommands = []*command{
	{name: "eval", fn: cmdEval},
	{name: "evalsha", fn: cmdEval},
	{name: "eval_ro", fn: cmdEval},
	{name: "evalsha_ro", fn: cmdEval},
	{name: "script", fn: cmdScript},
}

// script is one entry of the script cache.
type script struct {
	sha   string
	body  string
	flags scriptFlags
	proto *lua.FunctionProto
	info  *chunkInfo // for Lua 5.1 error texts
	// fn is the script's function in vm, made once as the server defines
	// f_<sha1> once (luaCreateFunction) and calls it on every run.
	fn *lua.LFunction
	vm *luaVM
}

// runCtx is the state of the script running now.
type runCtx struct {
	sc       *script
	src      *runtime.Script // the script, for the .lua file and line of messages; nil when unknown
	mode     runtime.Mode    // EVALSHA, EVAL or FCALL (their _RO forms too): how the run was asked for
	keys     map[string]bool // KEYS as a set, for declares; built on first use
	keyList  []string
	resp     int  // redis.setresp: 2 (the default) or 3
	readOnly bool // no-writes flag or an *_RO command
	// lineShift is subtracted from Lua lines in the call log: a function's
	// library line minus its .lua file line.
	lineShift int
	// cmd is what the command redis.call runs sees (scriptCommand): one
	// per run, since the script runs one command at a time.
	cmd cmdCtx
}

func sha1hex(s string) string {
	sum := sha1.Sum([]byte(s))
	return hex.EncodeToString(sum[:])
}

// loadScript compiles body into the script cache (luaCreateFunction):
// shebang errors and compile errors are error replies.
func (r *Redis) loadScript(body string) (*script, *resp.Reply) {
	sha := sha1hex(body)
	if sc, ok := r.scripts[sha]; ok {
		return sc, nil
	}
	flags, n, msg := parseShebang(body)
	if msg != "" {
		return nil, errReply("ERR " + msg)
	}
	proto, info, err := compileScript(body[n:])
	if err != nil {
		// addReplyErrorFormat: trailing CR/LF trimmed, inner ones become
		// spaces (a long string in the message can hold them).
		msg := strings.TrimRight("Error compiling script (new function): "+compileErrorText(err), "\r\n")
		return nil, errReply("ERR " + strings.NewReplacer("\r", " ", "\n", " ").Replace(msg))
	}
	sc := &script{sha: sha, body: body, flags: flags, proto: proto, info: info}
	r.scripts[sha] = sc
	return sc, nil
}

// compileErrorText is the text of a compile error: Lua 5.1's own for a
// syntax error (package internal/lua51), else a gopher-lua error put in Lua 5.1's
// form ("user_script:1: unexpected symbol near '+'"), which happens only
// for a chunk Lua 5.1 accepts and gopher-lua does not (see the README).
func compileErrorText(err error) string { return compileErrorTextIn(err, chunkName) }

// compileErrorTextIn is compileErrorText for the chunk named chunkName.
func compileErrorTextIn(err error, chunkName string) string {
	if se, ok := errors.AsType[*lua51.SyntaxError](err); ok {
		return se.Msg
	}
	var pe *parse.Error
	if errors.As(err, &pe) {
		msg := pe.Message
		if msg == "syntax error" {
			msg = "unexpected symbol"
		}
		tok := pe.Token
		if pe.Pos.Line == parse.EOF || tok == "" {
			tok = "<eof>"
		}
		line := pe.Pos.Line
		if line == parse.EOF {
			line = pe.Pos.Line
		}
		return fmt.Sprintf("%s:%d: %s near '%s'", chunkName, max(line, 0), msg, tok)
	}
	var ce *lua.CompileError
	if errors.As(err, &ce) {
		return fmt.Sprintf("%s:%d: %s", chunkName, ce.Line, ce.Message)
	}
	if msg := strings.TrimSpace(err.Error()); strings.HasPrefix(msg, chunkName+":") {
		return msg
	}
	return chunkName + ": " + strings.TrimSpace(err.Error())
}

// EVAL script numkeys [key ...] [arg ...] — https://redis.io/commands/eval/
// and EVALSHA, EVAL_RO, EVALSHA_RO (evalGenericCommand in eval.c).
func cmdEval(c *cmdCtx, args []string) resp.Reply {
	isSha := strings.HasPrefix(c.name, "evalsha")
	ro := strings.HasSuffix(c.name, "_ro")
	n, ok := parseInt(args[1])
	if !ok {
		return errNotInt
	}
	if n > int64(len(args)-2) {
		return resp.ErrorReply("ERR Number of keys can't be greater than number of args")
	}
	if n < 0 {
		return resp.ErrorReply("ERR Number of keys can't be negative")
	}
	var sc *script
	if isSha {
		sc = c.r.scripts[strings.ToLower(args[0])]
		if sc == nil {
			return errNoScript
		}
	} else {
		var errReply *resp.Reply
		if sc, errReply = c.r.loadScript(args[0]); errReply != nil {
			return *errReply
		}
	}
	mode := runtime.ModeEval
	if isSha {
		mode = runtime.ModeEvalSha
	}
	return c.r.runScript(sc, args[2:2+n], args[2+n:], runOptions{proto: c.proto, ro: ro, mode: mode})
}

var errNoScript = resp.ErrorReply("NOSCRIPT No matching script. Please use EVAL.")

// SCRIPT LOAD script | EXISTS sha1 [sha1 ...] | FLUSH [ASYNC|SYNC] | KILL |
// DEBUG YES|SYNC|NO | HELP — https://redis.io/commands/script-load/ and
// friends, in scriptCommand's order and with its texts. The arity of each
// subcommand is checked before, from the server's command table.
func cmdScript(c *cmdCtx, args []string) resp.Reply {
	switch sub := strings.ToLower(args[0]); {
	case sub == "help" && len(args) == 1:
		return helpReply("script")
	case sub == "flush":
		// "SCRIPT FLUSH ASYNC foo" too: only one mode word is accepted.
		if len(args) > 2 || len(args) == 2 && !strings.EqualFold(args[1], "sync") && !strings.EqualFold(args[1], "async") {
			return resp.ErrorReply("ERR SCRIPT FLUSH only support SYNC|ASYNC option")
		}
		clear(c.r.scripts)
		// scriptingReset: the server closes its Lua interpreter and starts
		// a new one, so the cjson settings a script changed start over.
		if c.r.vm != nil {
			c.r.vm.L.Close()
			c.r.vm = nil
		}
		return resp.OK
	case sub == "exists" && len(args) >= 2:
		out := make([]resp.Reply, len(args)-1)
		for i, sha := range args[1:] {
			out[i] = resp.IntReply(0)
			if c.r.scripts[strings.ToLower(sha)] != nil {
				out[i] = resp.IntReply(1)
			}
		}
		return resp.ArrayReply(out...)
	case sub == "load" && len(args) == 2:
		sc, errReply := c.r.loadScript(args[1])
		if errReply != nil {
			return *errReply
		}
		return resp.BulkReply(sc.sha)
	case sub == "kill" && len(args) == 1:
		// No script is ever running while a command runs here.
		return resp.ErrorReply("NOTBUSY No scripts in execution right now.")
	case sub == "debug" && len(args) == 2:
		switch strings.ToLower(args[1]) {
		case "no":
			return resp.OK
		case "yes", "sync":
			return resp.ErrorReply("ERR luatest: SCRIPT DEBUG " + strings.ToUpper(args[1]) + " (the Lua debugger) is not implemented")
		}
		return resp.ErrorReply("ERR Use SCRIPT DEBUG YES/SYNC/NO")
	}
	return resp.ErrorReply(fmt.Sprintf("ERR unknown subcommand or wrong number of arguments for '%.128s'. Try SCRIPT HELP.", args[0]))
}

// runOptions says how a script is called.
type runOptions struct {
	proto int             // the caller's protocol
	ro    bool            // EVAL_RO / EVALSHA_RO
	src   *runtime.Script // the script run, for the .lua file and line of the KEYS check message; nil for raw EVAL
	ctx   context.Context
	mode  runtime.Mode // the command that runs it, for the call log
}

// runScript runs a cached script (scriptPrepareForRun, luaCallFunction).
func (r *Redis) runScript(sc *script, keys, argv []string, opt runOptions) resp.Reply {
	if opt.ro && sc.flags&flagEvalCompat == 0 && sc.flags&flagNoWrites == 0 {
		return resp.ErrorReply("ERR Can not execute a script with write flag using *_ro command.")
	}
	if r.vm == nil {
		r.vm = newLuaVM(r)
	}
	vm := r.vm
	L := vm.L
	if sc.vm != vm {
		vm.registerChunk(sc.proto, sc.info)
		sc.fn = L.NewFunctionFromProto(sc.proto)
		sc.fn.Env = vm.globals
		sc.vm = vm
	}
	run := r.newRun(runCtx{sc: sc, src: opt.src, mode: opt.mode, keyList: keys, resp: 2,
		readOnly: opt.ro || sc.flags&flagNoWrites != 0})
	defer r.endRun(r.beginRun(run))

	vm.keysTable = stringsTableReusing(L, untouched(vm.keysTable, len(keys)), keys, &vm.lastKeys)
	vm.argvTable = stringsTableReusing(L, untouched(vm.argvTable, len(argv)), argv, &vm.lastArgv)
	vm.globals.RawSetString("KEYS", vm.keysTable)
	vm.globals.RawSetString("ARGV", vm.argvTable)
	L.SetTop(0)
	L.Push(sc.fn)
	return r.callLimited(L, vm.handler, 0, opt, "script", sc.sha, run)
}

// newRun returns the context of a run about to begin, set to c: the
// Redis's one runSlot (see there), which spares each run an allocation,
// or a new one should a run ever begin inside another.
func (r *Redis) newRun(c runCtx) *runCtx {
	if r.run != nil {
		return &c
	}
	r.runSlot = c
	return &r.runSlot
}

// beginRun makes run the context of the script or function about to run
// (scriptPrepareForRun) and returns the caller's database for endRun.
func (r *Redis) beginRun(run *runCtx) (callerDB int) {
	r.run = run
	return r.dbIndex
}

// endRun undoes beginRun and selects the caller's database again: a
// SELECT inside a script or function lasts until it returns, as the server
// runs both on its script client, which scriptPrepareForRun points at the
// caller's database, so the caller's own selection never changes (Redis
// 7.0).
func (r *Redis) endRun(callerDB int) {
	r.run = nil
	r.selectDB(callerDB)
}

// declares reports whether k is one of the run's KEYS, or built from one
// (see [KeysDeclared]), for the KEYS check: a scan of a short list (what
// scripts pass), a set for a long one; a key that is not one of them is
// matched against each KEYS value's text up to its hash tag, which
// allocates nothing.
func (run *runCtx) declares(k string) bool {
	if len(run.keyList) <= 16 {
		if slices.Contains(run.keyList, k) {
			return true
		}
	} else {
		if run.keys == nil {
			run.keys = make(map[string]bool, len(run.keyList))
			for _, k := range run.keyList {
				run.keys[k] = true
			}
		}
		if run.keys[k] {
			return true
		}
	}
	for _, d := range run.keyList {
		if _, j, ok := hashtag.Span(d); ok && strings.HasPrefix(k, d[:j+1]) {
			return true
		}
	}
	return false
}

// callLimited calls the function on L's stack with its nargs arguments
// above it, under opt's context and the script timeout, as the script or
// function (kind) named name (a SHA1, or a function name) runs, and returns
// its reply: luaCallFunction's pcall and reply conversion, plus luatest's
// own stop for a runaway script.
func (r *Redis) callLimited(L *lua.LState, handler *lua.LFunction, nargs int, opt runOptions, kind, name string, run *runCtx) resp.Reply {
	defer L.SetTop(0)
	var cancel context.CancelFunc
	ctx := opt.ctx
	if r.timeout > 0 {
		if ctx == nil {
			ctx = context.Background()
		}
		ctx, cancel = context.WithTimeout(ctx, r.timeout)
		defer cancel()
	}
	if ctx != nil && ctx.Done() != nil {
		L.SetContext(ctx)
		defer L.RemoveContext()
	}
	if err := L.PCall(nargs, 1, handler); err != nil {
		if ctx != nil && ctx.Err() != nil {
			if errors.Is(ctx.Err(), context.DeadlineExceeded) && r.timeout > 0 {
				return resp.ErrorReply(fmt.Sprintf("ERR luatest: %s %s ran longer than %v and was stopped", kind, name, r.timeout))
			}
			return resp.ErrorReply("ERR luatest: " + kind + " stopped: " + ctx.Err().Error())
		}
		return runErrorReply(L, name, err)
	}
	return luaToReply(L.Get(-1), opt.proto, run.resp)
}

var positionRe = regexp.MustCompile(`^(` + chunkName + `|` + functionChunkName + `):(\d+): `)

// runErrorReply is the reply for a script or function named name (a SHA1
// for EVAL, the function name for FCALL) that raised an error
// (luaCallFunction): the err field, then " script: <name>, on
// @user_script:<line>." when the error handler found a line. The fields
// are read as luaExtractErrorInformation reads them: with lua_getfield
// (metamethods apply) and lua_isstring (a number counts).
func runErrorReply(L *lua.LState, name string, err error) resp.Reply {
	var obj lua.LValue = lua.LString(err.Error())
	var ae *lua.ApiError
	if errors.As(err, &ae) && ae.Object != nil {
		obj = ae.Object
	}
	t, ok := obj.(*lua.LTable)
	if s, isStr := obj.(lua.LString); !ok && isStr {
		// The error handler itself failed, as it does on a stack overflow
		// (it needs a call frame too): build what it would have built.
		if m := positionRe.FindStringSubmatch(string(s)); m != nil {
			return resp.ErrorReply(sanitizeLine(fmt.Sprintf("ERR %s script: %s, on @%s:%s.", s, name, m[1], m[2])))
		}
	}
	if !ok {
		return resp.ErrorReply(sanitizeLine(fmt.Sprintf("ERR Error running script f_%s, %.100s", name, cString(luaToStr(obj)))))
	}
	msg, ok := luaIsString(L.GetField(t, "err"))
	msg = cString(msg)
	if !ok {
		// Redis 7.0.15 dereferences a NULL message here and crashes
		// (error({}) kills the server); luatest answers instead.
		msg = "ERR luatest: error table without a string err field (redis-server 7.0 crashes on this)"
	}
	source, okSource := luaIsString(L.GetField(t, "source"))
	line, okLine := luaIsString(L.GetField(t, "line"))
	if okSource && okLine {
		msg += fmt.Sprintf(" script: %s, on %s:%s.", name, cString(source), cString(line))
	}
	return resp.ErrorReply(sanitizeLine(msg))
}

// luaIsString is lua_isstring and lua_tostring: strings and numbers.
func luaIsString(v lua.LValue) (string, bool) {
	switch v := v.(type) {
	case lua.LString:
		return string(v), true
	case lua.LNumber:
		return numberToString(float64(v)), true
	}
	return "", false
}

// stringsTableReusing is ss as a Lua array (a script's KEYS or ARGV, a
// function's keys or args) of copies of its strings: a script may keep
// them (SET key ARGV[1]) or answer with them, and a generated method
// builds its strings in a buffer it uses again for its next call (see
// luagenimpl.CallPool). They often repeat from one run to the next: a
// string equal to the one at its index in *last (the previous run's)
// reuses that Lua value instead of making another (a Lua string is
// immutable, so sharing it is invisible; the table itself is new, as in
// Redis). Short strings at the first indexes are remembered in *last for
// the next run. The table is t, a table [untouched] returned, when t is not
// nil.
func stringsTableReusing(L *lua.LState, t *lua.LTable, ss []string, last *[]lua.LValue) *lua.LTable {
	if t == nil {
		t = L.CreateTable(len(ss), 0)
	}
	prev := *last
	for i, s := range ss {
		if i < len(prev) && string(prev[i].(lua.LString)) == s {
			t.RawSetInt(i+1, prev[i])
			continue
		}
		v := lua.LValue(lua.LString(strings.Clone(s)))
		t.RawSetInt(i+1, v)
		switch {
		case len(s) > maxReusedLen:
		case i < len(prev):
			prev[i] = v
		case i == len(prev) && i < maxReused:
			prev = append(prev, v)
		}
	}
	*last = prev
	return t
}

// untouched returns t, the KEYS or ARGV table of the previous EVAL run,
// when it can be the next run's table of n strings as if new: nothing the
// previous run did to it can show. Nothing outlives an EVAL run (Redis
// 7.0's sandbox is read-only: a script has nowhere to keep a table), so
// t is only the global's old value; it is reused when the script left it
// as it was made (n strings, no metatable, no other key, no store the
// table's shadow recorded), the values then written over. Otherwise, and
// for a function's keys and args, which a library can keep in an upvalue,
// the table is new, as in Redis. It spares each run two tables.
func untouched(t *lua.LTable, n int) *lua.LTable {
	if t == nil || n >= len(luaInts) || t.Metatable != lua.LNil || t.MaxN() != n || hasShadow(t) {
		return nil
	}
	// Next(n) goes on after the last key of the array part, Next(nil)
	// starts the walk.
	after := lua.LValue(lua.LNil)
	if n > 0 {
		after = luaInts[n]
	}
	if k, _ := t.Next(after); k != lua.LNil {
		return nil // a key besides 1..n
	}
	return t
}

// luaInts are the Lua numbers 0..32 as values, made once.
var luaInts = func() (ns [33]lua.LValue) {
	for i := range ns {
		ns[i] = lua.LNumber(i)
	}
	return ns
}()

// maxReused and maxReusedLen bound what stringsTableReusing remembers, so
// a big argument is not kept alive after its run.
const (
	maxReused    = 32
	maxReusedLen = 128
)

// EvalSha implements [runtime.Executor] with EVALSHA (EVALSHA_RO for
// read-only scripts): a script missing from the script cache answers
// NOSCRIPT, so runtime.Script.Exec falls back to Eval as it does against a
// server. The reply is decoded as rueidis decodes it (RESP3).
func (r *Redis) EvalSha(ctx context.Context, s *runtime.Script, keys, args []string) (runtime.Value, error) {
	return r.exec(ctx, s, keys, args, true)
}

// Eval implements [runtime.Executor] with EVAL (EVAL_RO), which also adds
// the script to the script cache.
func (r *Redis) Eval(ctx context.Context, s *runtime.Script, keys, args []string) (runtime.Value, error) {
	return r.exec(ctx, s, keys, args, false)
}

// Load implements [runtime.Executor] with SCRIPT LOAD.
func (r *Redis) Load(ctx context.Context, s *runtime.Script) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	r.lock()
	defer r.mu.Unlock()
	if r.closed {
		return errClosed
	}
	if _, errReply := r.loadScript(s.Body()); errReply != nil {
		_, err := FromRESP(*errReply)
		return fmt.Errorf("SCRIPT LOAD %s: %w", s.Name(), err)
	}
	return nil
}

func (r *Redis) exec(ctx context.Context, s *runtime.Script, keys, args []string, bySha bool) (v runtime.Value, err error) {
	if err := ctx.Err(); err != nil {
		return runtime.Value{}, err
	}
	r.lock()
	defer r.mu.Unlock()
	if r.closed {
		return runtime.Value{}, errClosed
	}
	defer func() {
		// As in Command: a bug in luatest must not panic out of a
		// generated method. (Script errors, Go panics inside Lua
		// included, are error replies already: gopher-lua's PCall
		// recovers them.)
		if p := recover(); p != nil {
			v, err = runtime.Value{}, &runtime.ReplyError{Msg: fmt.Sprintf("luatest: internal error running %s: %v", s.Name(), p)}
		}
	}()
	var sc *script
	if bySha {
		if sc = r.scripts[s.SHA1()]; sc == nil {
			return FromRESP(errNoScript)
		}
	} else {
		var errReply *resp.Reply
		if sc, errReply = r.loadScript(s.Body()); errReply != nil {
			return FromRESP(*errReply)
		}
	}
	mode := runtime.ModeEval
	if bySha {
		mode = runtime.ModeEvalSha
	}
	reply := r.runScript(sc, keys, args, runOptions{proto: 3, ro: s.ReadOnly(), src: s, ctx: ctx, mode: mode})
	return r.replied(ctx, reply)
}

// replied is what EvalSha, Eval and FCall return for reply: the lost
// reply an injected fault asks for, else ctx's error when ctx ended
// while the script ran (a cancelled script is stopped where it was, its
// writes so far kept, and its caller gets ctx.Err() as from a client whose
// ctx ended before the reply came), else the reply.
func (r *Redis) replied(ctx context.Context, reply resp.Reply) (runtime.Value, error) {
	if r.faults.takeLostReply() {
		return runtime.Value{}, ErrReplyLost
	}
	if err := ctx.Err(); err != nil {
		return runtime.Value{}, err
	}
	return FromRESP(reply)
}

// ReleasesArgs implements [runtime.ArgReleaser]: a script's KEYS and ARGV
// and a function's keys and args are copies of the caller's strings (see
// stringsTableReusing), so luatest keeps nothing of the caller's.
func (r *Redis) ReleasesArgs() bool { return true }
