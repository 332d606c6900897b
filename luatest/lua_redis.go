package luatest

import (
	"crypto/sha1"
	"encoding/hex"
	"fmt"
	"strings"

	rediscmd "github.com/luagen/luagen/internal/commands"
	"github.com/luagen/luagen/luatest/resp"
	"github.com/luagen/luagen/runtime"
	lua "github.com/yuin/gopher-lua"
)

// The redis library scripts see (script_lua.c, luaRegisterRedisAPI).

// Log levels of redis.log, as the server defines them.
const (
	LogDebug   = 0
	LogVerbose = 1
	LogNotice  = 2
	LogWarning = 3
)

// redisVersion is the server version luatest emulates.
const (
	redisVersion    = "7.0.15"
	redisVersionNum = 0x07000f
)

// LogEntry is one redis.log call.
type LogEntry struct {
	Level   int // LogDebug .. LogWarning
	Message string
}

func newRedisLib(L *lua.LState, r *Redis) *lua.LTable {
	t := L.NewTable()
	fns := map[string]lua.LGFunction{
		"call":               func(L *lua.LState) int { return r.luaCall(L, true) },
		"pcall":              func(L *lua.LState) int { return r.luaCall(L, false) },
		"error_reply":        luaErrorReplyFn,
		"status_reply":       luaStatusReplyFn,
		"sha1hex":            luaSha1hex,
		"log":                r.luaLog,
		"setresp":            r.luaSetresp,
		"replicate_commands": func(L *lua.LState) int { L.Push(lua.LTrue); return 1 },
		"set_repl":           luaSetRepl,
		"breakpoint":         func(L *lua.LState) int { L.Push(lua.LFalse); return 1 },
		"debug":              func(L *lua.LState) int { return 0 },
		"acl_check_cmd":      luaACLCheckCmd,
	}
	for name, fn := range fns {
		t.RawSetString(name, L.NewFunction(fn))
	}
	for name, v := range map[string]int{
		"LOG_DEBUG": LogDebug, "LOG_VERBOSE": LogVerbose, "LOG_NOTICE": LogNotice, "LOG_WARNING": LogWarning,
		"REPL_NONE": 0, "REPL_AOF": 1, "REPL_SLAVE": 2, "REPL_REPLICA": 2, "REPL_ALL": 3,
	} {
		t.RawSetString(name, lua.LNumber(v))
	}
	t.RawSetString("REDIS_VERSION", lua.LString(redisVersion))
	t.RawSetString("REDIS_VERSION_NUM", lua.LNumber(redisVersionNum))
	return t
}

// raise raises an error table built from msg as luaPushError + luaError do:
// the table has no position; the error handler adds the script line.
func raise(L *lua.LState, msg string) {
	L.Error(luaErrorReply(L, msg), 0)
}

// luaCall is redis.call (raise) and redis.pcall (!raise)
// (luaRedisGenericCommand + scriptCall): argument conversion, the checks
// the server makes before running a command from a script, the luatest
// affordances (call log, KEYS check, injected faults), then the command.
func (r *Redis) luaCall(L *lua.LState, raise bool) int {
	return r.luaCallAt(L, raise, 0, 0)
}

