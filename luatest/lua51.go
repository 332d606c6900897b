package luatest

import (
	"fmt"
	"math"
	"regexp"
	"slices"
	"strconv"
	"strings"

	lua "github.com/yuin/gopher-lua"
	"github.com/yuin/gopher-lua/ast"

	"github.com/luagen/luagen/internal/lua51"
)

// Lua 5.1 semantics that gopher-lua's compiler and VM do not give, put
// back by rewriting the parsed chunk before it is compiled and by reading
// the chunk again when an error is raised:
//
//   - the .. operator converts numbers with "%.14g" (gopher-lua uses Go's
//     shortest form): every concatenation that can see a number becomes a
//     call of concatHelper, which also raises Lua 5.1's "attempt to
//     concatenate local 'x' (a nil value)";
//   - the % operator is Lua 5.1's a - floor(a/b)*b, not fmod: every a % b
//     becomes a call of modHelper;
//   - runtime errors name the variable, field, upvalue or method involved
//     ("attempt to index field 'a' (a nil value)"): the chunk's scopes are
//     resolved once, and an error message is rewritten from the operations
//     the error's line holds (see luaVM.rename).
//
// Forking gopher-lua would have meant carrying a patched VM (stringConcat,
// opArith, the index and call paths) and its number formatting, merged
// by hand at every upstream release; the rewrite keeps gopher-lua as it is.

// concatHelperName is the global the rewritten chunks call for "..". Redis
// itself keeps a helper global (__redis__err__handler) the same way.
const concatHelperName = "__luatest_concat"

// opKind is an operation that Lua 5.1 names its operand for in errors.
type opKind int

const (
	opIndex opKind = iota
	opCall
	opArith
	opLen
)

// opSite is one operation of a chunk: its line, what Lua 5.1 calls its
// operand ("local 'x'", "field 'k'", "" when unnamed) and the operand's
// expression, which luaVM.evalAt reads in the erroring frame.
type opSite struct {
	kind opKind
	line int
	desc string
	key  string // opIndex: the constant key; "" when computed
	op   string // opArith: add, sub, ..., "unm"
	expr ast.Expr
	// For opArith the second operand (nil for unary minus).
	expr2 ast.Expr
	desc2 string
}

// chunkInfo is what the error renaming knows of a compiled chunk.
type chunkInfo struct {
	sites map[int][]opSite
}

// scope resolves names the way Lua 5.1's parser does: locals of the
// running function, upvalues from enclosing functions, else globals.
type scope struct {
	fn     *funcScope
	locals []string
	parent *scope // enclosing block of the same function
}

// funcScope is one function of the chunk: a name found in an enclosing
// function's blocks is an upvalue.
type funcScope struct {
	outer *scope // the block the function is defined in
}

// lookup says what Lua 5.1 calls name here: "local", "upvalue" or
// "global".
func (s *scope) lookup(name string) string {
	kind := "local"
	for s != nil {
		fn := s.fn
		for b := s; b != nil; b = b.parent {
			for i := len(b.locals) - 1; i >= 0; i-- {
				if b.locals[i] == name {
					return kind
				}
			}
		}
		s, kind = fn.outer, "upvalue"
	}
	return "global"
}

// rewriter walks a chunk: it resolves names, records opSites and replaces
// concatenations with calls of the helper.
type rewriter struct {
	info *chunkInfo
	// redisCalls turns redis.call(...) and redis.pcall(...) into calls
	// of the helpers that take their line (redisCall): set for an EVAL
	// script, whose redis is always the read-only library.
	redisCalls bool
}

// rewriteChunk prepares a parsed chunk for Lua 5.1 behaviour under
// gopher-lua and returns what error renaming needs; redisCalls is
// rewriter.redisCalls.
func rewriteChunk(chunk []ast.Stmt, redisCalls bool) *chunkInfo {
	rw := &rewriter{info: &chunkInfo{sites: map[int][]opSite{}}, redisCalls: redisCalls}
	top := &scope{fn: &funcScope{}}
	rw.block(top, chunk)
	return rw.info
}

func (rw *rewriter) add(s opSite) { rw.info.sites[s.line] = append(rw.info.sites[s.line], s) }

func (rw *rewriter) block(s *scope, stmts []ast.Stmt) *scope {
	for i, st := range stmts {
		s, stmts[i] = rw.stmt(s, st)
	}
	return s
}

// stmt handles one statement and returns the scope after it (a local
// declaration opens a new one) and the statement or its replacement.
func (rw *rewriter) stmt(s *scope, st ast.Stmt) (*scope, ast.Stmt) {
	switch st := st.(type) {
	case *ast.AssignStmt:
		rw.exprs(s, st.Rhs)
		rewrite := false
		for _, e := range st.Lhs {
			if a, ok := e.(*ast.AttrGetExpr); ok {
				rw.index(s, a)
				rewrite = true
			} else if isGlobal(s, e) {
				rewrite = true
			}
		}
		if rewrite {
			return s, store(s, st)
		}
	case *ast.LocalAssignStmt:
		inner := &scope{fn: s.fn, locals: append([]string(nil), st.Names...), parent: s}
		if len(st.Names) == 1 && len(st.Exprs) == 1 {
			if f, ok := st.Exprs[0].(*ast.FunctionExpr); ok {
				// "local function f" (and, as gopher-lua compiles it,
				// "local f = function"): f is visible in its body.
				rw.function(inner, f, false)
				return inner, st
			}
		}
		rw.exprs(s, st.Exprs)
		return inner, st
	case *ast.FuncCallStmt:
		st.Expr = rw.expr(s, st.Expr)
	case *ast.DoBlockStmt:
		rw.block(&scope{fn: s.fn, parent: s}, st.Stmts)
	case *ast.WhileStmt:
		st.Condition = rw.expr(s, st.Condition)
		rw.block(&scope{fn: s.fn, parent: s}, st.Stmts)
	case *ast.RepeatStmt:
		inner := rw.block(&scope{fn: s.fn, parent: s}, st.Stmts)
		st.Condition = rw.expr(inner, st.Condition)
	case *ast.IfStmt:
		st.Condition = rw.expr(s, st.Condition)
		rw.block(&scope{fn: s.fn, parent: s}, st.Then)
		rw.block(&scope{fn: s.fn, parent: s}, st.Else)
	case *ast.NumberForStmt:
		st.Init = forNumber(rw.expr(s, st.Init))
		st.Limit = forNumber(rw.expr(s, st.Limit))
		if st.Step != nil {
			st.Step = forNumber(rw.expr(s, st.Step))
		}
		rw.block(&scope{fn: s.fn, locals: []string{st.Name}, parent: s}, st.Stmts)
	case *ast.GenericForStmt:
		rw.exprs(s, st.Exprs)
		rw.block(&scope{fn: s.fn, locals: append([]string(nil), st.Names...), parent: s}, st.Stmts)
	case *ast.FuncDefStmt:
		if st.Name.Func != nil {
			if a, ok := st.Name.Func.(*ast.AttrGetExpr); ok {
				rw.index(s, a)
			}
		} else {
			st.Name.Receiver = rw.expr(s, st.Name.Receiver)
		}
		method := st.Name.Method != ""
		rw.function(s, st.Func, method)
		return s, funcDefStore(s, st)
	case *ast.ReturnStmt:
		rw.exprs(s, st.Exprs)
	}
	return s, st
}

