package luatest

import (
	"math"
	"math/bits"
	"strconv"
	"strings"
	"sync"
	"weak"

	lua "github.com/yuin/gopher-lua"
	"github.com/yuin/gopher-lua/ast"

	"github.com/luagen/luagen/internal/lua51"
)

// Lua 5.1's table iteration order. Redis' Lua walks a table's array part
// and then its hash nodes in slot order (luaH_next, ltable.c), so pairs,
// next, cjson.encode, cmsgpack.pack and a {map=...} reply see the keys in
// an order that follows from the hash of each key, the sizes the table
// had and the order its keys arrived in; gopher-lua iterates in
// first-insertion order. gopher-lua stays as it is: each table that is
// iterated gets a shadow, l51Table, which is ltable.c's layout logic
// (main positions, the lastfree collision scan, rehash and resize) run
// on the table's keys alone, and iteration walks the shadow's slots.
//
// The shadow sees the stores into the table as they happen (recordStore,
// lua_store.go: the chunk rewrite routes assignments to indexed targets
// through helpers), so its layout follows the table's real history. What
// it did not see, it learns when the table is iterated (sync): the keys
// the C code put into a table it built, and any store made past the
// helpers. Keys gone since last time are deleted from it (their node
// stays, as in Lua), then keys set again and new keys are inserted, in
// gopher-lua's order (integer keys of its array part ascending, then the
// other keys in first-insertion order).
// Table constructors record the sizes Lua 5.1's parser gives them and the
// order of their keyed fields (rewriter.table), since a constructor
// preallocates and so lays keys out differently from the same keys
// assigned one by one.

// maxBits is MAXBITS: the array part holds at most 2^26 slots.
const maxBits = 26

// l51Table is a Lua 5.1 Table reduced to where its keys are: the array
// part's slots and the hash part's nodes with their chains.
type l51Table struct {
	array    []bool    // sizearray slots; true where the value is not nil
	node     []l51Node // 2^lsizenode nodes; empty is the dummy node
	lastfree int       // getfreepos scans down from here
	// where gives the node holding each key that a node holds (with a
	// nil value too, as a deleted key keeps its node until a rehash).
	where map[lua.LValue]int
}

// l51Node is a Node: a key (nil when free), whether its value is set, and
// the next node of its chain (-1 at the end).
type l51Node struct {
	key  lua.LValue
	set  bool
	next int
}

// newL51Table is luaH_new(narray, nhash).
func newL51Table(narray, nhash int) *l51Table {
	t := &l51Table{where: map[lua.LValue]int{}}
	t.array = make([]bool, narray)
	t.setNodeVector(nhash)
	return t
}

// luaSHash is luaS_newlstr's string hash as Redis builds it: Redis hashes
// every byte (step 1), where stock Lua 5.1 skips bytes of long strings.
func luaSHash(s string) uint32 {
	h := uint32(len(s))
	for l1 := len(s); l1 >= 1; l1-- {
		h ^= (h << 5) + (h >> 2) + uint32(s[l1-1])
	}
	return h
}

// ceilLog2 is ceillog2: the least e with 2^e >= x, for x >= 1.
func ceilLog2(x int) int { return bits.Len(uint(x - 1)) }

// luaNumber2Int is lua_number2int on x86-64 ((int)d, cvttsd2si): the
// value truncated, INT_MIN when it does not fit an int (or is NaN).
func luaNumber2Int(n float64) int32 {
	if !(n > -2147483649 && n < 2147483648) {
		return math.MinInt32
	}
	return int32(n)
}

// arrayIndex is arrayindex: the key as an int when it is a number with an
// integer value that fits an int, else -1.
func arrayIndex(k lua.LValue) int {
	if n, ok := k.(lua.LNumber); ok {
		i := luaNumber2Int(float64(n))
		if float64(i) == float64(n) {
			return int(i)
		}
	}
	return -1
}