// luaCallAt is luaCall with the arguments after the first base ones on
// L's stack, and the call's line given (line > 0) rather than read from
// the call stack: the helpers redisCall (lua51.go) rewrites an EVAL
// script's redis.call(...) and redis.pcall(...) into.
func (r *Redis) luaCallAt(L *lua.LState, raise bool, base, line int) int {
	fail := func(msg string) int {
		t := luaErrorReply(L, msg)
		if raise {
			L.Error(t, 0)
		}
		L.Push(t)
		return 1
	}
	argc := L.GetTop() - base
	if argc <= 0 {
		return fail("Please specify at least one argument for this redis lib call")
	}
	argv := r.newArgv(argc)
	for i := range argv {
		switch v := L.Get(base + i + 1).(type) {
		case lua.LString:
			argv[i] = string(v)
		case lua.LNumber:
			// Redis 7.0 formats numbers with "%.17g", not Lua's "%.14g".
			argv[i] = resp.FormatDouble(float64(v))
		default:
			return fail("Lua redis lib command arguments must be strings or integers")
		}
	}
	run := r.run
	if line <= 0 {
		line = callerLine(L)
	}
	call := Call{Command: argv[0], Args: argv[1:], Line: line, Protected: !raise}
	if run != nil {
		call.Mode = run.mode
		if run.src != nil {
			// The line of the .lua file, or of the ---@include file the
			// line came from, as runtime.ScriptError names it.
			call.File, call.Line = run.src.Position(call.Line - run.lineShift)
		}
	}
	reply := r.scriptCommand(run, argv, call.where)
	call.Reply = reply
	r.logCall(call)
	if reply.Kind == resp.Error {
		t := luaErrorReply(L, "-"+reply.Str)
		// The server marks errors a command already counted in its stats.
		t.RawSetString("ignore_error_stats_update", lua.LTrue)
		if raise {
			L.Error(t, 0)
		}
		L.Push(t)
		return 1
	}
	scriptResp := 2
	if run != nil {
		scriptResp = run.resp
	}
	L.Push(replyToLua(L, reply, scriptResp))
	return 1
}

// newArgv returns a slice of n strings for redis.call's arguments. The
// call log keeps each, so none is ever reused: they are cut one after
// another from a shared block, which costs one allocation per block
// instead of one per call.
func (r *Redis) newArgv(n int) []string {
	if cap(r.argBlock)-len(r.argBlock) < n {
		r.argBlock = make([]string, 0, max(argBlockLen, n))
	}
	i := len(r.argBlock)
	r.argBlock = r.argBlock[:i+n]
	return r.argBlock[i : i+n : i+n]
}

// argBlockLen is how many arguments newArgv's blocks hold.
const argBlockLen = 256

// scriptCommand runs argv for a script: the checks of scriptCall in
// script.c, in the server's order, with the luatest affordances in place of
// the cluster check.
func (r *Redis) scriptCommand(run *runCtx, argv []string, where func() string) resp.Reply {
	n := r.faults.count()
	rc, ok := resolve(argv)
	switch {
	case !ok:
		return resp.ErrorReply("ERR Unknown Redis command called from script")
	case !rc.info.ArityOK(len(argv)):
		return resp.ErrorReply("ERR Wrong number of args calling Redis command from script")
	case rc.info.Has(rediscmd.NoScript):
		return resp.ErrorReply("ERR This Redis command is not allowed from script")
	case run != nil && run.readOnly && rc.info.Flags&(rediscmd.Write|rediscmd.MayReplicate) != 0:
		return resp.ErrorReply("ERR Write commands are not allowed from read-only scripts.")
	case rc.impl == nil:
		return errNotImplemented(rc.info.Name)
	}
	if run != nil && r.keysCheck != KeysUnchecked {
		if msg := r.checkKeys(run, rc.keysOf(argv), where); msg != "" {
			return resp.ErrorReply("ERR " + msg)
		}
	}
	if msg, ok := r.faults.injected(n, rc.impl.name); ok {
		return resp.ErrorReply(msg)
	}
	if run == nil {
		return r.call(rc, &cmdCtx{r: r, proto: 2, name: rc.impl.name, argv0: argv[0]}, argv)
	}
	run.cmd = cmdCtx{r: r, proto: run.resp, name: rc.impl.name, argv0: argv[0], run: run}
	return r.call(rc, &run.cmd, argv)
}

// checkKeys returns why keys break the KEYS check, or "".
func (r *Redis) checkKeys(run *runCtx, keys []string, where func() string) string {
	for _, k := range keys {
		switch r.keysCheck {
		case KeysDeclared:
			if !run.declares(k) {
				return fmt.Sprintf("luatest: script accessed key '%s' not declared in KEYS (%s); "+
					"Redis Cluster refuses it when it hashes to another slot: "+
					"Script attempted to access a non local key in a cluster node", k, where())
			}
		case KeysSameSlot:
			if len(run.keyList) > 0 && runtime.Slot(k) != runtime.Slot(run.keyList[0]) {
				return fmt.Sprintf("luatest: script accessed key '%s' in slot %d, KEYS are in slot %d (%s); "+
					"Redis Cluster answers: Script attempted to access a non local key in a cluster node",
					k, runtime.Slot(k), runtime.Slot(run.keyList[0]), where())
			}
		}
	}
	return ""
}