// store replaces an assignment with an indexed target or a global name
// target by a call of a store helper (lua_store.go), which records the
// stores for the tables' shadows and refuses stores into read-only
// tables. Lua 5.1 evaluates the targets' tables and keys left to right,
// then the values, then stores from the last target to the first; a
// table or key that is a local (or a constant) is read at the store. A
// single target whose table and key are both such goes to
// __luatest_setl(values..., t, k), any other to __luatest_set(t, k,
// values...), a global name to __luatest_setg(values...), which raises; a
// multiple assignment to __luatest_setn(layout, tables and keys...,
// values...), which returns the values of its name targets for the VM to
// assign after the indexed stores, followed by __luatest_setg() when a
// target is a global name.
func store(s *scope, st *ast.AssignStmt) ast.Stmt {
	if len(st.Lhs) == 1 {
		a, ok := st.Lhs[0].(*ast.AttrGetExpr)
		if !ok {
			return callStmt(st, helperCall(setGlobalHelperName, st.Lhs[0], st.Rhs...))
		}
		var call ast.Expr
		if readAtStore(s, a.Object) && readAtStore(s, a.Key) {
			call = helperCall(setLateHelperName, a, append(slices.Clone(st.Rhs), a.Object, a.Key)...)
		} else {
			call = helperCall(setHelperName, a, append([]ast.Expr{a.Object, a.Key}, st.Rhs...)...)
		}
		return callStmt(st, call)
	}
	var layout []byte
	var names, args []ast.Expr
	for _, e := range st.Lhs {
		if a, ok := e.(*ast.AttrGetExpr); ok {
			layout = append(layout, 'i')
			args = append(args, a.Object, a.Key)
		} else if isGlobal(s, e) {
			// The store raises here: no name to its left is assigned.
			layout = append(layout, 'g')
			names = names[:0]
		} else {
			layout = append(layout, 'n')
			names = append(names, e)
		}
	}
	d := &ast.StringExpr{Value: string(layout)}
	d.SetLine(st.Lhs[0].Line())
	call := helperCall(setMultiHelperName, st.Lhs[0], append(append([]ast.Expr{d}, args...), st.Rhs...)...)
	var stmt ast.Stmt
	if len(names) == 0 {
		stmt = callStmt(st, call)
	} else {
		call.(*ast.FuncCallExpr).AdjustRet = false
		a := &ast.AssignStmt{Lhs: names, Rhs: []ast.Expr{call}}
		a.SetLine(st.Line())
		a.SetLastLine(st.LastLine())
		stmt = a
	}
	if !slices.Contains(layout, 'g') {
		return stmt
	}
	raise := callStmt(st, helperCall(setGlobalHelperName, st.Lhs[0]))
	do := &ast.DoBlockStmt{Stmts: []ast.Stmt{stmt, raise}}
	do.SetLine(st.Line())
	do.SetLastLine(st.LastLine())
	return do
}

// isGlobal reports whether the assignment target e is a global name.
func isGlobal(s *scope, e ast.Expr) bool {
	id, ok := e.(*ast.IdentExpr)
	return ok && s.lookup(id.Value) == "global"
}

// readAtStore reports whether Lua 5.1 reads e when it stores rather than
// before the values are evaluated: a local of the running function (its
// register) or a constant.
func readAtStore(s *scope, e ast.Expr) bool {
	switch e := e.(type) {
	case *ast.IdentExpr:
		return s.lookup(e.Value) == "local"
	case *ast.StringExpr, *ast.NumberExpr, *ast.NilExpr, *ast.TrueExpr, *ast.FalseExpr:
		return true
	}
	return false
}

// funcDefStore replaces "function t.a.b()" and "function t:m()" (a store
// into a table) with a store helper call, and "function f()" for a global
// f with a call of __luatest_setg on the line of "function", where Lua 5.1
// puts the store (funcstat's luaK_fixline); for a local or upvalue f it
// stays.
func funcDefStore(s *scope, st *ast.FuncDefStmt) ast.Stmt {
	var obj, key ast.Expr
	if st.Name.Func != nil {
		a, ok := st.Name.Func.(*ast.AttrGetExpr)
		if !ok {
			if !isGlobal(s, st.Name.Func) {
				return st
			}
			call := helperCall(setGlobalHelperName, st.Name.Func, st.Func)
			call.SetLine(st.Line())
			return callStmt(st, call)
		}
		obj, key = a.Object, a.Key
	} else {
		// gopher-lua's compiler adds self to a method; as a function
		// expression it is a parameter like the others.
		obj = st.Name.Receiver
		k := &ast.StringExpr{Value: st.Name.Method}
		k.SetLine(obj.Line())
		key = k
		st.Func.ParList.Names = append([]string{"self"}, st.Func.ParList.Names...)
	}
	at := obj
	if st.Name.Func != nil {
		at = st.Name.Func
	}
	return callStmt(st, helperCall(setHelperName, at, obj, key, st.Func))
}

