package luatest

import (
	"math"
	"strings"

	lua "github.com/yuin/gopher-lua"
)

// Stores into tables, seen as they happen. Lua 5.1 lays a table's keys
// out by the order they were created and deleted in (ltable.c), so the
// shadow of a table (lua_table.go) must see every store that creates a
// key or gives a key a value or nil, in order. gopher-lua's VM stores
// without telling anyone, so the chunk rewrite (lua51.go) turns every
// assignment to an indexed target (t[k] = v, t.k = v, function t.f() and
// multiple assignments with such targets) into a call of a helper that
// does the store as luaV_settable does and records it; rawset,
// table.insert, table.remove and cmsgpack's map decoding record theirs.
//
// A table is tracked from its first recorded store on: that store first
// brings its shadow up to the keys the table holds (a constructor's
// layout, or the C code's inserts), and every later recorded store is
// applied to the shadow at once, which is ltable.c's luaH_set on the
// shadow: exactly the history Lua saw, rehash points included. A store
// that only replaces a value by another one changes no layout and is not
// recorded (the common t.n = t.n + 1 costs one RawGet more).
//
// The same helpers keep Redis' read-only tables read-only (luaVM.readonly):
// gopher-lua's VM stores into a table that holds the key without looking
// at any metatable. An assignment to a global name (x = v, function f(),
// a name among several targets) would store into the global table, every
// script's environment, which Redis makes read-only: the rewrite turns it
// into a call of setGlobalHelper, which raises.

// Helper globals the rewritten chunks call for stores.
const (
	// setHelperName is called as (t, k, v, ...): t and k evaluated
	// before the right-hand side, as Lua 5.1 evaluates an indexed target
	// whose table or key is not a local.
	setHelperName = "__luatest_set"
	// setLateHelperName is called as (v, ..., t, k): the table and key
	// are locals or constants, which Lua 5.1 reads at the store itself.
	setLateHelperName = "__luatest_setl"
	// setMultiHelperName is called as (layout, t1, k1, ..., values...)
	// for a multiple assignment: layout has one letter per target, 'i'
	// for an indexed target (whose table and key follow, in order), 'n'
	// for a local or upvalue name, whose value the helper returns, and
	// 'g' for a global name.
	setMultiHelperName = "__luatest_setn"
	// setGlobalHelperName is called as (values...) for an assignment to
	// a global name: the global table is read-only, so it raises.
	setGlobalHelperName = "__luatest_setg"
)

// maxTagLoop is MAXTAGLOOP: how many __newindex tables a store follows.
const maxTagLoop = 100

// recordStore tells t's shadow that t[k] was set (set true) or set to
// nil, before the store is made (t still holds its keys as they were).
func recordStore(t *lua.LTable, k lua.LValue, set bool) {
	sh := shadowOf(t)
	if !sh.tracked {
		sh.sync(t)
		sh.tracked = true
	}
	sh.sim.set(k, set)
}

// checkKey raises luaH_set's errors for a key no table can hold.
func checkKey(L *lua.LState, k lua.LValue) {
	switch k := k.(type) {
	case *lua.LNilType:
		L.RaiseError("table index is nil")
	case lua.LNumber:
		if math.IsNaN(float64(k)) {
			L.RaiseError("table index is NaN")
		}
	}
}

// recordRawStore records the raw store t[k] = v about to be made when it
// creates k or changes whether k has a value, after luaH_set's key checks.
func recordRawStore(L *lua.LState, t *lua.LTable, k, v lua.LValue) {
	if v == lua.LNil || t.RawGet(k) == lua.LNil {
		checkKey(L, k)
		recordStore(t, k, v != lua.LNil)
	}
}

// rawStore is lua_rawset: t[k] = v without metamethods, recorded.
func rawStore(L *lua.LState, t *lua.LTable, k, v lua.LValue) {
	recordRawStore(L, t, k, v)
	t.RawSet(k, v)
}

// settable is luaV_settable: a table with a value at k takes v; a table
// without one gets the key (luaH_set gives it a node with a nil value)
// and then v, unless its metatable has __newindex, which is called (a
// function) or indexed in turn (a table). Anything else goes to its
// __newindex or fails as gopher-lua's VM fails it. A read-only table
// (luaVM.readonly) refuses before luaH_set, as Redis' luaV_settable does.
func (vm *luaVM) settable(L *lua.LState, t, k, v lua.LValue) {
	for range maxTagLoop {
		var tm lua.LValue
		if tb, ok := t.(*lua.LTable); ok {
			if vm.readonly[tb] {
				L.RaiseError(errReadOnly)
			}
			if tb.RawGet(k) != lua.LNil {
				if v == lua.LNil {
					recordStore(tb, k, false)
				}
				tb.RawSet(k, v)
				return
			}
			if tb.Metatable != lua.LNil {
				tm = L.GetMetaField(tb, "__newindex")
			}
			if tm == nil || tm == lua.LNil {
				rawStore(L, tb, k, v)
				return
			}
			checkKey(L, k)
			recordStore(tb, k, false)
		} else if tm = L.GetMetaField(t, "__newindex"); tm == lua.LNil {
			L.SetTable(t, k, v) // "attempt to index a non-table object"
			return
		}
		if fn, ok := tm.(*lua.LFunction); ok {
			L.Push(fn)
			L.Push(t)
			L.Push(k)
			L.Push(v)
			L.Call(3, 0)
			return
		}
		t = tm
	}
	L.RaiseError("loop in settable")
}