// mainPosition is mainposition: numbers by hashnum (the double's two
// 32-bit words summed, modulo an odd size), strings by their hash and
// booleans by their value modulo the power-of-two size. Tables, functions
// and userdata hash by address in C, which nothing here can reproduce:
// they all start at node 0.
func (t *l51Table) mainPosition(k lua.LValue) int {
	size := uint32(len(t.node))
	switch k := k.(type) {
	case lua.LNumber:
		n := float64(k)
		if n == 0 {
			return 0
		}
		b := math.Float64bits(n)
		return int((uint32(b) + uint32(b>>32)) % ((size - 1) | 1))
	case lua.LString:
		return int(luaSHash(string(k)) & (size - 1))
	case lua.LBool:
		if k {
			return int(1 & (size - 1))
		}
		return 0
	}
	return 0
}

// setNodeVector is setnodevector: size rounded up to a power of two, all
// nodes free, lastfree past the end.
func (t *l51Table) setNodeVector(size int) {
	if size == 0 {
		t.node = nil
	} else {
		t.node = make([]l51Node, 1<<ceilLog2(size))
		for i := range t.node {
			t.node[i].next = -1
		}
	}
	t.lastfree = len(t.node)
	clear(t.where)
}

// slot is luaH_get's search: the array slot (array true) or node holding
// k, or ok false.
func (t *l51Table) slot(k lua.LValue) (i int, array, ok bool) {
	if n := arrayIndex(k); n >= 1 && n <= len(t.array) {
		return n - 1, true, true
	}
	i, ok = t.where[k]
	return i, false, ok
}

// isSet reports whether k is in the table with a value.
func (t *l51Table) isSet(k lua.LValue) bool {
	i, array, ok := t.slot(k)
	switch {
	case !ok:
		return false
	case array:
		return t.array[i]
	}
	return t.node[i].set
}

// set is luaH_set followed by the store: k gets a value (set true) or
// nil. A new key takes a node even for nil, as in Lua.
func (t *l51Table) set(k lua.LValue, set bool) {
	i, array, ok := t.slot(k)
	if !ok {
		i, array = t.newKey(k)
	}
	if array {
		t.array[i] = set
	} else {
		t.node[i].set = set
	}
}

// getFreePos is getfreepos: the next node below lastfree whose key is
// free, or -1.
func (t *l51Table) getFreePos() int {
	for t.lastfree > 0 {
		t.lastfree--
		if t.node[t.lastfree].key == nil {
			return t.lastfree
		}
	}
	return -1
}

// newKey is newkey: k into its main position, or, when a key with a value
// is there, the colliding key moves to a free node if it is out of its
// own main position, else k goes to the free node; without a free node
// the table is rehashed and k inserted again (possibly into the array).
func (t *l51Table) newKey(k lua.LValue) (int, bool) {
	if len(t.node) == 0 {
		t.rehash(k)
		return t.setSlot(k)
	}
	mp := t.mainPosition(k)
	if t.node[mp].set {
		n := t.getFreePos()
		if n < 0 {
			t.rehash(k)
			return t.setSlot(k)
		}
		othern := t.mainPosition(t.node[mp].key)
		if othern != mp {
			for t.node[othern].next != mp {
				othern = t.node[othern].next
			}
			t.node[othern].next = n
			t.node[n] = t.node[mp]
			t.where[t.node[n].key] = n
			t.node[mp].next = -1
			t.node[mp].set = false
			t.node[mp].key = nil
		} else {
			t.node[n].next = t.node[mp].next
			t.node[mp].next = n
			mp = n
		}
	}
	if old := t.node[mp].key; old != nil && t.where[old] == mp {
		// A deleted key's node is taken over.
		delete(t.where, old)
	}
	t.node[mp].key = k
	t.where[k] = mp
	return mp, false
}

// setSlot is luaH_set's search then newkey, for a key absent so far.
func (t *l51Table) setSlot(k lua.LValue) (int, bool) {
	if i, array, ok := t.slot(k); ok {
		return i, array
	}
	return t.newKey(k)
}

// countInt is countint: k counted in nums when it is an array candidate.
func countInt(k lua.LValue, nums *[maxBits + 1]int) int {
	if n := arrayIndex(k); n > 0 && n <= 1<<maxBits {
		nums[ceilLog2(n)]++
		return 1
	}
	return 0
}