// callStmt is call as a statement in st's place.
func callStmt(st ast.Stmt, call ast.Expr) ast.Stmt {
	c := &ast.FuncCallStmt{Expr: call}
	c.SetLine(st.Line())
	c.SetLastLine(st.LastLine())
	return c
}

func (rw *rewriter) function(s *scope, f *ast.FunctionExpr, method bool) {
	var params []string
	if method {
		params = append(params, "self")
	}
	params = append(params, f.ParList.Names...)
	if f.ParList.HasVargs {
		// Lua 5.1 (LUA_COMPAT_VARARG) gives every vararg function but the
		// main chunk a local arg (lparser.c parlist).
		params = append(params, "arg")
	}
	rw.block(&scope{fn: &funcScope{outer: s}, locals: params}, f.Stmts)
}

func (rw *rewriter) exprs(s *scope, es []ast.Expr) {
	for i, e := range es {
		es[i] = rw.expr(s, e)
	}
}

// redisCall turns e, when it is redis.call(args) or redis.pcall(args)
// with redis the global and the rewriter's redisCalls set, into
// __luatest_rcall(line, args) or __luatest_rpcall(line, args), and
// reports whether it did. The helpers are redis.call and redis.pcall
// told the line of their call for the call log (Call.Line), which
// redis.call would otherwise read from the call stack, an allocation per
// call. Nothing else can tell them apart: redis is read-only and its
// call and pcall functions, and neither can fail to be called, so the
// call has no operation site for error texts.
func (rw *rewriter) redisCall(s *scope, e *ast.FuncCallExpr) bool {
	if !rw.redisCalls || e.Receiver != nil {
		return false
	}
	a, ok := e.Func.(*ast.AttrGetExpr)
	if !ok {
		return false
	}
	obj, ok := a.Object.(*ast.IdentExpr)
	key, isStr := a.Key.(*ast.StringExpr)
	if !ok || !isStr || obj.Value != "redis" || s.lookup("redis") != "global" {
		return false
	}
	name := redisCallHelperName
	switch key.Value {
	case "call":
	case "pcall":
		name = redisPcallHelperName
	default:
		return false
	}
	if s.lookup(name) != "global" {
		return false // a script's own local of that name
	}
	fn := &ast.IdentExpr{Value: name}
	fn.SetLine(e.Func.Line())
	fn.SetLastLine(e.Func.LastLine())
	line := &ast.NumberExpr{Value: strconv.Itoa(e.Line())}
	line.SetLine(e.Line())
	line.SetLastLine(e.Line())
	e.Func = fn
	e.Args = append([]ast.Expr{line}, e.Args...)
	return true
}

// redisCallHelperName and redisPcallHelperName are the globals redisCall
// calls: redis.call and redis.pcall with the line of the call first.
const (
	redisCallHelperName  = "__luatest_rcall"
	redisPcallHelperName = "__luatest_rpcall"
)

// describe is what Lua 5.1's getobjname calls an operand.
func describe(s *scope, e ast.Expr) string {
	switch e := e.(type) {
	case *ast.IdentExpr:
		return s.lookup(e.Value) + " '" + e.Value + "'"
	case *ast.AttrGetExpr:
		if k, ok := e.Key.(*ast.StringExpr); ok {
			return "field '" + k.Value + "'"
		}
	}
	return ""
}

func (rw *rewriter) index(s *scope, a *ast.AttrGetExpr) {
	a.Object = rw.expr(s, a.Object)
	a.Key = rw.expr(s, a.Key)
	key := ""
	if k, ok := a.Key.(*ast.StringExpr); ok {
		key = k.Value
	}
	rw.add(opSite{kind: opIndex, line: a.Line(), desc: describe(s, a.Object), key: key, expr: a.Object})
}

// expr rewrites e's subexpressions and returns e or its replacement.
func (rw *rewriter) expr(s *scope, e ast.Expr) ast.Expr {
	switch e := e.(type) {
	case *ast.AttrGetExpr:
		rw.index(s, e)
	case *ast.TableExpr:
		for _, f := range e.Fields {
			if f.Key != nil {
				f.Key = rw.expr(s, f.Key)
			}
			f.Value = rw.expr(s, f.Value)
		}
		if len(e.Fields) > 0 {
			// The sizes and field order Lua 5.1's layout of the table
			// follows (lua_table.go).
			d := &ast.StringExpr{Value: consDescOf(e)}
			d.SetLine(e.Line())
			for _, f := range e.Fields {
				if f.Key != nil && keyDesc(f.Key) == "?" {
					// Its value is recorded as the field is evaluated.
					f.Key = helperCall(keyHelperName, f.Key, f.Key)
					f.Value = helperCall(valHelperName, f.Value, f.Value)
				}
			}
			return helperCall(tableHelperName, e, d, e)
		}
	case *ast.FuncCallExpr:
		if rw.redisCall(s, e) {
			rw.exprs(s, e.Args[1:])
			return e
		}
		if e.Receiver != nil {
			e.Receiver = rw.expr(s, e.Receiver)
			rw.add(opSite{kind: opIndex, line: e.Line(), desc: describe(s, e.Receiver), key: e.Method, expr: e.Receiver})
			rw.add(opSite{kind: opCall, line: e.Line(), desc: "method '" + e.Method + "'"})
		} else {
			e.Func = rw.expr(s, e.Func)
			rw.add(opSite{kind: opCall, line: e.Line(), desc: describe(s, e.Func), expr: e.Func})
		}
		rw.exprs(s, e.Args)
	case *ast.LogicalOpExpr:
		e.Lhs, e.Rhs = rw.expr(s, e.Lhs), rw.expr(s, e.Rhs)
	case *ast.RelationalOpExpr:
		e.Lhs, e.Rhs = rw.expr(s, e.Lhs), rw.expr(s, e.Rhs)
	case *ast.ArithmeticOpExpr:
		e.Lhs, e.Rhs = rw.expr(s, e.Lhs), rw.expr(s, e.Rhs)
		if e.Operator == "%" {
			return modulo(s, e)
		}
		rw.add(opSite{kind: opArith, line: e.Line(), op: arithEvent[e.Operator],
			desc: describe(s, e.Lhs), expr: e.Lhs, desc2: describe(s, e.Rhs), expr2: e.Rhs})
	case *ast.UnaryMinusOpExpr:
		e.Expr = rw.expr(s, e.Expr)
		rw.add(opSite{kind: opArith, line: e.Line(), op: "unm", desc: describe(s, e.Expr), expr: e.Expr})
	case *ast.UnaryNotOpExpr:
		e.Expr = rw.expr(s, e.Expr)
	case *ast.UnaryLenOpExpr:
		e.Expr = rw.expr(s, e.Expr)
		rw.add(opSite{kind: opLen, line: e.Line(), desc: describe(s, e.Expr), expr: e.Expr})
	case *ast.FunctionExpr:
		rw.function(s, e, false)
	case *ast.StringConcatOpExpr:
		return rw.concat(s, e)
	}
	return e
}

