package luatest

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/luagen/luagen/luatest/resp"
	lua "github.com/yuin/gopher-lua"
)

// Redis Functions (functions.c, function_lua.c): libraries loaded with
// FUNCTION LOAD into their own Lua interpreter, called with FCALL.

// functionChunkName is what Redis 7.0 loads every library as
// ("@user_function"); Lua prints it as "user_function" in positions.
const functionChunkName = "user_function"

// functionLoadTimeout is how long a library's load-time code may run
// (LOAD_TIMEOUT_MS in functions.h).
const functionLoadTimeout = 500 * time.Millisecond

// functions is the function engine of a fake server: one Lua interpreter
// for every library, as Redis keeps one for its Lua engine.
type functions struct {
	vm  *luaVM
	env *lua.LTable // the globals library code sees: reads go to envMeta.__index
	// envMeta.__index is loadAPI while FUNCTION LOAD runs a library's
	// top-level code and the interpreter's globals otherwise
	// (luaEngineCreate swaps the same way).
	envMeta *lua.LTable
	loadAPI *lua.LTable
	cur     *registry
	loading *library // the library whose load-time code runs now
}

// registry is a set of libraries and the function names they register
// (functionsLibCtx): the current one, or one a FUNCTION RESTORE builds.
type registry struct {
	libs  map[string]*library  // by name, case-sensitive
	funcs map[string]*function // by lower-cased name: FCALL's lookup ignores case
	order []string             // library names in load order, for FUNCTION LIST
}

func newRegistry() *registry {
	return &registry{libs: map[string]*library{}, funcs: map[string]*function{}}
}

// library is one loaded library.
type library struct {
	name  string
	code  string // the whole FUNCTION LOAD payload, shebang included
	funcs []*function
}

// function is one registered function.
type function struct {
	name    string
	desc    string
	hasDesc bool
	flags   scriptFlags
	fn      *lua.LFunction
	lib     *library
}

// fns returns the function engine, starting it on first use.
func (r *Redis) fns() *functions {
	if r.funcs == nil {
		r.funcs = newFunctions(r)
	}
	return r.funcs
}

func (f *functions) close() {
	if f != nil && f.vm != nil {
		f.vm.L.Close()
		f.vm = nil
	}
}

func newFunctions(r *Redis) *functions {
	vm := newLuaVM(r)
	L := vm.L
	f := &functions{vm: vm, cur: newRegistry()}

	// The library API (luaEngineInitEngine): only redis.register_function,
	// redis.log and the version, behind the error metatable.
	redis := L.NewTable()
	redis.RawSetString("register_function", L.NewFunction(f.registerFunction))
	redis.RawSetString("log", L.NewFunction(r.luaLog))
	for name, v := range map[string]int{"LOG_DEBUG": LogDebug, "LOG_VERBOSE": LogVerbose, "LOG_NOTICE": LogNotice, "LOG_WARNING": LogWarning} {
		redis.RawSetString(name, lua.LNumber(v))
	}
	redis.RawSetString("REDIS_VERSION", lua.LString(redisVersion))
	redis.RawSetString("REDIS_VERSION_NUM", lua.LNumber(redisVersionNum))
	redis.Metatable = errorMetatable(L)
	vm.protectReachable(redis)
	api := L.NewTable()
	api.RawSetString("redis", redis)
	// The rewritten chunk calls luatest's helpers (lua51.go) at its top
	// level too.
	vm.globals.ForEach(func(k, v lua.LValue) {
		if isHelperName(k) {
			api.RawSet(k, v)
		}
	})
	api.Metatable = errorMetatable(L)
	vm.protectReachable(api)
	f.loadAPI = api

	// The library's globals: an empty table whose metatable's __index
	// swaps, both read-only (luaEngineInitEngine).
	f.env = L.NewTable()
	f.envMeta = L.NewTable()
	f.envMeta.RawSetString("__index", vm.globals)
	f.env.Metatable = f.envMeta
	vm.protect(f.env)
	vm.protect(f.envMeta)
	return f
}

// errorMetatable is luaSetErrorMetatable: reading a missing name raises.
func errorMetatable(L *lua.LState) *lua.LTable {
	mt := L.NewTable()
	mt.RawSetString("__index", L.NewFunction(func(L *lua.LState) int {
		L.RaiseError("Script attempted to access nonexistent global variable '%s'", L.ToString(2))
		return 0
	}))
	return mt
}

// libraryMeta is what functionExtractLibMetaData reads from the shebang.
type libraryMeta struct {
	name, engine, code string
}