// numUseArray is numusearray: the array part's values counted by slice
// (2^(lg-1), 2^lg].
func (t *l51Table) numUseArray(nums *[maxBits + 1]int) int {
	ause, i := 0, 1
	for lg, ttlg := 0, 1; lg <= maxBits; lg, ttlg = lg+1, ttlg*2 {
		lc, lim := 0, ttlg
		if lim > len(t.array) {
			lim = len(t.array)
			if i > lim {
				break
			}
		}
		for ; i <= lim; i++ {
			if t.array[i-1] {
				lc++
			}
		}
		nums[lg] += lc
		ause += lc
	}
	return ause
}

// computeSizes is computesizes: the largest power of two n such that more
// than n/2 of the slots 1..n would be in use, and how many would be.
func computeSizes(nums *[maxBits + 1]int, narray *int) int {
	a, na, n := 0, 0, 0
	for i, twotoi := 0, 1; twotoi/2 < *narray; i, twotoi = i+1, twotoi*2 {
		if nums[i] > 0 {
			a += nums[i]
			if a > twotoi/2 {
				n, na = twotoi, a
			}
		}
		if a == *narray {
			break
		}
	}
	*narray = n
	return na
}

// rehash is rehash: new sizes from the keys with values plus ek.
func (t *l51Table) rehash(ek lua.LValue) {
	var nums [maxBits + 1]int
	nasize := t.numUseArray(&nums)
	totaluse := nasize
	for i := len(t.node) - 1; i >= 0; i-- {
		if t.node[i].set {
			nasize += countInt(t.node[i].key, &nums)
			totaluse++
		}
	}
	nasize += countInt(ek, &nums)
	totaluse++
	na := computeSizes(&nums, &nasize)
	t.resize(nasize, totaluse-na)
}

// resize is resize: the array part grows or shrinks (its vanishing slice
// reinserted into the new hash part), and the old nodes with values are
// reinserted from the last one down.
func (t *l51Table) resize(nasize, nhsize int) {
	oldarray, oldnode := t.array, t.node
	if nasize > len(oldarray) {
		t.array = append(t.array, make([]bool, nasize-len(oldarray))...)
	}
	t.setNodeVector(nhsize)
	if nasize < len(oldarray) {
		t.array = oldarray[:nasize:nasize]
		for i := nasize; i < len(oldarray); i++ {
			if oldarray[i] {
				t.set(lua.LNumber(i+1), true)
			}
		}
	}
	for i := len(oldnode) - 1; i >= 0; i-- {
		if oldnode[i].set {
			t.set(oldnode[i].key, true)
		}
	}
}

// resizeArray is luaH_resizearray.
func (t *l51Table) resizeArray(nasize int) { t.resize(nasize, len(t.node)) }

// findIndex is findindex: the traversal index of k (array slots first,
// then nodes), -1 for nil, ok false when k is not in the table.
func (t *l51Table) findIndex(k lua.LValue) (int, bool) {
	if k == lua.LNil {
		return -1, true
	}
	if n := arrayIndex(k); n >= 1 && n <= len(t.array) {
		return n - 1, true
	}
	i, ok := t.where[k]
	return i + len(t.array), ok
}

// keyAt is the key of traversal index i, nil for an empty slot.
func (t *l51Table) keyAt(i int) lua.LValue {
	if i < len(t.array) {
		return lua.LNumber(i + 1)
	}
	return t.node[i-len(t.array)].key
}

// size is the number of traversal indexes.
func (t *l51Table) size() int { return len(t.array) + len(t.node) }