// setHelper is __luatest_set(t, k, v, ...): t[k] = v.
func (vm *luaVM) setHelper(L *lua.LState) int {
	vm.settable(L, L.Get(1), L.Get(2), L.Get(3))
	return 0
}

// setLateHelper is __luatest_setl(v, ..., t, k): t[k] = v.
func (vm *luaVM) setLateHelper(L *lua.LState) int {
	n := L.GetTop()
	vm.settable(L, L.Get(n-1), L.Get(n), L.Get(1))
	return 0
}

// setMultiHelper is __luatest_setn(layout, t1, k1, ..., values...): the
// values adjusted to the targets (missing ones nil, extra ones dropped),
// stored from the last target to the first as Lua 5.1's restassign does,
// and the values of the name targets returned in order for the VM to
// assign. Every table and key was evaluated before the values, so a
// target whose table is a local assigned in the same statement stores
// into the table the local held before (Lua 5.1's check_conflict).
//
// The stores stop at the last global name target ('g'): storing into the
// read-only global table raises there, which the rewritten statement does
// right after (setGlobalHelper), once the VM has assigned the names to its
// right, the only ones returned.
func (vm *luaVM) setMultiHelper(L *lua.LState) int {
	layout := string(L.Get(1).(lua.LString))
	nidx := strings.Count(layout, "i")
	// The values are copied before any is pushed: past the top, L.Get
	// answers nil only until the returns below land there. The tables and
	// keys stay where they are (a store's calls use the stack above).
	var buf [24]lua.LValue
	vals := buf[:0]
	for j := range layout {
		vals = append(vals, L.Get(2+2*nidx+j))
	}
	stop := strings.LastIndexByte(layout, 'g')
	for j, i := len(layout)-1, nidx-1; j > stop; j-- {
		if layout[j] == 'i' {
			vm.settable(L, L.Get(2+2*i), L.Get(3+2*i), vals[j])
			i--
		}
	}
	n := 0
	for j := stop + 1; j < len(layout); j++ {
		if layout[j] == 'n' {
			L.Push(vals[j])
			n++
		}
	}
	return n
}

// setGlobalHelper is __luatest_setg(values...): the store into the global
// table an assignment to a global name makes, which raises as the global
// table is read-only (luaV_settable on Redis' patched Lua), with the
// position of the assignment, after its values were evaluated.
func setGlobalHelper(L *lua.LState) int {
	L.RaiseError(errReadOnly)
	return 0
}

// recordedRawset wraps rawset: the store is recorded when the arguments
// are ones rawset accepts, then rawset makes it.
func recordedRawset(orig lua.LGFunction) lua.LGFunction {
	return func(L *lua.LState) int {
		if t, ok := L.Get(1).(*lua.LTable); ok && L.GetTop() >= 3 {
			recordRawStore(L, t, L.Get(2), L.Get(3))
		}
		return orig(L)
	}
}

// checkTable is luaL_checktype(L, n, LUA_TTABLE).
func checkTable(L *lua.LState, n int) *lua.LTable {
	t, ok := L.Get(n).(*lua.LTable)
	if !ok {
		cTypeError(L, n, "table")
	}
	return t
}

// rawSetInt is lua_rawseti on a table of the script: read-only tables
// refuse it (from C, so without a position), others record it.
func (vm *luaVM) rawSetInt(L *lua.LState, t *lua.LTable, i int, v lua.LValue) {
	if vm.readonly[t] {
		L.Error(lua.LString(errReadOnly), 0)
	}
	rawStore(L, t, lua.LNumber(i), v)
}

// tableInsert is tinsert (ltablib.c): table.insert(t, v) sets t[#t+1];
// table.insert(t, pos, v) moves t[pos..] up one from the top down, then
// sets t[pos], each a lua_rawseti. #t is gopher-lua's border (see README).
func (vm *luaVM) tableInsert(L *lua.LState) int {
	t := checkTable(L, 1)
	e := t.Len() + 1
	var pos int
	switch L.GetTop() {
	case 2:
		pos = e
	case 3:
		pos = checkInt51(L, 2)
		if pos > e {
			e = pos
		}
		for i := e; i > pos; i-- {
			vm.rawSetInt(L, t, i, t.RawGetInt(i-1))
		}
	default:
		cError(L, "wrong number of arguments to 'insert'")
	}
	vm.rawSetInt(L, t, pos, L.Get(L.GetTop()))
	return 0
}

// tableRemove is tremove (ltablib.c): t[pos] (default #t) is returned,
// the elements above move down one, and t[#t] is set to nil; nothing is
// returned when pos is outside 1..#t.
func (vm *luaVM) tableRemove(L *lua.LState) int {
	t := checkTable(L, 1)
	e := t.Len()
	pos := e
	if L.Get(2) != lua.LNil {
		pos = checkInt51(L, 2)
	}
	if pos < 1 || pos > e {
		return 0
	}
	L.Push(t.RawGetInt(pos))
	for ; pos < e; pos++ {
		vm.rawSetInt(L, t, pos, t.RawGetInt(pos+1))
	}
	vm.rawSetInt(L, t, e, lua.LNil)
	return 1
}
