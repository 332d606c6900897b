package luatest

import (
	"fmt"
	"reflect"
	"regexp"
	"strings"

	lua "github.com/yuin/gopher-lua"
	"github.com/yuin/gopher-lua/parse"

	"github.com/luagen/luagen/internal/lua51"
)

// luaVM is the one Lua interpreter of a fake server, set up as Redis 7.0
// sets up its own (script_lua.c, eval.c): the libraries Redis loads and no
// others, a read-only global table that raises on unknown names, read-only
// library tables, and Redis' own pcall, tostring, tonumber, math.random and
// string.format where gopher-lua's differ from Lua 5.1.
//
// gopher-lua has no read-only tables (Redis patches its Lua for them), so
// every path that can store into a table asks readonly first: the store
// helpers the chunk rewrite calls for indexed assignments (lua_store.go),
// rawset, setmetatable, table.insert and table.remove; an assignment to a
// global name, which gopher-lua's VM would make on the global table
// itself, is rewritten into a call of a helper that raises (lua51.go).
type luaVM struct {
	L *lua.LState
	// globals is the global table, every script's environment: KEYS and
	// ARGV are set in it per run.
	globals *lua.LTable
	// readonly holds the tables Redis makes read-only: every table
	// reachable from the globals, metatables included
	// (luaSetTableProtectionRecursively), and the strings' metatable.
	readonly map[*lua.LTable]bool
	handler  *lua.LFunction // the error handler every script runs under
	// pendingKeys are the computed keys of the constructors being
	// evaluated, per thread (keyHelper, tableHelper).
	pendingKeys map[*lua.LState][]pendingKey
	// hiddenFrames are the Go functions whose frames Lua 5.1 does not
	// have, which the error handler's position skips: the store helpers
	// (lua_store.go; Lua 5.1's VM stores itself) and, while it runs, the
	// handler xpcall puts between an error and the script's own handler.
	hiddenFrames map[*lua.LFunction]bool
	renamer      *lua.LFunction // pcall's error handler: Lua 5.1 texts
	// chunks maps every function prototype of the scripts run so far to
	// its chunk's operation sites, for Lua 5.1 error texts (lua51.go).
	chunks map[*lua.FunctionProto]*chunkInfo
	// lastKeys and lastArgv are the Lua strings of the last run's KEYS
	// and ARGV (a script's, or the keys and args of a function), for
	// stringsTableReusing.
	lastKeys, lastArgv []lua.LValue
	// keysTable and argvTable are the last EVAL run's KEYS and ARGV, which
	// the next run takes over when the script left them as they were
	// (untouched).
	keysTable, argvTable *lua.LTable
}

// chunkName is what Redis 7.0 loads every EVAL script as ("@user_script");
// Lua prints it as "user_script" in error positions.
const chunkName = "user_script"