// tableShadow is what luatest knows of one gopher-lua table.
type tableShadow struct {
	sim *l51Table // nil until the table is first iterated
	// known holds every key the shadow has been synced with: a key it
	// knows that comes back was deleted and set again.
	known map[lua.LValue]bool
	// cons is the constructor that made the table, replayed when sim is
	// first built; nil for tables made otherwise (lua_newtable).
	cons *consDesc
	// tracked is set from the table's first recorded store on
	// (lua_store.go): sim has seen every store since, in order.
	tracked bool
	// unordered marks a read-only table of the sandbox with more than one
	// key (the global table, the libraries: luaVM.protect). The C code
	// filled them in an order luatest does not reproduce (gopher-lua
	// registers its libraries from Go maps), so they iterate as empty (see
	// README).
	unordered bool
}

// tableShadows maps gopher-lua tables to their shadows, without keeping
// the tables alive: entries whose table is collected are swept once the
// map has doubled since the last sweep. Shared by every interpreter (a
// table belongs to one), hence the lock.
var tableShadows = struct {
	sync.Mutex
	m     map[weak.Pointer[lua.LTable]]*tableShadow
	swept int
	cons  map[string]*consDesc
	// last is the table shadowOf answered last, so the steps of one
	// traversal skip weak.Make (the one table it keeps alive).
	last   *lua.LTable
	lastSh *tableShadow
}{m: map[weak.Pointer[lua.LTable]]*tableShadow{}, cons: map[string]*consDesc{}}

// hasShadow reports whether t has a shadow: whether luatest has recorded
// a store into it or walked it.
func hasShadow(t *lua.LTable) bool {
	tableShadows.Lock()
	defer tableShadows.Unlock()
	return tableShadows.last == t || tableShadows.m[weak.Make(t)] != nil
}

// shadowOf returns t's shadow, made on first use.
func shadowOf(t *lua.LTable) *tableShadow {
	tableShadows.Lock()
	defer tableShadows.Unlock()
	if tableShadows.last == t {
		return tableShadows.lastSh
	}
	wp := weak.Make(t)
	sh := tableShadows.m[wp]
	if sh == nil {
		sh = &tableShadow{}
		addShadowLocked(wp, sh)
	}
	tableShadows.last, tableShadows.lastSh = t, sh
	return sh
}

func addShadowLocked(wp weak.Pointer[lua.LTable], sh *tableShadow) {
	m := tableShadows.m
	if len(m) >= 2*tableShadows.swept+1024 {
		for k := range m {
			if k.Value() == nil {
				delete(m, k)
			}
		}
		tableShadows.swept = len(m)
	}
	m[wp] = sh
}

// sync brings the shadow up to t's keys: keys without a value any more
// are deleted, then keys set again after a deletion are set, then new
// keys are inserted, both in gopher-lua's order (positive integers of its
// array part ascending, then the others in first-insertion order). When
// the keys were in fact deleted and inserted in that order since the last
// sync, the layout is Lua's. A tracked table has nothing to learn unless
// a store went past the helpers.
func (sh *tableShadow) sync(t *lua.LTable) *l51Table {
	if sh.sim == nil {
		if sh.cons != nil {
			sh.replay(t, false, nil)
		} else {
			sh.sim = newL51Table(0, 0)
		}
	}
	s := sh.sim
	for i := range s.array {
		if s.array[i] && t.RawGetInt(i+1) == lua.LNil {
			s.array[i] = false
		}
	}
	for i := range s.node {
		if n := &s.node[i]; n.set && t.RawGet(n.key) == lua.LNil {
			n.set = false
		}
	}
	var fresh []lua.LValue
	for k, _ := t.Next(lua.LNil); k != lua.LNil; k, _ = t.Next(k) {
		switch {
		case s.isSet(k):
			if !sh.known[k] {
				sh.know(k)
			}
		case sh.known[k]:
			s.set(k, true)
		default:
			fresh = append(fresh, k)
		}
	}
	for _, k := range fresh {
		s.set(k, true)
		sh.know(k)
	}
	return s
}

// replay builds sim from the constructor that made t (consDesc.replay),
// knowing its constant keys and the computed ones given, and forgets the
// constructor.
func (sh *tableShadow) replay(t *lua.LTable, fresh bool, keys []pendingKey) {
	sh.sim = sh.cons.replay(t, fresh, keys)
	sh.known = sh.cons.fieldKeys()
	for _, k := range keys {
		sh.known[k.key] = true
	}
	sh.cons = nil
}