// forNumber wraps a numeric for's init, limit or step in a call of
// forNumberHelper unless it is a number literal: Lua 5.1 (OP_FORPREP)
// accepts numeric strings there, gopher-lua does not.
func forNumber(e ast.Expr) ast.Expr {
	switch e := e.(type) {
	case *ast.NumberExpr:
		return e
	case *ast.UnaryMinusOpExpr:
		if _, ok := e.Expr.(*ast.NumberExpr); ok {
			return e
		}
	}
	return helperCall(forNumberHelperName, e, e)
}

// helperCall is the call name(args...) on at's lines: how the rewritten
// chunks call their helpers, so errors and the call log keep the lines of
// the expression replaced.
func helperCall(name string, at ast.Expr, args ...ast.Expr) ast.Expr {
	fn := &ast.IdentExpr{Value: name}
	fn.SetLine(at.Line())
	call := &ast.FuncCallExpr{Func: fn, Args: args, AdjustRet: true}
	call.SetLine(at.Line())
	call.SetLastLine(at.LastLine())
	return call
}

// forNumberHelperName is the global forNumber calls.
const forNumberHelperName = "__luatest_fornum"

// forNumberHelper converts a numeric string to its number (luaV_tonumber)
// and returns anything else as it is, for the loop to refuse.
func forNumberHelper(L *lua.LState) int {
	v := L.Get(1)
	if f, ok := arithNumber(v); ok {
		v = lua.LNumber(f)
	}
	L.Push(v)
	return 1
}

// modHelperName is the global the rewritten chunks call for "%".
const modHelperName = "__luatest_mod"

// modulo replaces a % b with modHelper("desc\0desc", a, b): gopher-lua
// computes % with fmod (and folds constants with it), Lua 5.1 as
// a - floor(a/b)*b, which differs for an infinite operand, a zero divisor
// (the CPU's default NaN, printed "-nan") and large quotients.
func modulo(s *scope, e *ast.ArithmeticOpExpr) ast.Expr {
	d := &ast.StringExpr{Value: describe(s, e.Lhs) + "\x00" + describe(s, e.Rhs)}
	d.SetLine(e.Line())
	return helperCall(modHelperName, e, d, e.Lhs, e.Rhs)
}

// modHelper is Arith for OP_MOD (lvm.c): two numbers, or strings
// luaV_tonumber converts, give luai_nummod; otherwise the __mod
// metamethod of either operand, or luaG_aritherror naming the first
// operand that is not a number.
func modHelper(L *lua.LState) int {
	descs := strings.SplitN(L.CheckString(1), "\x00", 2)
	a, b := L.Get(2), L.Get(3)
	x, okA := arithNumber(a)
	y, okB := arithNumber(b)
	if okA && okB {
		// luai_nummod; the conversion keeps Go from fusing the
		// multiply and subtract, which C does not do either.
		L.Push(lua.LNumber(x - float64(math.Floor(x/y)*y)))
		return 1
	}
	v, ok := callBinTM(L, a, b, "__mod")
	if !ok {
		bad, desc := b, descs[len(descs)-1]
		if !okA {
			bad, desc = a, descs[0]
		}
		cError(L, "%s", typeError(bad, desc, "perform arithmetic on"))
	}
	L.Push(v)
	return 1
}

// callBinTM is call_binTM (lvm.c): the event's metamethod of a, else of
// b, called with a and b; ok is false when neither has one.
func callBinTM(L *lua.LState, a, b lua.LValue, event string) (v lua.LValue, ok bool) {
	tm := L.GetMetaField(a, event)
	if tm == lua.LNil {
		tm = L.GetMetaField(b, event)
	}
	if tm == lua.LNil {
		return lua.LNil, false
	}
	L.Push(tm)
	L.Push(a)
	L.Push(b)
	L.Call(2, 1)
	v = L.Get(-1)
	L.Pop(1)
	return v, true
}

// arithNumber is luaV_tonumber: a number, or a string strtod reads whole.
func arithNumber(v lua.LValue) (float64, bool) {
	switch v := v.(type) {
	case lua.LNumber:
		return float64(v), true
	case lua.LString:
		return lua51.Str2d(string(v))
	}
	return 0, false
}

var arithEvent = map[string]string{"+": "add", "-": "sub", "*": "mul", "/": "div", "%": "mod", "^": "pow"}

// concat replaces a chain a .. b .. c with concatHelper("desc\0desc\0desc",
// a, b, c); a chain of string literals alone stays as it is.
func (rw *rewriter) concat(s *scope, e *ast.StringConcatOpExpr) ast.Expr {
	var operands []ast.Expr
	var cur ast.Expr = e
	for {
		c, ok := cur.(*ast.StringConcatOpExpr)
		if !ok {
			operands = append(operands, cur)
			break
		}
		operands = append(operands, c.Lhs)
		cur = c.Rhs
	}
	literal := true
	descs := make([]string, len(operands))
	for i, o := range operands {
		operands[i] = rw.expr(s, o)
		descs[i] = describe(s, operands[i])
		if _, ok := operands[i].(*ast.StringExpr); !ok {
			literal = false
		}
	}
	if literal {
		return e
	}
	d := &ast.StringExpr{Value: strings.Join(descs, "\x00")}
	d.SetLine(e.Line())
	return helperCall(concatHelperName, e, append([]ast.Expr{d}, operands...)...)
}