// librariesLoaded lists the global libraries a script sees, as Redis 7.0
// loads them (luaLoadLibraries): base, table, string, math, coroutine (Lua
// 5.1's base library opens it), cjson, bit, struct and cmsgpack.
func newLuaVM(r *Redis) *luaVM {
	// Lua 5.1 allows 20,000 nested Lua calls (LUAI_MAXCALLS) before "stack
	// overflow"; gopher-lua defaults to 256 and a fixed register file. The
	// call stack is a fixed array so overflowing it raises gopher-lua's
	// positioned "stack overflow" error (the growing variant panics with
	// no position); registers grow on demand.
	L := lua.NewState(lua.Options{SkipOpenLibs: true, CallStackSize: 20000,
		RegistrySize: 1024 * 20, RegistryMaxSize: 1024 * 1024 * 16})
	for _, lib := range []struct {
		name string
		fn   lua.LGFunction
	}{
		{lua.BaseLibName, lua.OpenBase},
		{lua.TabLibName, lua.OpenTable},
		{lua.StringLibName, lua.OpenString},
		{lua.MathLibName, lua.OpenMath},
		{lua.CoroutineLibName, lua.OpenCoroutine},
	} {
		L.Push(L.NewFunction(lib.fn))
		L.Push(lua.LString(lib.name))
		L.Call(1, 0)
	}
	vm := &luaVM{L: L, globals: L.G.Global, readonly: map[*lua.LTable]bool{},
		chunks: map[*lua.FunctionProto]*chunkInfo{}}
	g := vm.globals

	// Globals Redis removes or never loads.
	for _, name := range []string{"print", "dofile", "loadfile", "require", "module", "setfenv",
		"getfenv", "newproxy", "_printregs", "_GOPHER_LUA_VERSION", "package"} {
		g.RawSetString(name, lua.LNil)
	}
	origToString := L.GetGlobal("tostring").(*lua.LFunction).GFunction
	g.RawSetString("tostring", L.NewFunction(luaToString(origToString)))
	g.RawSetString("tonumber", L.NewFunction(luaToNumber))
	g.RawSetString("type", L.NewFunction(luaType))
	g.RawSetString("pcall", L.NewFunction(vm.pcall))
	g.RawSetString("xpcall", L.NewFunction(vm.xpcall))
	g.RawSetString(concatHelperName, L.NewFunction(concatHelper))
	g.RawSetString(forNumberHelperName, L.NewFunction(forNumberHelper))
	g.RawSetString(modHelperName, L.NewFunction(modHelper))
	for name, raise := range map[string]bool{redisCallHelperName: true, redisPcallHelperName: false} {
		g.RawSetString(name, L.NewFunction(func(L *lua.LState) int {
			return r.luaCallAt(L, raise, 1, int(lua.LVAsNumber(L.Get(1))))
		}))
	}
	installNext(L, g)
	vm.pendingKeys = map[*lua.LState][]pendingKey{}
	g.RawSetString(tableHelperName, L.NewFunction(vm.tableHelper))
	g.RawSetString(keyHelperName, L.NewFunction(vm.keyHelper))
	g.RawSetString(valHelperName, L.NewFunction(vm.valHelper))
	vm.hiddenFrames = map[*lua.LFunction]bool{}
	for name, fn := range map[string]lua.LGFunction{
		setHelperName: vm.setHelper, setLateHelperName: vm.setLateHelper, setMultiHelperName: vm.setMultiHelper,
		setGlobalHelperName: setGlobalHelper,
	} {
		f := L.NewFunction(fn)
		vm.hiddenFrames[f] = true
		g.RawSetString(name, f)
	}
	g.RawSetString("error", L.NewFunction(luaBaseError))
	g.RawSetString("gcinfo", L.NewFunction(func(L *lua.LState) int { L.Push(lua.LNumber(0)); return 1 }))
	g.RawSetString("rawset", L.NewFunction(vm.rawset(recordedRawset(g.RawGetString("rawset").(*lua.LFunction).GFunction))))
	g.RawSetString("setmetatable", L.NewFunction(vm.setmetatable(g.RawGetString("setmetatable").(*lua.LFunction).GFunction)))
	g.RawSetString("rawget", L.NewFunction(vm.rawget(g.RawGetString("rawget").(*lua.LFunction).GFunction)))
	// Redis' own handler, which scripts can pass to xpcall (runtime's
	// merged runs do): it adds the raising line, as for the script's run.
	g.RawSetString("__redis__err__handler", L.NewFunction(func(L *lua.LState) int {
		return vm.errorHandler(L)
	}))

	vm.patchLibraries(r)
	vm.patchCoercion()
	g.RawSetString("cjson", newCjson(L, L.NewUserData())) // cjson.null
	g.RawSetString("bit", newBit(L))
	g.RawSetString("struct", newStruct(L))
	g.RawSetString("cmsgpack", newCmsgpack(L))
	g.RawSetString("redis", newRedisLib(L, r))

	// Lua 5.1's strings share a metatable whose __index is the string
	// library (lstrlib.c createmetatable); gopher-lua makes the library its
	// own metatable, which would give string an __index field. Redis
	// protects it too.
	str := g.RawGetString("string").(*lua.LTable)
	str.RawSetString("__index", lua.LNil)
	strMeta := L.NewTable()
	strMeta.RawSetString("__index", str)
	L.SetMetatable(lua.LString(""), strMeta)
	vm.protect(strMeta)
	// Reading an unknown global is an error in Redis (luaSetErrorMetatable).
	g.Metatable = errorMetatable(L)
	g.RawSetString("_G", g)
	vm.protectReachable(g)
	vm.handler = L.NewFunction(vm.errorHandler)
	vm.renamer = L.NewFunction(func(L *lua.LState) int {
		L.Push(vm.error51(L, L.Get(1)))
		return 1
	})
	return vm
}