// know adds k to the keys the shadow has been synced with.
func (sh *tableShadow) know(k lua.LValue) {
	if sh.known == nil {
		sh.known = map[lua.LValue]bool{}
	}
	sh.known[k] = true
}

// next51 is luaH_next over t in Lua 5.1's order: the key after key (nil:
// the first), k nil at the end. A key the table does not hold raises
// "invalid key to 'next'" on L, as luaH_next's luaG_runerror does, which
// from a C function (next, table.foreach) has no position. Deleting keys
// during a traversal works as in Lua; keys added during one may or may
// not be visited. An unordered table (tableShadow.unordered) iterates as
// empty.
func next51(L *lua.LState, t *lua.LTable, key lua.LValue) (k, v lua.LValue) {
	sh := shadowOf(t)
	if sh.unordered {
		if key != lua.LNil {
			L.Error(lua.LString("invalid key to 'next'"), 0)
		}
		return lua.LNil, lua.LNil
	}
	var s *l51Table
	if key == lua.LNil || sh.sim == nil {
		s = sh.sync(t)
	} else {
		s = sh.sim
	}
	i, ok := s.findIndex(key)
	if !ok {
		s = sh.sync(t)
		if i, ok = s.findIndex(key); !ok {
			L.Error(lua.LString("invalid key to 'next'"), 0)
		}
	}
	for i++; i < s.size(); i++ {
		if k := s.keyAt(i); k != nil {
			if v := t.RawGet(k); v != lua.LNil {
				return k, v
			}
		}
	}
	return lua.LNil, lua.LNil
}

// forEach visits t's entries in Lua 5.1's order (lua_next), as the C
// code of cjson, cmsgpack and the reply conversion sees them; none for an
// unordered table (tableShadow.unordered).
func forEach(t *lua.LTable, fn func(k, v lua.LValue)) {
	sh := shadowOf(t)
	if sh.unordered {
		return
	}
	s := sh.sync(t)
	for i := 0; i < s.size(); i++ {
		if k := s.keyAt(i); k != nil {
			if v := t.RawGet(k); v != lua.LNil {
				fn(k, v)
			}
		}
	}
}

// luaNext is luaB_next: next(t [, k]).
func luaNext(L *lua.LState) int {
	t, ok := L.Get(1).(*lua.LTable)
	if !ok {
		cTypeError(L, 1, "table")
	}
	k, v := next51(L, t, L.Get(2))
	if k == lua.LNil {
		L.Push(lua.LNil)
		return 1
	}
	L.Push(k)
	L.Push(v)
	return 2
}

// luaPairs is luaB_pairs: the iterator (one next function, kept as its
// upvalue), t and nil.
func luaPairs(L *lua.LState) int {
	if _, ok := L.Get(1).(*lua.LTable); !ok {
		cTypeError(L, 1, "table")
	}
	L.Push(L.Get(lua.UpvalueIndex(1)))
	L.Push(L.Get(1))
	L.Push(lua.LNil)
	return 3
}

// installNext replaces next and pairs in the globals g.
func installNext(L *lua.LState, g *lua.LTable) {
	g.RawSetString("next", L.NewFunction(luaNext))
	g.RawSetString("pairs", L.NewClosure(luaPairs, L.NewFunction(luaNext)))
}

// tableHelperName is the global the rewritten chunks call around a table
// constructor.
const tableHelperName = "__luatest_table"

// consDesc is what Lua 5.1's parser knows of a table constructor: its
// array and hash sizes (OP_NEWTABLE's operands, luaO_int2fb-rounded), the
// keyed fields in order (nil for a computed key) and whether the last
// positional field is a call or "..." whose values all go in (OP_SETLIST
// then grows the array part to fit, luaH_resizearray).
type consDesc struct {
	narray, nhash int
	keys          []lua.LValue
	nilValue      []bool // the field's value is the literal nil
	ncomputed     int    // how many keys are computed
	multret       bool
}

