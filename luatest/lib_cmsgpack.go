package luatest

import (
	"encoding/binary"
	"math"

	lua "github.com/yuin/gopher-lua"
)

// newCmsgpack is the cmsgpack library Redis 7.0 loads
// (deps/lua/src/lua_cmsgpack.c, lua-cmsgpack 0.4.0): pack, unpack,
// unpack_one and unpack_limit, with its encodings byte for byte: numbers
// equal to an int64 as the smallest MessagePack integer, other numbers as
// a 32-bit float when that is exact and a 64-bit double otherwise, tables
// whose keys are exactly 1..n as arrays and all others as maps, tables
// nested 16 deep (and functions, userdata, nil) as nil. Map entries follow
// the table's iteration order, which is gopher-lua's (see the README).
func newCmsgpack(L *lua.LState) *lua.LTable {
	t := L.NewTable()
	t.RawSetString("pack", L.NewFunction(mpPack))
	t.RawSetString("unpack", L.NewFunction(func(L *lua.LState) int { return mpUnpackFull(L, 0, 0) }))
	t.RawSetString("unpack_one", L.NewFunction(func(L *lua.LState) int {
		offset := mpOptInteger(L, 2, 0)
		L.SetTop(1)
		return mpUnpackFull(L, 1, offset)
	}))
	t.RawSetString("unpack_limit", L.NewFunction(func(L *lua.LState) int {
		limit := mpOptInteger(L, 2, math.MinInt64)
		offset := mpOptInteger(L, 3, 0)
		L.SetTop(1)
		return mpUnpackFull(L, limit, offset)
	}))
	t.RawSetString("_NAME", lua.LString("cmsgpack"))
	t.RawSetString("_VERSION", lua.LString("lua-cmsgpack 0.4.0"))
	t.RawSetString("_COPYRIGHT", lua.LString("Copyright (C) 2012, Salvatore Sanfilippo"))
	t.RawSetString("_DESCRIPTION", lua.LString("MessagePack C implementation for Lua"))
	return t
}

// mpMaxNesting is LUACMSGPACK_MAX_NESTING: deeper tables encode as nil.
const mpMaxNesting = 16

// mpOptInteger is luaL_optinteger (luaL_checkinteger when df is
// math.MinInt64): numbers and numeric strings, truncated.
func mpOptInteger(L *lua.LState, n int, df int64) int64 {
	if df != math.MinInt64 && L.Get(n) == lua.LNil {
		return df
	}
	return cToInt64(checkNumber51(L, n))
}

func mpPack(L *lua.LState) int {
	n := L.GetTop()
	if n == 0 {
		cArgError(L, 0, "MessagePack pack needs input.")
	}
	var b []byte
	for i := 1; i <= n; i++ {
		b = mpEncode(L, b, L.Get(i), 0)
	}
	L.Push(lua.LString(b))
	return 1
}

func mpEncode(L *lua.LState, b []byte, v lua.LValue, level int) []byte {
	switch v := v.(type) {
	case lua.LString:
		return mpEncodeBytes(b, string(v))
	case lua.LBool:
		if v {
			return append(b, 0xc3)
		}
		return append(b, 0xc2)
	case lua.LNumber:
		f := float64(v)
		if !math.IsInf(f, 0) && float64(cToInt64(f)) == f {
			return mpEncodeInt(b, cToInt64(f))
		}
		if f32 := float32(f); float64(f32) == f {
			return binary.BigEndian.AppendUint32(append(b, 0xca), math.Float32bits(f32))
		}
		return binary.BigEndian.AppendUint64(append(b, 0xcb), math.Float64bits(f))
	case *lua.LTable:
		if level == mpMaxNesting {
			return append(b, 0xc0)
		}
		if mpIsArray(v) {
			n := v.Len()
			b = mpEncodeHeader(b, uint64(n), 0x90, 0xdc, 0xdd)
			for j := 1; j <= n; j++ {
				b = mpEncode(L, b, L.GetTable(v, lua.LNumber(j)), level+1)
			}
			return b
		}
		count := 0
		forEach(v, func(lua.LValue, lua.LValue) { count++ })
		b = mpEncodeHeader(b, uint64(count), 0x80, 0xde, 0xdf)
		forEach(v, func(k, val lua.LValue) {
			b = mpEncode(L, b, k, level+1)
			b = mpEncode(L, b, val, level+1)
		})
		return b
	}
	return append(b, 0xc0)
}