func extractLibraryMeta(payload string) (libraryMeta, string) {
	if !strings.HasPrefix(payload, "#!") {
		return libraryMeta{}, "Missing library metadata"
	}
	end := strings.IndexByte(payload, '\n')
	if end < 0 {
		return libraryMeta{}, "Invalid library metadata"
	}
	parts, err := SplitArgs(payload[:end])
	if err != nil || len(parts) == 0 {
		return libraryMeta{}, "Invalid library metadata"
	}
	md := libraryMeta{engine: parts[0][2:], code: payload[end:]}
	haveName := false
	for _, p := range parts[1:] {
		if len(p) >= 5 && strings.EqualFold(p[:5], "name=") {
			if haveName {
				return libraryMeta{}, "Invalid metadata value, name argument was given multiple times"
			}
			md.name, haveName = p[5:], true
			continue
		}
		return libraryMeta{}, "Invalid metadata value given: " + p
	}
	if !haveName {
		return libraryMeta{}, "Library name was not given"
	}
	return md, ""
}

// validName is functionsVerifyName: [a-zA-Z0-9_]+.
func validName(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_') {
			return false
		}
	}
	return true
}

const errBadName = "Library names can only contain letters, numbers, or underscores(_) and must be at least one character long"

// create compiles payload and adds its library to reg
// (functionsCreateWithLibraryCtx); it returns the library name, or the
// error text without "ERR ".
func (f *functions) create(reg *registry, payload string, replace bool) (string, string) {
	md, msg := extractLibraryMeta(payload)
	if msg != "" {
		return "", msg
	}
	if !validName(md.name) {
		return "", errBadName
	}
	if !strings.EqualFold(md.engine, "lua") {
		return "", fmt.Sprintf("Engine '%s' not found", md.engine)
	}
	old := reg.libs[md.name]
	if old != nil && !replace {
		return "", fmt.Sprintf("Library '%s' already exists", md.name)
	}
	if old != nil {
		reg.unlink(old)
	}
	lib := &library{name: md.name, code: payload}
	msg = f.run(lib, md.code)
	if msg == "" && len(lib.funcs) == 0 {
		msg = "No functions registered"
	}
	if msg == "" {
		for _, fn := range lib.funcs {
			if reg.funcs[strings.ToLower(fn.name)] != nil {
				msg = fmt.Sprintf("Function %s already exists", fn.name)
				break
			}
		}
	}
	if msg != "" {
		if old != nil {
			reg.link(old)
		}
		return "", msg
	}
	reg.link(lib)
	return lib.name, ""
}

func (reg *registry) link(lib *library) {
	reg.libs[lib.name] = lib
	reg.order = append(reg.order, lib.name)
	for _, fn := range lib.funcs {
		reg.funcs[strings.ToLower(fn.name)] = fn
	}
}

func (reg *registry) unlink(lib *library) {
	delete(reg.libs, lib.name)
	for i, n := range reg.order {
		if n == lib.name {
			reg.order = append(reg.order[:i:i], reg.order[i+1:]...)
			break
		}
	}
	for _, fn := range lib.funcs {
		if reg.funcs[strings.ToLower(fn.name)] == fn {
			delete(reg.funcs, strings.ToLower(fn.name))
		}
	}
}

// run compiles code (the payload after its shebang line, which starts
// with the newline so line numbers stay) and runs its top level with the
// library API as globals (luaEngineCreate).
func (f *functions) run(lib *library, code string) string {
	proto, info, err := compileChunk(code, "@"+functionChunkName, 0)
	if err != nil {
		return "Error compiling function: " + compileErrorTextIn(err, functionChunkName)
	}
	f.vm.registerChunk(proto, info) // Lua 5.1 error texts, as for scripts
	L := f.vm.L
	fn := L.NewFunctionFromProto(proto)
	fn.Env = f.env
	f.envMeta.RawSetString("__index", f.loadAPI)
	f.loading = lib
	ctx, cancel := context.WithTimeout(context.Background(), functionLoadTimeout)
	L.SetContext(ctx)
	defer func() {
		L.RemoveContext()
		cancel()
		f.envMeta.RawSetString("__index", f.vm.globals)
		f.loading = nil
		L.SetTop(0)
	}()
	L.SetTop(0)
	L.Push(fn)
	if err := L.PCall(0, 0, nil); err != nil {
		if ctx.Err() != nil {
			return "Error registering functions: ERR FUNCTION LOAD timeout"
		}
		return "Error registering functions: " + loadErrorText(L, err)
	}
	return ""
}

// loadErrorText is luaExtractErrorInformation's message for an error of
// the load-time code: "ERR " and a string error, or an error table's err.
func loadErrorText(L *lua.LState, err error) string {
	var obj lua.LValue = lua.LString(err.Error())
	var ae *lua.ApiError
	if errors.As(err, &ae) && ae.Object != nil {
		obj = ae.Object
	}
	if s, ok := luaIsString(obj); ok {
		return "ERR " + cString(lua51Message(s))
	}
	if t, ok := obj.(*lua.LTable); ok {
		if s, ok := luaIsString(L.GetField(t, "err")); ok {
			return cString(s)
		}
	}
	return "ERR luatest: load error without a message"
}