// int2fb is luaO_int2fb followed by luaO_fb2int: the size a constructor
// preallocates for x items.
func int2fb(x int) int {
	e := 0
	for x >= 16 {
		x = (x + 1) >> 1
		e++
	}
	if x < 8 {
		return x
	}
	return x << e
}

// replay builds the layout the constructor gave t: the preallocated
// sizes, then its keyed fields in order (a field takes a node even when
// its value is nil); positional fields go to the preallocated array part.
// A constructor with computed keys gets their values in order (keys,
// recorded by keyHelper as the fields were evaluated), and one ending in
// a call or "..." reads how many values it stored, so both are replayed
// as soon as they have run (fresh), when t's values are the fields'
// values too.
func (c *consDesc) replay(t *lua.LTable, fresh bool, keys []pendingKey) *l51Table {
	s := newL51Table(c.narray, c.nhash)
	last := 0
	if c.multret {
		last = t.MaxN()
	}
	for i, k := range c.keys {
		if k == nil {
			if len(keys) == 0 {
				continue
			}
			s.set(keys[0].key, keys[0].set)
			keys = keys[1:]
			continue
		}
		s.set(k, !c.nilValue[i] && (!fresh || t.RawGet(k) != lua.LNil))
	}
	if last > len(s.array) {
		s.resizeArray(last)
	}
	return s
}

// fieldKeys is the set of the constructor's constant keys: a key the
// table is later given again was set before, even when its field's value
// was nil.
func (c *consDesc) fieldKeys() map[lua.LValue]bool {
	m := make(map[lua.LValue]bool, len(c.keys))
	for _, k := range c.keys {
		if k != nil {
			m[k] = true
		}
	}
	return m
}

// tableHelper is __luatest_table(desc, t): it records t's constructor and
// returns t. The values of its computed keys are the last ones keyHelper
// recorded on this thread.
func (vm *luaVM) tableHelper(L *lua.LState) int {
	desc := string(L.Get(1).(lua.LString))
	t := L.Get(2).(*lua.LTable)
	wp := weak.Make(t)
	tableShadows.Lock()
	c := tableShadows.cons[desc]
	if c == nil {
		c = parseConsDesc(desc)
		tableShadows.cons[desc] = c
	}
	sh := &tableShadow{cons: c}
	addShadowLocked(wp, sh)
	tableShadows.Unlock()
	if c.ncomputed > 0 || c.multret {
		var keys []pendingKey
		if c.ncomputed > 0 {
			pending := vm.pendingKeys[L]
			n := min(c.ncomputed, len(pending))
			// Read before any Lua runs again, so no copy: the next
			// keyHelper may append over them.
			keys = pending[len(pending)-n:]
			if pending = pending[:len(pending)-n]; len(pending) == 0 {
				delete(vm.pendingKeys, L)
			} else {
				vm.pendingKeys[L] = pending
			}
		}
		sh.replay(t, true, keys)
	}
	L.Push(t)
	return 1
}

// Helper globals the rewritten chunks wrap a constructor's computed key
// and its value in: [__luatest_key(k)] = __luatest_val(v).
const (
	keyHelperName = "__luatest_key"
	valHelperName = "__luatest_val"
)

// pendingKey is a computed key of a constructor being evaluated, and
// whether its field's value is not nil.
type pendingKey struct {
	key lua.LValue
	set bool
}

// keyHelper is __luatest_key(k): it records k for the constructor being
// evaluated on this thread (tableHelper takes it) and returns k. A field
// whose value is nil leaves nothing in the table but has a node in Lua's.
func (vm *luaVM) keyHelper(L *lua.LState) int {
	k := L.Get(1)
	vm.pendingKeys[L] = append(vm.pendingKeys[L], pendingKey{key: k})
	L.Push(k)
	return 1
}

// valHelper is __luatest_val(v): it records whether the value of the
// field whose key keyHelper recorded last on this thread is nil (the
// constructors inside v took theirs already), and returns v.
func (vm *luaVM) valHelper(L *lua.LState) int {
	v := L.Get(1)
	if p := vm.pendingKeys[L]; len(p) > 0 {
		p[len(p)-1].set = v != lua.LNil
	}
	L.Push(v)
	return 1
}