func isStrNum(v lua.LValue) bool {
	switch v.(type) {
	case lua.LString, lua.LNumber:
		return true
	}
	return false
}

func strNum(v lua.LValue) string {
	if n, ok := v.(lua.LNumber); ok {
		return numberToString(float64(n))
	}
	return string(v.(lua.LString))
}

// concatHelper is luaV_concat: from the right, runs of strings and
// numbers (numbers as "%.14g") are joined; any other pair goes to a
// __concat metamethod or fails naming the operand as Lua 5.1 does.
func concatHelper(L *lua.LState) int {
	n := L.GetTop() - 1
	if n >= 2 && concatStrNums(L, n) {
		return 1
	}
	if n < 0 {
		n = 0
	}
	descs := make([]string, n)
	copy(descs, strings.Split(L.CheckString(1), "\x00"))
	vals := make([]lua.LValue, n)
	for i := range vals {
		vals[i] = L.Get(i + 2)
	}
	top := n - 1
	for top > 0 {
		a, b := vals[top-1], vals[top]
		if isStrNum(a) && isStrNum(b) {
			j := top
			for j >= 0 && isStrNum(vals[j]) {
				j--
			}
			var sb strings.Builder
			for k := j + 1; k <= top; k++ {
				sb.WriteString(strNum(vals[k]))
			}
			vals[j+1] = lua.LString(sb.String())
			descs[j+1] = ""
			top = j + 1
			continue
		}
		v, ok := callBinTM(L, a, b, "__concat")
		if !ok {
			bad, desc := a, descs[top-1]
			if isStrNum(a) {
				bad, desc = b, descs[top]
			}
			cError(L, "%s", typeError(bad, desc, "concatenate"))
		}
		vals[top-1] = v
		descs[top-1] = ""
		top--
	}
	if n == 0 {
		return 0
	}
	L.Push(vals[0])
	return 1
}

// concatStrNums is concatHelper's common case: when its n operands are all
// strings and numbers, Lua 5.1 joins them in one run, and so does this,
// with one allocation for the result. It reports false, pushing nothing,
// when an operand is of another type.
func concatStrNums(L *lua.LState, n int) bool {
	size := 0
	for i := 2; i <= n+1; i++ {
		switch v := L.Get(i).(type) {
		case lua.LString:
			size += len(v)
		case lua.LNumber:
			size += 24
		default:
			return false
		}
	}
	var sb strings.Builder
	sb.Grow(size)
	var num [24]byte
	for i := 2; i <= n+1; i++ {
		switch v := L.Get(i).(type) {
		case lua.LString:
			sb.WriteString(string(v))
		case lua.LNumber:
			sb.Write(appendNumber(num[:0], float64(v)))
		}
	}
	L.Push(lua.LString(sb.String()))
	return true
}

// typeError is luaG_typeerror's text.
func typeError(v lua.LValue, desc, op string) string {
	if desc != "" {
		return fmt.Sprintf("attempt to %s %s (a %s value)", op, desc, v.Type().String())
	}
	return fmt.Sprintf("attempt to %s a %s value", op, v.Type().String())
}

var (
	gopherIndexError   = regexp.MustCompile(`^(.*?)attempt to index a non-table object\((\w+)\) with key '(.*)'$`)
	gopherCallError    = regexp.MustCompile(`^(.*?)attempt to call a non-function object$`)
	gopherArithError   = regexp.MustCompile(`^(.*?)cannot perform (\w+) operation between (\w+) and (\w+)$`)
	gopherUnmError     = regexp.MustCompile(`^(.*?)__unm undefined$`)
	gopherLenError     = regexp.MustCompile(`^(.*?)__len undefined$`)
	gopherCompareError = regexp.MustCompile(`^(.*?)attempt to compare (\w+) with (\w+)$`)
)

// rename rewrites a gopher-lua runtime error message into Lua 5.1's
// wording, naming the operand from the sites of the erroring line. It
// runs while the erroring frame is still on the stack (in the error
// handler or pcall), so it can read the frame's locals and upvalues to
// tell candidates on the same line apart.
func (vm *luaVM) rename(L *lua.LState, msg string) string {
	if m := gopherCompareError.FindStringSubmatch(msg); m != nil {
		if m[2] == m[3] {
			return m[1] + "attempt to compare two " + m[2] + " values"
		}
		return msg
	}
	frame, info, line := vm.errorFrame(L)
	es := &errorSites{vm: vm, L: L, frame: frame, info: info, line: line}
	if m := gopherIndexError.FindStringSubmatch(msg); m != nil {
		return es.renameIndex(m)
	}
	if m := gopherCallError.FindStringSubmatch(msg); m != nil {
		return es.renameCall(msg, m)
	}
	if m := gopherArithError.FindStringSubmatch(msg); m != nil {
		return es.renameArith(m)
	}
	return es.renameUnary(msg)
}

// errorSites is the erroring frame of a runtime error, its chunk and its
// line, whose operation sites rename names the operand from.
type errorSites struct {
	vm    *luaVM
	L     *lua.LState
	frame *lua.Debug
	info  *chunkInfo
	line  int
}