// luaTypeNames are type's answers, each made a Lua value once.
var luaTypeNames = func() (names [lua.LTChannel + 1]lua.LValue) {
	for t := range names {
		names[t] = lua.LString(lua.LValueType(t).String())
	}
	return names
}()

// luaType is luaB_type, gopher-lua's type without its allocation per call.
func luaType(L *lua.LState) int {
	L.Push(luaTypeNames[L.CheckAny(1).Type()])
	return 1
}

// patchLibraries brings gopher-lua's libraries in line with Lua 5.1 as
// Redis embeds it.
func (vm *luaVM) patchLibraries(r *Redis) {
	L := vm.L
	math := vm.globals.RawGetString("math").(*lua.LTable)
	math.RawSetString("huge", lua.LNumber(posInf)) // gopher-lua sets MaxFloat64
	mathNaNs(L, math)
	math.RawSetString("random", L.NewFunction(func(L *lua.LState) int { return mathRandom(L, &r.rand) }))
	math.RawSetString("randomseed", L.NewFunction(func(L *lua.LState) int {
		// luaL_checkint: a number or numeric string, cast to long then int.
		r.rand.seed(int32(cToInt64(checkNumber51(L, 1))))
		return 0
	}))
	str := vm.globals.RawGetString("string").(*lua.LTable)
	str.RawSetString("format", L.NewFunction(strFormat))
	tbl := vm.globals.RawGetString("table").(*lua.LTable)
	tbl.RawSetString("concat", L.NewFunction(tableConcat))
	// Lua 5.1's own, whose stores the table's shadow records.
	tbl.RawSetString("insert", L.NewFunction(vm.tableInsert))
	tbl.RawSetString("remove", L.NewFunction(vm.tableRemove))
	tbl.RawSetString("foreach", L.NewFunction(tableForeach(false)))
	tbl.RawSetString("foreachi", L.NewFunction(tableForeach(true)))
	tbl.RawSetString("setn", L.NewFunction(func(L *lua.LState) int {
		L.RaiseError("'setn' is obsolete")
		return 0
	}))
}

// protect makes t read-only, as lua_enablereadonlytable does: every store
// into it raises "Attempt to modify a readonly table". Its keys do not
// change any more, so with more than one its order is the one the C code
// gave it, which luatest does not reproduce: it iterates as empty
// (tableShadow.unordered).
func (vm *luaVM) protect(t *lua.LTable) {
	vm.readonly[t] = true
	if k, _ := t.Next(lua.LNil); k != lua.LNil {
		if k, _ = t.Next(k); k != lua.LNil {
			shadowOf(t).unordered = true
		}
	}
}

// protectReachable protects t, every table reachable from it and their
// metatables, as luaSetTableProtectionRecursively does for the globals.
func (vm *luaVM) protectReachable(t *lua.LTable) {
	if vm.readonly[t] {
		return
	}
	vm.protect(t)
	t.ForEach(func(_, v lua.LValue) {
		if vt, ok := v.(*lua.LTable); ok {
			vm.protectReachable(vt)
		}
	})
	if mt, ok := t.Metatable.(*lua.LTable); ok {
		vm.protectReachable(mt)
	}
}

// isReadOnly reports whether v is a read-only table.
func (vm *luaVM) isReadOnly(v lua.LValue) bool {
	t, ok := v.(*lua.LTable)
	return ok && vm.readonly[t]
}

// errReadOnly is what every store into a read-only table raises.
const errReadOnly = "Attempt to modify a readonly table"

// rawset is rawset refusing read-only tables; lua_rawset raises from C, so
// the message has no position.
func (vm *luaVM) rawset(orig lua.LGFunction) lua.LGFunction {
	return func(L *lua.LState) int {
		if vm.isReadOnly(L.Get(1)) {
			L.Error(lua.LString(errReadOnly), 0)
		}
		return orig(L)
	}
}