// redis.error_reply(msg) — an error table; a message without a space gets
// "ERR " in front (luaRedisErrorReplyCommand → luaPushErrorBuff).
func luaErrorReplyFn(L *lua.LState) int {
	s, ok := L.Get(1).(lua.LString)
	if L.GetTop() != 1 || !ok {
		L.Push(luaErrorReply(L, "wrong number or type of arguments"))
		return 1
	}
	msg := cString(string(s))
	if !strings.HasPrefix(msg, "-") {
		msg = "-" + msg
	}
	L.Push(luaErrorReply(L, msg))
	return 1
}

// redis.status_reply(msg) — {ok=msg}.
func luaStatusReplyFn(L *lua.LState) int {
	s, ok := L.Get(1).(lua.LString)
	if L.GetTop() != 1 || !ok {
		L.Push(luaErrorReply(L, "wrong number or type of arguments"))
		return 1
	}
	t := L.CreateTable(0, 1)
	t.RawSetString("ok", s)
	L.Push(t)
	return 1
}

// redis.sha1hex(s) — lowercase hex SHA1 of s.
func luaSha1hex(L *lua.LState) int {
	if L.GetTop() != 1 {
		raise(L, "wrong number of arguments")
	}
	var s string
	switch v := L.Get(1).(type) {
	case lua.LString:
		s = string(v)
	case lua.LNumber:
		s = numberToString(float64(v))
	}
	sum := sha1.Sum([]byte(s))
	L.Push(lua.LString(hex.EncodeToString(sum[:])))
	return 1
}

// redis.log(level, message, ...) — recorded for [Redis.Logs]; the
// message is the string arguments joined by spaces.
func (r *Redis) luaLog(L *lua.LState) int {
	argc := L.GetTop()
	if argc < 2 {
		raise(L, "redis.log() requires two arguments or more.")
	}
	lv, ok := L.Get(1).(lua.LNumber)
	if !ok {
		raise(L, "First argument must be a number (log level).")
	}
	level := int(lv)
	if level < LogDebug || level > LogWarning {
		raise(L, "Invalid debug level.")
	}
	var parts []string
	for i := 2; i <= argc; i++ {
		switch v := L.Get(i).(type) {
		case lua.LString:
			parts = append(parts, string(v))
		case lua.LNumber:
			parts = append(parts, numberToString(float64(v)))
		}
	}
	r.logs = append(r.logs, LogEntry{Level: level, Message: strings.Join(parts, " ")})
	return 0
}

// redis.setresp(2|3) — the protocol the script's redis.call replies use.
func (r *Redis) luaSetresp(L *lua.LState) int {
	if L.GetTop() != 1 {
		raise(L, "redis.setresp() requires one argument.")
	}
	n, ok := L.Get(1).(lua.LNumber)
	if !ok || (n != 2 && n != 3) {
		raise(L, "RESP version must be 2 or 3.")
	}
	if r.run != nil {
		r.run.resp = int(n)
	}
	return 0
}

// redis.set_repl(flags) — accepted and ignored (luatest has no replicas).
func luaSetRepl(L *lua.LState) int {
	if L.GetTop() != 1 {
		raise(L, "redis.set_repl() requires one argument.")
	}
	n, ok := L.Get(1).(lua.LNumber)
	if !ok || n < 0 || n > 3 {
		raise(L, "Invalid replication flags. Use REPL_AOF, REPL_REPLICA, REPL_ALL or REPL_NONE.")
	}
	return 0
}

// redis.acl_check_cmd(cmd, ...) — true for a known command (luatest has
// no ACL users: everything is allowed).
func luaACLCheckCmd(L *lua.LState) int {
	if L.GetTop() < 1 {
		raise(L, "Please specify at least one argument for this redis lib call")
	}
	if _, ok := rediscmd.Lookup(L.ToString(1)); !ok {
		raise(L, "Invalid command passed to redis.acl_check_cmd()")
	}
	L.Push(lua.LTrue)
	return 1
}