// mpIsArray is table_is_an_array: every key a number that is a positive
// C int, and the largest equal to the count.
func mpIsArray(t *lua.LTable) bool {
	count, max, ok := 0, 0.0, true
	forEach(t, func(k, _ lua.LValue) {
		n, isNum := k.(lua.LNumber)
		f := float64(n)
		if !ok || !isNum || f <= 0 || f > math.MaxInt32 || f != math.Trunc(f) {
			ok = false
			return
		}
		if f > max {
			max = f
		}
		count++
	})
	return ok && max == float64(count)
}

func mpEncodeBytes(b []byte, s string) []byte {
	n := len(s)
	switch {
	case n < 32:
		b = append(b, 0xa0|byte(n))
	case n <= 0xff:
		b = append(b, 0xd9, byte(n))
	case n <= 0xffff:
		b = binary.BigEndian.AppendUint16(append(b, 0xda), uint16(n))
	default:
		b = binary.BigEndian.AppendUint32(append(b, 0xdb), uint32(n))
	}
	return append(b, s...)
}

// mpEncodeHeader writes an array or map header: fix (up to 15), 16-bit
// or 32-bit length.
func mpEncodeHeader(b []byte, n uint64, fix, c16, c32 byte) []byte {
	switch {
	case n <= 15:
		return append(b, fix|byte(n))
	case n <= 0xffff:
		return binary.BigEndian.AppendUint16(append(b, c16), uint16(n))
	}
	return binary.BigEndian.AppendUint32(append(b, c32), uint32(n))
}

func mpEncodeInt(b []byte, n int64) []byte {
	if n >= 0 {
		switch {
		case n <= 127:
			return append(b, byte(n))
		case n <= 0xff:
			return append(b, 0xcc, byte(n))
		case n <= 0xffff:
			return binary.BigEndian.AppendUint16(append(b, 0xcd), uint16(n))
		case n <= 0xffffffff:
			return binary.BigEndian.AppendUint32(append(b, 0xce), uint32(n))
		}
		return binary.BigEndian.AppendUint64(append(b, 0xcf), uint64(n))
	}
	switch {
	case n >= -32:
		return append(b, byte(int8(n)))
	case n >= -128:
		return append(b, 0xd0, byte(n))
	case n >= -32768:
		return binary.BigEndian.AppendUint16(append(b, 0xd1), uint16(n))
	case n >= -2147483648:
		return binary.BigEndian.AppendUint32(append(b, 0xd2), uint32(n))
	}
	return binary.BigEndian.AppendUint64(append(b, 0xd3), uint64(n))
}

// mpCursor is mp_cur: the input left and the first error.
type mpCursor struct {
	s   string
	p   int
	err int // 0, mpEOF or mpBadFmt
}

const (
	mpEOF = 1 + iota
	mpBadFmt
)

func (c *mpCursor) left() int { return len(c.s) - c.p }

func (c *mpCursor) need(n int) bool {
	if c.left() < n {
		c.err = mpEOF
		return false
	}
	return true
}

// mpUnpackFull is mp_unpack_full: decode up to limit objects from offset
// (limit 0 and offset 0 decode everything and return no offset).
func mpUnpackFull(L *lua.LState, limit, offset int64) int {
	s := checkString51(L, 1)
	decodeAll := limit == 0 && offset == 0
	if offset < 0 || limit < 0 {
		// lua_cmsgpack.c prints the input length as the limit.
		cError(L, "Invalid request to unpack with offset of %d and limit of %d.", int32(offset), int32(len(s)))
	} else if offset > int64(len(s)) {
		cError(L, "Start offset %d greater than input length %d.", int32(offset), int32(len(s)))
	}
	if decodeAll {
		limit = math.MaxInt32
	}
	c := &mpCursor{s: s, p: int(offset)}
	var out []lua.LValue
	for cnt := int64(0); c.left() > 0 && cnt < limit; cnt++ {
		v := mpDecode(L, c)
		switch c.err {
		case mpEOF:
			cError(L, "Missing bytes in input.")
		case mpBadFmt:
			cError(L, "Bad data format in input.")
		}
		out = append(out, v)
	}
	if !decodeAll {
		next := lua.LNumber(c.p)
		if c.left() == 0 {
			next = -1
		}
		L.Push(next)
	}
	for _, v := range out {
		L.Push(v)
	}
	if decodeAll {
		return len(out)
	}
	return len(out) + 1
}

// mpNumSize is the encoded size, type byte included, of each number type.
var mpNumSize = [256]int{0xcc: 2, 0xd0: 2, 0xcd: 3, 0xd1: 3, 0xce: 5, 0xd2: 5, 0xcf: 9, 0xd3: 9, 0xca: 5, 0xcb: 9}