// rawget is rawget with luatest's helper globals (isHelperName) absent
// from the global table, as they are from the server's.
func (vm *luaVM) rawget(orig lua.LGFunction) lua.LGFunction {
	return func(L *lua.LState) int {
		if L.Get(1) == vm.globals && isHelperName(L.Get(2)) {
			L.Push(lua.LNil)
			return 1
		}
		return orig(L)
	}
}

// helperPrefix starts the name of every global luatest adds for its
// rewritten chunks (concatHelperName, setHelperName, ...).
const helperPrefix = "__luatest_"

// isHelperName reports whether k names one of luatest's helper globals.
func isHelperName(k lua.LValue) bool {
	s, ok := k.(lua.LString)
	return ok && strings.HasPrefix(string(s), helperPrefix)
}

func (vm *luaVM) setmetatable(orig lua.LGFunction) lua.LGFunction {
	return func(L *lua.LState) int {
		if vm.isReadOnly(L.Get(1)) {
			L.Error(lua.LString(errReadOnly), 0)
		}
		// luaB_setmetatable's checks, which gopher-lua's lacks.
		if _, ok := L.Get(1).(*lua.LTable); !ok {
			cTypeError(L, 1, "table")
		}
		switch L.Get(2).(type) {
		case *lua.LNilType, *lua.LTable:
		default:
			cArgError(L, 2, "nil or table expected")
		}
		return orig(L)
	}
}

// compile parses and compiles body (the shebang line already blanked) as
// the "@user_script" chunk, rewritten for Lua 5.1's semantics (lua51.go).
func compileScript(body string) (*lua.FunctionProto, *chunkInfo, error) {
	return compileChunk(body, "@"+chunkName, 0)
}

// compileChunk compiles body as lua_load would with the chunk name source
// ("@user_script" for EVAL, "@user_function" for FUNCTION LOAD, the
// loadstring argument): Lua 5.1's own parser (package internal/lua51) judges
// the syntax first, so a syntax error is a *lua51.SyntaxError worded as the server
// words it; nCcalls is the C call depth the parse starts at.
func compileChunk(body, source string, nCcalls int) (*lua.FunctionProto, *chunkInfo, error) {
	body, err := lua51.Check(body, source, nCcalls)
	if err != nil {
		return nil, nil, err
	}
	name := lua51.ChunkID(source)
	redisCalls := source == "@"+chunkName
	compile := func() (*lua.FunctionProto, *chunkInfo, error) {
		chunk, err := parse.Parse(strings.NewReader(body), name)
		if err != nil {
			return nil, nil, err
		}
		if strings.Contains(body, lua51.GotoName) {
			renameGoto(reflect.ValueOf(chunk))
		}
		info := rewriteChunk(chunk, redisCalls)
		proto, err := lua.Compile(chunk, name)
		return proto, info, err
	}
	proto, info, err := compile()
	if err != nil && redisCalls {
		// The line argument the rewritten redis.call takes is one
		// register more; a function that needs every register compiles
		// without the rewrite, as it does on the server.
		redisCalls = false
		proto, info, err = compile()
	}
	if err != nil {
		return nil, nil, err
	}
	// Lua 5.1 gives a main chunk "..." but no implicit "arg" table
	// (luaY_parser sets VARARG_ISVARARG only); gopher-lua builds one on
	// every call, which also costs an allocation-heavy table per script run.
	proto.IsVarArg &^= lua.VarArgNeedsArg
	return proto, info, nil
}

// renameGoto gives the name goto back to every identifier, field, key
// and parameter lua51.Check wrote as lua51.GotoName for gopher-lua's parser,
// which reserves goto (a name in Lua 5.1).
func renameGoto(v reflect.Value) {
	switch v.Kind() {
	case reflect.Pointer, reflect.Interface:
		if !v.IsNil() {
			renameGoto(v.Elem())
		}
	case reflect.Slice:
		for i := 0; i < v.Len(); i++ {
			renameGoto(v.Index(i))
		}
	case reflect.Struct:
		for i := 0; i < v.NumField(); i++ {
			if v.Type().Field(i).IsExported() {
				renameGoto(v.Field(i))
			}
		}
	case reflect.String:
		if v.String() == lua51.GotoName && v.CanSet() {
			v.SetString("goto")
		}
	}
}