// pick returns the operand and its description among the line's sites of
// kind that match: those whose value match could evaluate first, else the
// rest, and ok only when all of them describe it alike.
func (es *errorSites) pick(kind opKind, match func(opSite) (lua.LValue, string, bool)) (lua.LValue, string, bool) {
	if es.info == nil {
		return nil, "", false
	}
	type cand struct {
		v    lua.LValue
		desc string
	}
	var sure, unsure []cand
	for _, s := range es.info.sites[es.line] {
		if s.kind != kind {
			continue
		}
		v, desc, ok := match(s)
		switch {
		case !ok:
		case v != nil:
			sure = append(sure, cand{v, desc})
		default:
			unsure = append(unsure, cand{nil, desc})
		}
	}
	for _, cs := range [][]cand{sure, unsure} {
		if len(cs) == 0 {
			continue
		}
		for _, c := range cs[1:] {
			if c.desc != cs[0].desc {
				return nil, "", false
			}
		}
		return cs[0].v, cs[0].desc, true
	}
	return nil, "", false
}

// eval evaluates e in the erroring frame, when it can.
func (es *errorSites) eval(e ast.Expr) (lua.LValue, bool) { return es.vm.evalAt(es.L, es.frame, e) }

// renameIndex words gopherIndexError's match m as Lua 5.1 does.
func (es *errorSites) renameIndex(m []string) string {
	typ, key := m[2], m[3]
	_, desc, ok := es.pick(opIndex, func(s opSite) (lua.LValue, string, bool) {
		if s.key != "" && s.key != key {
			return nil, "", false
		}
		if v, ok := es.eval(s.expr); ok {
			return v, s.desc, v.Type().String() == typ
		}
		return nil, s.desc, true
	})
	if !ok {
		desc = ""
	}
	return m[1] + typeErrorName(typ, desc, "index")
}

// renameCall words gopherCallError's match m of msg as Lua 5.1 does, or
// leaves msg as it is when no site tells what was called.
func (es *errorSites) renameCall(msg string, m []string) string {
	v, desc, ok := es.pick(opCall, func(s opSite) (lua.LValue, string, bool) {
		if s.expr == nil {
			return nil, s.desc, true
		}
		if v, ok := es.eval(s.expr); ok {
			_, isFn := v.(*lua.LFunction)
			return v, s.desc, !isFn && es.L.GetMetaField(v, "__call") == lua.LNil
		}
		return nil, s.desc, true
	})
	if !ok {
		return msg
	}
	typ := "nil"
	if v != nil {
		typ = v.Type().String()
	}
	return m[1] + typeErrorName(typ, desc, "call")
}

// renameArith words gopherArithError's match m as Lua 5.1 does, naming
// the operand that is no number (the left one when both are not).
func (es *errorSites) renameArith(m []string) string {
	op, lt, rt := m[2], m[3], m[4]
	left := lt != "number"
	typ := rt
	if left {
		typ = lt
	}
	_, desc, ok := es.pick(opArith, func(s opSite) (lua.LValue, string, bool) {
		if s.op != op {
			return nil, "", false
		}
		e, d := s.expr2, s.desc2
		if left {
			e, d = s.expr, s.desc
		}
		if v, ok := es.eval(e); ok {
			return v, d, v.Type().String() == typ
		}
		return nil, d, true
	})
	if !ok {
		desc = ""
	}
	return m[1] + typeErrorName(typ, desc, "perform arithmetic on")
}

// renameUnary words gopher-lua's unary minus and length errors in msg as
// Lua 5.1 does, or leaves msg as it is when it is neither or no site tells
// the operand.
func (es *errorSites) renameUnary(msg string) string {
	for _, u := range []struct {
		re   *regexp.Regexp
		kind opKind
		verb string
	}{{gopherUnmError, opArith, "perform arithmetic on"}, {gopherLenError, opLen, "get length of"}} {
		m := u.re.FindStringSubmatch(msg)
		if m == nil {
			continue
		}
		v, desc, ok := es.pick(u.kind, func(s opSite) (lua.LValue, string, bool) {
			if u.kind == opArith && s.op != "unm" {
				return nil, "", false
			}
			if v, ok := es.eval(s.expr); ok {
				return v, s.desc, true
			}
			return nil, s.desc, true
		})
		if !ok || v == nil {
			return msg
		}
		return m[1] + typeErrorName(v.Type().String(), desc, u.verb)
	}
	return msg
}

func typeErrorName(typ, desc, op string) string {
	if desc != "" {
		return fmt.Sprintf("attempt to %s %s (a %s value)", op, desc, typ)
	}
	return fmt.Sprintf("attempt to %s a %s value", op, typ)
}

// errorFrame finds the innermost Lua frame, the chunk it belongs to and
// its current line.
func (vm *luaVM) errorFrame(L *lua.LState) (*lua.Debug, *chunkInfo, int) {
	for level := 0; ; level++ {
		dbg, ok := L.GetStack(level)
		if !ok {
			return nil, nil, 0
		}
		f, err := L.GetInfo("Slf", dbg, lua.LNil)
		if err != nil {
			continue
		}
		fn, _ := f.(*lua.LFunction)
		if dbg.What == "G" || dbg.CurrentLine <= 0 || fn == nil {
			continue
		}
		return dbg, vm.chunks[fn.Proto], dbg.CurrentLine
	}
}

// evalAt evaluates a name or a constant-key field access in frame,
// without side effects (no metamethods but __index tables, such as a
// function library's globals have); ok is false for anything else.
func (vm *luaVM) evalAt(L *lua.LState, frame *lua.Debug, e ast.Expr) (lua.LValue, bool) {
	if frame == nil || e == nil {
		return nil, false
	}
	switch e := e.(type) {
	case *ast.IdentExpr:
		fnv, err := L.GetInfo("f", frame, lua.LNil)
		fn, _ := fnv.(*lua.LFunction)
		if err != nil || fn == nil || fn.IsG {
			return nil, false
		}
		if reg, ok := localRegister(L, frame, fn, e.Value); ok {
			_, v := L.GetLocal(frame, reg)
			return v, true
		}
		for i := 1; i <= len(fn.Upvalues); i++ {
			if name, v := L.GetUpvalue(fn, i); name == e.Value {
				return v, true
			}
		}
		return vm.rawIndex(vm.globals, lua.LString(e.Value)), true
	case *ast.AttrGetExpr:
		k, ok := e.Key.(*ast.StringExpr)
		if !ok {
			return nil, false
		}
		obj, ok := vm.evalAt(L, frame, e.Object)
		if !ok {
			return nil, false
		}
		t, isTable := obj.(*lua.LTable)
		if !isTable {
			return nil, false
		}
		return vm.rawIndex(t, lua.LString(k.Value)), true
	}
	return nil, false
}