// mpDecode decodes one object; on error it sets c.err and returns nil.
func mpDecode(L *lua.LState, c *mpCursor) lua.LValue {
	if !c.need(1) {
		return lua.LNil
	}
	p := c.s[c.p:]
	be16 := func() uint64 { return uint64(binary.BigEndian.Uint16([]byte(p[1:3]))) }
	be32 := func() uint64 { return uint64(binary.BigEndian.Uint32([]byte(p[1:5]))) }
	be64 := func() uint64 { return binary.BigEndian.Uint64([]byte(p[1:9])) }
	fixed := func(n int, v lua.LValue) lua.LValue {
		c.p += n
		return v
	}
	bytes := func(hdr int, n uint64) lua.LValue {
		if uint64(c.left()-hdr) < n {
			c.err = mpEOF
			return lua.LNil
		}
		v := lua.LString(c.s[c.p+hdr : c.p+hdr+int(n)])
		c.p += hdr + int(n)
		return v
	}
	switch t := p[0]; t {
	case 0xcc, 0xd0, 0xcd, 0xd1, 0xce, 0xd2, 0xcf, 0xd3, 0xca, 0xcb:
		size := mpNumSize[t]
		if !c.need(size) {
			return lua.LNil
		}
		var v float64
		switch t {
		case 0xcc:
			v = float64(p[1])
		case 0xd0:
			v = float64(int8(p[1]))
		case 0xcd:
			v = float64(be16())
		case 0xd1:
			v = float64(int16(be16()))
		case 0xce:
			v = float64(be32())
		case 0xd2:
			v = float64(int32(be32()))
		case 0xcf, 0xd3:
			v = float64(int64(be64())) // lua_pushinteger of a uint64 wraps
		case 0xca:
			v = float64(math.Float32frombits(uint32(be32())))
		case 0xcb:
			v = math.Float64frombits(be64())
		}
		return fixed(size, lua.LNumber(v))
	case 0xc0:
		return fixed(1, lua.LNil)
	case 0xc3:
		return fixed(1, lua.LTrue)
	case 0xc2:
		return fixed(1, lua.LFalse)
	case 0xd9:
		if !c.need(2) {
			return lua.LNil
		}
		return bytes(2, uint64(p[1]))
	case 0xda:
		if !c.need(3) {
			return lua.LNil
		}
		return bytes(3, be16())
	case 0xdb:
		if !c.need(5) {
			return lua.LNil
		}
		return bytes(5, be32())
	case 0xdc, 0xde:
		if !c.need(3) {
			return lua.LNil
		}
		n := be16()
		c.p += 3
		return mpDecodeTable(L, c, n, t == 0xde)
	case 0xdd, 0xdf:
		if !c.need(5) {
			return lua.LNil
		}
		n := be32()
		c.p += 5
		return mpDecodeTable(L, c, n, t == 0xdf)
	default:
		switch {
		case t&0x80 == 0:
			return fixed(1, lua.LNumber(t))
		case t&0xe0 == 0xe0:
			return fixed(1, lua.LNumber(int8(t)))
		case t&0xe0 == 0xa0:
			return bytes(1, uint64(t&0x1f))
		case t&0xf0 == 0x90:
			c.p++
			return mpDecodeTable(L, c, uint64(t&0xf), false)
		case t&0xf0 == 0x80:
			c.p++
			return mpDecodeTable(L, c, uint64(t&0xf), true)
		}
	}
	c.err = mpBadFmt
	return lua.LNil
}

// mpDecodeTable decodes n array elements or n map pairs into a new table,
// stored with lua_settable's rules (a nil value gives a new key a node
// holding nil, a nil or NaN key raises). Until a store does something a
// traversal could not infer (a nil value, a number key of a map), the
// stores are not recorded: the table's shadow learns them in the order
// they were made when it first has to (lua_store.go).
func mpDecodeTable(L *lua.LState, c *mpCursor, n uint64, isMap bool) lua.LValue {
	t := L.NewTable()
	recording := false
	for index := 1; n > 0; n-- {
		var k lua.LValue
		if isMap {
			k = mpDecode(L, c)
			if c.err != 0 {
				return t
			}
		} else {
			k = lua.LNumber(index)
			index++
		}
		v := mpDecode(L, c)
		if c.err != 0 {
			return t
		}
		switch kv := k.(type) {
		case *lua.LNilType:
			cError(L, "table index is nil")
		case lua.LNumber:
			if math.IsNaN(float64(kv)) {
				cError(L, "table index is NaN")
			}
		}
		if _, num := k.(lua.LNumber); !recording && (v == lua.LNil || isMap && num) {
			recording = true
		}
		if recording {
			rawStore(L, t, k, v)
		} else {
			t.RawSet(k, v)
		}
	}
	return t
}