// luaBaseError is Lua 5.1's error(message [, level]): a string or number
// message gets the position of the function at level (1, the default, is
// the caller of error; a C function there adds nothing). gopher-lua counts
// levels one short.
func luaBaseError(L *lua.LState) int {
	obj := L.Get(1)
	level := L.OptInt(2, 1)
	switch v := obj.(type) {
	case lua.LString, lua.LNumber:
		msg := luaToStr(v)
		if level > 0 {
			msg = where(L, level) + msg
		}
		L.Error(lua.LString(msg), 0)
	}
	L.Error(obj, 0)
	return 0
}

// where is luaL_where: "user_script:N: " for a Lua function at level
// (0 is the running function), "" for a C function or no such level.
func where(L *lua.LState, level int) string {
	dbg, ok := L.GetStack(level)
	if !ok {
		return ""
	}
	if _, err := L.GetInfo("Sl", dbg, lua.LNil); err != nil || dbg.What == "G" || dbg.CurrentLine <= 0 {
		return ""
	}
	return fmt.Sprintf("%s:%d: ", dbg.Source, dbg.CurrentLine)
}

// gopherArgError matches gopher-lua's "bad argument #1 to rep (...)",
// which Lua 5.1 words "bad argument #1 to 'rep' (...)".
var gopherArgError = regexp.MustCompile(`bad argument #(\d+) to ([^' (]+) \(`)

// lua51Message rewrites gopher-lua error wordings that have a fixed Lua 5.1
// equivalent.
func lua51Message(s string) string {
	if strings.Contains(s, "bad argument #") {
		s = gopherArgError.ReplaceAllString(s, "bad argument #$1 to '$2' (")
	}
	if strings.Contains(s, "for statement ") {
		s = forMessages.Replace(s)
	}
	return s
}

// forMessages are the numeric for loop's errors (lvm.c OP_FORPREP).
var forMessages = strings.NewReplacer(
	"for statement init must be a number", "'for' initial value must be a number",
	"for statement limit must be a number", "'for' limit must be a number",
	"for statement step must be a number", "'for' step must be a number")

// errorHandler is Redis' __redis__err__handler: it turns the error value
// into a table {err=..., source=..., line=...}, where a non-table error
// becomes "ERR " .. tostring(err), and source and line are those of the
// function that raised it (debug.getinfo(2)), or of its caller when that
// is a C function such as error (debug.getinfo(3)): a C function there
// too, as when string.gsub calls error, gives "=[C]" and -1, and the
// reply ends "on =[C]:-1." as on the server.
func (vm *luaVM) errorHandler(L *lua.LState) int {
	t := errorTable(L, vm.error51(L, L.Get(1)))
	if source, line, ok := vm.raisePos(L); ok {
		if vm.readonly[t] {
			// error(string): Redis' handler fails on its own store.
			L.RaiseError(errReadOnly)
		}
		// err['source'] = ...: not rawset, so a __newindex of the
		// script's own error table applies, as in Redis.
		L.SetField(t, "source", lua.LString(source))
		L.SetField(t, "line", lua.LNumber(line))
	}
	L.Push(t)
	return 1
}

// raisePos is debug.getinfo(2, 'Sl') in Redis' error handler, and
// getinfo(3) when that is a C function: the first frame below the handler
// is the function that raised (xpcall's Go handlers, which Lua 5.1 does
// not have, are skipped).
func (vm *luaVM) raisePos(L *lua.LState) (source string, line int, ok bool) {
	level := 0
	next := func() (*lua.Debug, bool) {
		for {
			level++
			dbg, ok := L.GetStack(level)
			if !ok {
				return nil, false
			}
			if fn, err := L.GetInfo("Slf", dbg, lua.LNil); err != nil {
				return nil, false
			} else if f, isFn := fn.(*lua.LFunction); isFn && vm.hiddenFrames[f] {
				continue
			}
			return dbg, true
		}
	}
	dbg, ok := next()
	if ok && dbg.What == "G" {
		dbg, ok = next()
	}
	switch {
	case !ok:
		return "", 0, false
	case dbg.What == "G":
		return "=[C]", -1, true
	case dbg.CurrentLine <= 0:
		// A frame gopher-lua keeps without a line (the main chunk
		// before its first instruction): the first Lua line below.
		if src, l := currentPos(L); l > 0 {
			return "@" + src, l, true
		}
		return "", 0, false
	}
	return "@" + dbg.Source, dbg.CurrentLine, true
}