// localRegister returns the register (1-based, as GetLocal numbers them)
// of the innermost active local called name at the instruction a Lua frame
// is running, or ok false when that is not certain.
//
// The instruction's index is private to gopher-lua (Debug.frame.Pc), and
// its own GetLocal counts a local as active one instruction late
// (LocalName tests StartPc < pc where Lua 5.1 tests <=), which misses the
// local an error names in "local t = nil; t.x = 1". So the instruction is
// found with public data only: it is on frame.CurrentLine, it is one that
// can raise an error, and the names GetLocal reports are exactly those
// LocalName's rule gives there. Among the instructions left (one, nearly
// always), the answer must agree.
func localRegister(L *lua.LState, frame *lua.Debug, fn *lua.LFunction, name string) (int, bool) {
	var reported []string
	for n := 1; ; n++ {
		nm, _ := L.GetLocal(frame, n)
		if nm == "" || nm == "(*temporary)" {
			break
		}
		reported = append(reported, nm)
	}
	p := fn.Proto
	reg, found := 0, false
	for pc, line := range p.DbgSourcePositions {
		if line != frame.CurrentLine || pc >= len(p.Code) || !mayRaise(p.Code[pc]) ||
			!slices.Equal(activeLocals(p, pc, false), reported) {
			continue
		}
		r := 0
		for i, n := range activeLocals(p, pc, true) {
			if n == name {
				r = i + 1
			}
		}
		if found && r != reg {
			return 0, false
		}
		reg, found = r, true
	}
	return reg, found && reg > 0
}

// activeLocals lists the names of the locals active at instruction pc, in
// register order: those started before it (strictly, gopher-lua's
// LocalName rule) or at it too (inclusive, Lua 5.1's).
func activeLocals(p *lua.FunctionProto, pc int, inclusive bool) []string {
	var names []string
	for _, l := range p.DbgLocals {
		if l.StartPc > pc || !inclusive && l.StartPc == pc {
			break
		}
		if pc < l.EndPc {
			names = append(names, l.Name)
		}
	}
	return names
}

// mayRaise reports whether an instruction can raise a runtime error (or
// call a function that does): every one but the moves, loads, jumps,
// tests, closures and returns.
func mayRaise(inst uint32) bool {
	switch int(inst >> 26) { // the opcode (gopher-lua's opGetOpCode)
	case lua.OP_MOVE, lua.OP_MOVEN, lua.OP_LOADK, lua.OP_LOADBOOL, lua.OP_LOADNIL,
		lua.OP_GETUPVAL, lua.OP_SETUPVAL, lua.OP_NEWTABLE, lua.OP_NOT, lua.OP_JMP,
		lua.OP_TEST, lua.OP_TESTSET, lua.OP_RETURN, lua.OP_SETLIST, lua.OP_CLOSE,
		lua.OP_CLOSURE, lua.OP_VARARG, lua.OP_NOP:
		return false
	}
	return true
}

// rawIndex reads t[k], following __index tables (a function library's
// globals, function_lib.go) but calling no function.
func (vm *luaVM) rawIndex(t *lua.LTable, k lua.LValue) lua.LValue {
	for depth := 0; depth < 100; depth++ {
		if v := t.RawGet(k); v != lua.LNil || t.Metatable == nil {
			return v
		}
		mt, ok := t.Metatable.(*lua.LTable)
		if !ok {
			return lua.LNil
		}
		next, ok := mt.RawGetString("__index").(*lua.LTable)
		if !ok {
			return lua.LNil
		}
		t = next
	}
	return lua.LNil
}

// registerChunk remembers info for proto and every function inside it.
func (vm *luaVM) registerChunk(proto *lua.FunctionProto, info *chunkInfo) {
	if info == nil || vm.chunks[proto] == info {
		return
	}
	vm.chunks[proto] = info
	for _, p := range proto.FunctionPrototypes {
		vm.registerChunk(p, info)
	}
}

// Argument coercion of Lua 5.1's libraries: luaL_checknumber and friends
// accept numeric strings (strtod), luaL_checklstring accepts numbers and
// converts them with "%.14g". gopher-lua's libraries refuse the first
// (CheckInt) and convert with Go's formatting; coerceArgs wraps a library
// function so it sees what Lua 5.1's would. sig has one letter per
// argument: 's' string, 'n' number, '-' untouched, upper case when the
// argument is required (a missing one is "got no value", as luaL_check*
// says); a trailing '*' repeats the last letter, optional.
func coerceArgs(sig string, fn lua.LGFunction) lua.LGFunction {
	rest := byte('-') // the kind of the arguments past sig's letters
	if strings.HasSuffix(sig, "*") && len(sig) >= 2 {
		rest = sig[len(sig)-2] | 0x20
	}
	return func(L *lua.LState) int {
		top := L.GetTop()
		for i := top + 1; i <= len(sig); i++ {
			switch sig[i-1] {
			case 'S':
				cTypeError(L, i, "string")
			case 'N':
				cTypeError(L, i, "number")
			}
		}
		for i := 1; i <= top; i++ {
			c := rest
			if i <= len(sig) && sig[i-1] != '*' {
				c = sig[i-1] | 0x20 // lower case
			}
			switch v := L.Get(i).(type) {
			case lua.LNumber:
				if c == 's' {
					L.Replace(i, lua.LString(numberToString(float64(v))))
				}
			case lua.LString:
				if c == 'n' {
					if f, ok := lua51.Str2d(string(v)); ok {
						L.Replace(i, lua.LNumber(f))
					}
				}
			}
		}
		return fn(L)
	}
}

// stringSignatures are the argument kinds of the string library (lstrlib.c).
var stringSignatures = map[string]string{
	"byte": "Snn", "char": "n*", "find": "SSn-", "gsub": "SSsn", "len": "S",
	"lower": "S", "match": "SSn", "rep": "SN", "reverse": "S", "sub": "SNn",
	"upper": "S",
}