// registerFunction is redis.register_function (luaRegisterFunction):
// positional (name, callback) or one table of named arguments.
func (f *functions) registerFunction(L *lua.LState) int {
	if f.loading == nil {
		raise(L, "redis.register_function can only be called on FUNCTION LOAD command")
	}
	var fn *function
	switch L.GetTop() {
	case 1:
		fn = readNamedArgs(L)
	case 2:
		fn = &function{}
		name, ok := luaIsString(L.Get(1))
		if !ok {
			raise(L, "first argument to redis.register_function must be a string")
		}
		cb, ok := L.Get(2).(*lua.LFunction)
		if !ok {
			raise(L, "second argument to redis.register_function must be a function")
		}
		fn.name, fn.fn = name, cb
	default:
		raise(L, "wrong number of arguments to redis.register_function")
	}
	lib := f.loading
	if !validName(fn.name) {
		raise(L, errBadName)
	}
	for _, other := range lib.funcs {
		if other.name == fn.name {
			raise(L, "Function already exists in the library")
		}
	}
	fn.lib = lib
	lib.funcs = append(lib.funcs, fn)
	return 0
}

func readNamedArgs(L *lua.LState) *function {
	t, ok := L.Get(1).(*lua.LTable)
	if !ok {
		raise(L, "calling redis.register_function with a single argument is only applicable to Lua table (representing named arguments).")
	}
	fn := &function{}
	haveName := false
	var msg string
	forEach(t, func(k, v lua.LValue) {
		if msg != "" {
			return
		}
		key, ok := luaIsString(k)
		if !ok {
			msg = "named argument key given to redis.register_function is not a string"
			return
		}
		switch strings.ToLower(key) {
		case "function_name":
			if fn.name, ok = luaIsString(v); !ok {
				msg = "function_name argument given to redis.register_function must be a string"
			}
			haveName = ok
		case "description":
			if fn.desc, ok = luaIsString(v); !ok {
				msg = "description argument given to redis.register_function must be a string"
			}
			fn.hasDesc = ok
		case "callback":
			if fn.fn, ok = v.(*lua.LFunction); !ok {
				msg = "callback argument given to redis.register_function must be a function"
			}
		case "flags":
			ft, ok := v.(*lua.LTable)
			if !ok {
				msg = "flags argument to redis.register_function must be a table representing function flags"
				return
			}
			if fn.flags, ok = readFunctionFlags(ft); !ok {
				msg = "unknown flag given"
			}
		default:
			msg = "unknown argument given to redis.register_function"
		}
	})
	switch {
	case msg != "":
	case !haveName:
		msg = "redis.register_function must get a function name argument"
	case fn.fn == nil:
		msg = "redis.register_function must get a callback argument"
	}
	if msg != "" {
		raise(L, msg)
	}
	return fn
}

// readFunctionFlags is luaRegisterFunctionReadFlags: t[1], t[2], ... up to
// the first nil, each a flag name compared without case.
func readFunctionFlags(t *lua.LTable) (scriptFlags, bool) {
	var flags scriptFlags
	for i := 1; ; i++ {
		v := t.RawGetInt(i)
		if v == lua.LNil {
			return flags, true
		}
		s, ok := luaIsString(v)
		if !ok {
			return 0, false
		}
		bit, ok := flagNames[strings.ToLower(s)]
		if !ok {
			return 0, false
		}
		flags |= bit
	}
}

// callFunction runs fn with keys and args (fcallCommandGeneric,
// luaEngineCall): the function gets them as two tables, not as the
// KEYS/ARGV globals.
func (r *Redis) callFunction(fn *function, keys, argv []string, opt runOptions) resp.Reply {
	return r.callFunctionShifted(fn, keys, argv, opt, 0)
}

// callFunctionShifted is callFunction with the call log's lines moved up
// by lineShift (see runCtx.lineShift).
func (r *Redis) callFunctionShifted(fn *function, keys, argv []string, opt runOptions, lineShift int) resp.Reply {
	if opt.ro && fn.flags&flagNoWrites == 0 {
		return resp.ErrorReply("ERR Can not execute a script with write flag using *_ro command.")
	}
	f := r.fns()
	L := f.vm.L
	run := r.newRun(runCtx{src: opt.src, mode: opt.mode, keyList: keys, resp: 2, lineShift: lineShift,
		readOnly: opt.ro || fn.flags&flagNoWrites != 0})
	defer r.endRun(r.beginRun(run))

	L.SetTop(0)
	L.Push(fn.fn)
	L.Push(stringsTableReusing(L, nil, keys, &f.vm.lastKeys))
	L.Push(stringsTableReusing(L, nil, argv, &f.vm.lastArgv))
	return r.callLimited(L, f.vm.handler, 2, opt, "function", fn.name, run)
}