// error51 returns an error value with a string error put in Lua 5.1's
// words (lua51Message, then rename while the erroring frame is still on
// the stack); other values are returned as they are.
func (vm *luaVM) error51(L *lua.LState, v lua.LValue) lua.LValue {
	if s, ok := v.(lua.LString); ok {
		return lua.LString(vm.rename(L, lua51Message(string(s))))
	}
	return v
}

func errorTable(L *lua.LState, v lua.LValue) *lua.LTable {
	if t, ok := v.(*lua.LTable); ok {
		return t
	}
	t := L.NewTable()
	t.RawSetString("err", lua.LString("ERR "+luaToStr(v)))
	return t
}

// luaToStr is lua_tostring/tostring for error messages.
func luaToStr(v lua.LValue) string {
	if n, ok := v.(lua.LNumber); ok {
		return numberToString(float64(n))
	}
	return v.String()
}

// callerLine returns the line of the innermost Lua function on the call
// stack of a running Go function, or 0. It starts at level 1: level 0 is
// the Go function's own frame, which has no line (each level GetStack
// reads costs an allocation, and redis.call reads this on every call).
func callerLine(L *lua.LState) int {
	_, line := currentPosFrom(L, 1)
	return line
}

// currentPos returns the chunk name ("user_script", "user_function") and
// line of the innermost Lua function on the call stack, or "", 0.
func currentPos(L *lua.LState) (string, int) { return currentPosFrom(L, 0) }

// currentPosFrom is currentPos from the given stack level up.
func currentPosFrom(L *lua.LState, from int) (string, int) {
	for level := from; ; level++ {
		dbg, ok := L.GetStack(level)
		if !ok {
			return "", 0
		}
		if _, err := L.GetInfo("Sl", dbg, lua.LNil); err != nil {
			continue
		}
		if dbg.What != "G" && dbg.CurrentLine > 0 {
			return dbg.Source, dbg.CurrentLine
		}
	}
}

// xpcall is Lua 5.1's xpcall(f, handler) with the handler seeing error
// texts in Lua 5.1's words (gopher-lua's xpcall passes its own).
func (vm *luaVM) xpcall(L *lua.LState) int {
	fn := L.CheckFunction(1)
	h := L.CheckFunction(2)
	top := L.GetTop()
	handler := L.NewFunction(func(L *lua.LState) int {
		v := vm.error51(L, L.Get(1))
		L.Push(h)
		L.Push(v)
		L.Call(1, 1)
		return 1
	})
	vm.hiddenFrames[handler] = true
	defer delete(vm.hiddenFrames, handler)
	L.Push(fn)
	if err := L.PCall(0, lua.MultRet, handler); err != nil {
		L.Push(lua.LFalse)
		if aerr, ok := err.(*lua.ApiError); ok {
			L.Push(aerr.Object)
		} else {
			L.Push(lua.LString(err.Error()))
		}
		return 2
	}
	L.Insert(lua.LTrue, top+1)
	return L.GetTop() - top
}

// pcall is Redis' replacement for pcall (script_lua.c): when the
// error is a table with a string err field, pcall returns that string.
// Error texts are put in Lua 5.1's words while the erroring frame is
// still there to read.
func (vm *luaVM) pcall(L *lua.LState) int {
	n := L.GetTop()
	if n == 0 {
		L.ArgError(1, "value expected")
	}
	err := L.PCall(n-1, lua.MultRet, vm.renamer)
	if err == nil {
		L.Insert(lua.LTrue, 1)
		return L.GetTop()
	}
	v := err.(*lua.ApiError).Object
	if s, ok := v.(lua.LString); ok {
		v = lua.LString(lua51Message(string(s)))
	}
	if t, ok := v.(*lua.LTable); ok {
		if s, ok := t.RawGetString("err").(lua.LString); ok {
			v = s
		}
	}
	L.Push(lua.LFalse)
	L.Push(v)
	return 2
}