// A constructor's description is a string constant of the rewritten
// chunk: "narray nhash [m]" then one line per keyed field: "s<string>",
// "n<number>", "t", "f", or "?" for a computed key, after a "-" when the
// value is the literal nil.

// consDescOf describes the constructor e.
func consDescOf(e *ast.TableExpr) string {
	var b strings.Builder
	na, nh := 0, 0
	multret := false
	for i, f := range e.Fields {
		if f.Key != nil {
			nh++
			continue
		}
		if i == len(e.Fields)-1 && isMultRet(f.Value) {
			multret = true
			continue
		}
		na++
	}
	b.WriteString(strconv.Itoa(int2fb(na)) + " " + strconv.Itoa(int2fb(nh)))
	if multret {
		b.WriteString(" m")
	}
	for _, f := range e.Fields {
		if f.Key == nil {
			continue
		}
		b.WriteByte('\n')
		if _, ok := f.Value.(*ast.NilExpr); ok {
			b.WriteByte('-')
		}
		b.WriteString(keyDesc(f.Key))
	}
	return b.String()
}

// keyDesc describes a constructor's key: "s<string>", "n<number>", "t",
// "f", or "?" for a computed key.
func keyDesc(k ast.Expr) string {
	switch k := k.(type) {
	case *ast.StringExpr:
		return "s" + strconv.Quote(k.Value)
	case *ast.NumberExpr, *ast.UnaryMinusOpExpr, *ast.ArithmeticOpExpr:
		if n, ok := constNumber(k); ok && !math.IsNaN(n) {
			return "n" + strconv.FormatFloat(n, 'g', -1, 64)
		}
	case *ast.TrueExpr:
		return "t"
	case *ast.FalseExpr:
		return "f"
	}
	return "?"
}

// constNumber is the value of a constant numeric expression ([-7],
// [2^31]), as the parser folds it; ok false for anything else.
func constNumber(e ast.Expr) (float64, bool) {
	switch e := e.(type) {
	case *ast.NumberExpr:
		return lua51.Str2d(e.Value)
	case *ast.UnaryMinusOpExpr:
		n, ok := constNumber(e.Expr)
		return -n, ok
	case *ast.ArithmeticOpExpr:
		x, okx := constNumber(e.Lhs)
		y, oky := constNumber(e.Rhs)
		if !okx || !oky {
			return 0, false
		}
		switch e.Operator {
		case "+":
			return x + y, true
		case "-":
			return x - y, true
		case "*":
			return x * y, true
		case "/":
			return x / y, true
		case "^":
			return math.Pow(x, y), true
		}
	}
	return 0, false
}

// isMultRet reports whether e, as the last positional field, adds all its
// values (a call or "..." not in parentheses).
func isMultRet(e ast.Expr) bool {
	switch e := e.(type) {
	case *ast.FuncCallExpr:
		return !e.AdjustRet
	case *ast.Comma3Expr:
		return !e.AdjustRet
	}
	return false
}

func parseConsDesc(desc string) *consDesc {
	lines := strings.Split(desc, "\n")
	head := strings.Fields(lines[0])
	c := &consDesc{}
	c.narray, _ = strconv.Atoi(head[0])
	c.nhash, _ = strconv.Atoi(head[1])
	c.multret = len(head) > 2
	for _, l := range lines[1:] {
		isNil := l[0] == '-'
		if isNil {
			l = l[1:]
		}
		c.nilValue = append(c.nilValue, isNil)
		var k lua.LValue
		switch l[0] {
		case 's':
			v, _ := strconv.Unquote(l[1:])
			k = lua.LString(v)
		case 'n':
			n, _ := strconv.ParseFloat(l[1:], 64)
			k = lua.LNumber(n)
		case 't':
			k = lua.LTrue
		case 'f':
			k = lua.LFalse
		default:
			c.ncomputed++
		}
		c.keys = append(c.keys, k)
	}
	return c
}