// mathSignatures are the argument kinds of the math library (lmathlib.c);
// functions not listed take one required number.
var mathSignatures = map[string]string{
	"atan2": "NN", "fmod": "NN", "mod": "NN", "ldexp": "NN", "pow": "NN",
	"max": "Nn*", "min": "Nn*", "random": "nn", "randomseed": "N",
}

// patchCoercion wraps the string and math libraries with coerceArgs.
func (vm *luaVM) patchCoercion() {
	L := vm.L
	str := vm.globals.RawGetString("string").(*lua.LTable)
	for name, sig := range stringSignatures {
		if f, ok := str.RawGetString(name).(*lua.LFunction); ok && f.IsG {
			str.RawSetString(name, L.NewFunction(coerceArgs(sig, f.GFunction)))
		}
	}
	math := vm.globals.RawGetString("math").(*lua.LTable)
	math.ForEach(func(k, v lua.LValue) {
		if f, ok := v.(*lua.LFunction); ok && f.IsG {
			sig, ok := mathSignatures[lua.LVAsString(k)]
			if !ok {
				sig = "N"
			}
			math.RawSet(k, L.NewFunction(coerceArgs(sig, f.GFunction)))
		}
	})
	for name, fn := range map[string]lua.LGFunction{
		"find": strFind, "match": strMatch, "gmatch": strGmatch, "gfind": strGmatch, "gsub": strGsub,
	} {
		sig := stringSignatures[name]
		if sig == "" {
			sig = "SS"
		}
		str.RawSetString(name, L.NewFunction(coerceArgs(sig, fn)))
	}
	str.RawSetString("dump", L.NewFunction(stringDump))
	vm.globals.RawSetString("loadstring", L.NewFunction(vm.loadstring))
	vm.globals.RawSetString("load", L.NewFunction(vm.load))
}

// luaSignature is what string.dump's result starts with (Lua 5.1's
// header: ESC "Lua", version 0x51).
const luaSignature = "\x1bLuaQ\x00"

// stringDump is string.dump: gopher-lua has no bytecode format, so the
// result is Lua 5.1's header followed by the function's address, enough
// to be a string that loadstring refuses as Redis' Lua does (see README).
func stringDump(L *lua.LState) int {
	f, ok := L.Get(1).(*lua.LFunction)
	if !ok {
		cTypeError(L, 1, "function")
	}
	if f.IsG {
		cError(L, "unable to dump given function")
	}
	L.Push(lua.LString(luaSignature + fmt.Sprintf("%p", f.Proto)))
	return 1
}

// loadstring is Lua 5.1's loadstring(s [, chunkname]) under Redis: the
// chunk is compiled like a script (the same Lua 5.1 rewrites) in the
// global environment. A binary chunk is refused as text, as Redis' Lua
// (which never undumps) refuses it: "unexpected symbol near 'char(27)'".
func (vm *luaVM) loadstring(L *lua.LState) int {
	s := checkString51(L, 1)
	source := s
	if L.GetTop() >= 2 {
		source = checkString51(L, 2)
	}
	return vm.pushChunk(L, s, source)
}

// pushChunk is load_aux after lua_load: body compiled as the chunk source
// (rewritten as every chunk is) pushes its function, with the globals as
// its environment; a compile error pushes nil and the message.
func (vm *luaVM) pushChunk(L *lua.LState, body, source string) int {
	proto, info, err := compileChunk(body, source, cCallDepth(L))
	if err != nil {
		L.Push(lua.LNil)
		L.Push(lua.LString(compileErrorTextIn(err, lua51.ChunkID(source))))
		return 2
	}
	vm.registerChunk(proto, info)
	fn := L.NewFunctionFromProto(proto)
	fn.Env = vm.globals
	L.Push(fn)
	return 1
}

// load is Lua 5.1's load(func [, chunkname]) (luaB_load, generic_reader):
// the chunk is the concatenation of the pieces func returns, until nil or
// an empty string, compiled as loadstring compiles its string (rewritten
// for Lua 5.1 and for the read-only sandbox: gopher-lua's own load would
// compile a chunk whose stores nothing checks). chunkname defaults to
// "=(load)". A piece that is neither a string nor a number, or an error
// func raises, ends the load with nil and the message, as lua_load's
// protected reader does.
func (vm *luaVM) load(L *lua.LState) int {
	fn, ok := L.Get(1).(*lua.LFunction)
	if !ok {
		cTypeError(L, 1, "function")
	}
	source := "=(load)"
	if v := L.Get(2); v != lua.LNil {
		source = checkString51(L, 2)
	}
	fail := func(msg lua.LValue) int {
		L.Push(lua.LNil)
		L.Push(msg)
		return 2
	}
	var b strings.Builder
	for {
		L.Push(fn)
		if err := L.PCall(0, 1, vm.renamer); err != nil {
			v := err.(*lua.ApiError).Object
			if s, ok := v.(lua.LString); ok {
				v = lua.LString(lua51Message(string(s)))
			}
			return fail(v)
		}
		piece := L.Get(-1)
		L.Pop(1)
		if piece == lua.LNil {
			break
		}
		s, ok := luaIsString(piece)
		if !ok {
			return fail(lua.LString("reader function must return a string"))
		}
		if s == "" {
			break
		}
		b.WriteString(s)
	}
	return vm.pushChunk(L, b.String(), source)
}

// cCallDepth is L->nCcalls for a C function the script calls: the server
// runs the script with lua_pcall (1), and every Go function in the call
// chain that calls back into Lua (pcall, xpcall, table.sort, string.gsub)
// did so with lua_call, one more each. Metamethods, which Lua 5.1 also
// calls that way, are not counted.
func cCallDepth(L *lua.LState) int {
	n := 1
	for level := 1; ; level++ {
		dbg, ok := L.GetStack(level)
		if !ok {
			return n
		}
		if _, err := L.GetInfo("S", dbg, lua.LNil); err == nil && dbg.What == "G" {
			n++
		}
	}
}
