package luatest

import (
	"encoding/binary"
	"fmt"
	"math"
	"strings"

	lua "github.com/yuin/gopher-lua"

	"github.com/luagen/luagen/internal/lua51"
)

// newStruct is the struct library Redis 7.0 loads (deps/lua/src/lua_struct.c,
// Roberto Ierusalimschy's struct 1.7 with Redis' offset check): pack, unpack
// and size over a format string, byte for byte as on x86-64 Linux, where
// the native order is little endian, short is 2 bytes, int 4, long and
// size_t 8, and the largest alignment ('!' without a number) is 8.
func newStruct(L *lua.LState) *lua.LTable {
	t := L.NewTable()
	t.RawSetString("pack", L.NewFunction(structPack))
	t.RawSetString("unpack", L.NewFunction(structUnpack))
	t.RawSetString("size", L.NewFunction(structSize))
	return t
}

const (
	structMaxIntSize = 32 // MAXINTSIZE
	structMaxAlign   = 8  // MAXALIGN on x86-64
)

// structHeader is lua_struct.c's Header: the byte order and the largest
// alignment in force.
type structHeader struct {
	little bool
	align  int
}

func defaultStructHeader() structHeader { return structHeader{little: true, align: 1} }

// order is the byte order the header selects for 'f' and 'd'.
func (h structHeader) order() binary.ByteOrder {
	if h.little {
		return binary.LittleEndian
	}
	return binary.BigEndian
}

// structFormat walks a format string as lua_struct.c's loops do.
type structFormat struct {
	L   *lua.LState
	fmt string
	i   int
}

func (f *structFormat) more() bool { return f.i < len(f.fmt) }

func (f *structFormat) next() byte {
	c := f.fmt[f.i]
	f.i++
	return c
}

// getnum reads an optional decimal number (getnum).
func (f *structFormat) getnum(df int) int {
	if f.i >= len(f.fmt) || !isDigit(f.fmt[f.i]) {
		return df
	}
	a := 0
	for f.i < len(f.fmt) && isDigit(f.fmt[f.i]) {
		d := int(f.fmt[f.i] - '0')
		if a > math.MaxInt32/10 || a*10 > math.MaxInt32-d {
			cError(f.L, "integral size overflow")
		}
		a = a*10 + d
		f.i++
	}
	return a
}

// optsize is the size in bytes of option opt (0 for options without one).
func (f *structFormat) optsize(opt byte) int {
	switch opt {
	case 'B', 'b', 'x':
		return 1
	case 'H', 'h':
		return 2
	case 'L', 'l', 'T', 'd':
		return 8
	case 'f':
		return 4
	case 'c':
		return f.getnum(1)
	case 'i', 'I':
		sz := f.getnum(4)
		if sz > structMaxIntSize {
			cError(f.L, "integral size %d is larger than limit of %d", sz, structMaxIntSize)
		}
		return sz
	}
	return 0
}

// gettoalign is the padding an element of size needs at position n.
func gettoalign(n int, h *structHeader, opt byte, size int) int {
	if size == 0 || opt == 'c' {
		return 0
	}
	if size > h.align {
		size = h.align
	}
	return (size - (n & (size - 1))) & (size - 1)
}

// control applies '<', '>', '!' and ' ' and refuses anything else.
func (f *structFormat) control(opt byte, h *structHeader) {
	switch opt {
	case ' ':
	case '>':
		h.little = false
	case '<':
		h.little = true
	case '!':
		a := f.getnum(structMaxAlign)
		if a <= 0 || a&(a-1) != 0 {
			cError(f.L, "alignment %d is not a power of 2", a)
		}
		h.align = a
	default:
		cArgError(f.L, 1, "invalid format option '"+string(opt)+"'")
	}
}

// checkNumber51 is luaL_checknumber: numbers and numeric strings.
func checkNumber51(L *lua.LState, n int) float64 {
	switch v := L.Get(n).(type) {
	case lua.LNumber:
		return float64(v)
	case lua.LString:
		if f, ok := lua51.Str2d(string(v)); ok {
			return f
		}
	}
	cTypeError(L, n, "number")
	return 0
}

// checkString51 is luaL_checklstring: strings, and numbers as "%.14g".
func checkString51(L *lua.LState, n int) string {
	switch v := L.Get(n).(type) {
	case lua.LString:
		return string(v)
	case lua.LNumber:
		return numberToString(float64(v))
	}
	cTypeError(L, n, "string")
	return ""
}

// cToUint64 converts a double to an unsigned 64-bit integer as
// putinteger's casts do on x86-64: negative numbers through int64,
// others through gcc's unsigned conversion (values from 2^64 up give 0).
func cToUint64(n float64) uint64 {
	if n < 0 {
		return uint64(cToInt64(n))
	}
	if n < 1<<63 {
		return uint64(int64(n))
	}
	return uint64(cToInt64(n-(1<<63))) ^ (1 << 63)
}

// cToInt64 is (int64_t)d on x86-64: out of range and NaN give INT64_MIN.
func cToInt64(d float64) int64 {
	if math.IsNaN(d) || d >= 1<<63 || d < -(1<<63) {
		return math.MinInt64
	}
	return int64(d)
}

func structPack(L *lua.LState) int {
	f := &structFormat{L: L, fmt: checkString51(L, 1)}
	// b_pack pushes a nil above its arguments, so the first missing one
	// is "got nil" rather than "got no value".
	L.Push(lua.LNil)
	h := defaultStructHeader()
	arg := 2
	var b strings.Builder
	total := 0
	for f.more() {
		opt := f.next()
		size := f.optsize(opt)
		pad := gettoalign(total, &h, opt, size)
		total += pad
		for ; pad > 0; pad-- {
			b.WriteByte(0)
		}
		switch opt {
		case 'b', 'B', 'h', 'H', 'l', 'L', 'T', 'i', 'I':
			v := cToUint64(checkNumber51(L, arg))
			arg++
			buf := make([]byte, size)
			for i := 0; i < size && i < 8; i++ {
				if h.little {
					buf[i] = byte(v)
				} else {
					buf[size-1-i] = byte(v)
				}
				v >>= 8
			}
			b.Write(buf)
		case 'x':
			b.WriteByte(0)
		case 'f':
			var buf [4]byte
			h.order().PutUint32(buf[:], math.Float32bits(float32(checkNumber51(L, arg))))
			arg++
			b.Write(buf[:])
		case 'd':
			var buf [8]byte
			h.order().PutUint64(buf[:], math.Float64bits(checkNumber51(L, arg)))
			arg++
			b.Write(buf[:])
		case 'c', 's':
			s := checkString51(L, arg)
			arg++
			if size == 0 {
				size = len(s)
			}
			if len(s) < size {
				// lua_struct.c checks the argument after the string.
				cArgError(L, arg, "string too short")
			}
			b.WriteString(s[:size])
			if opt == 's' {
				b.WriteByte(0)
				size++
			}
		default:
			f.control(opt, &h)
		}
		total += size
	}
	L.Push(lua.LString(b.String()))
	return 1
}

func structUnpack(L *lua.LState) int {
	f := &structFormat{L: L, fmt: checkString51(L, 1)}
	data := checkString51(L, 2)
	pos := 1
	if L.Get(3) != lua.LNil {
		pos = int(cToInt64(checkNumber51(L, 3)))
	}
	if pos <= 0 {
		cArgError(L, 3, "offset must be 1 or greater")
	}
	pos--
	h := defaultStructHeader()
	n := 0
	ld := len(data)
	for f.more() {
		opt := f.next()
		size := f.optsize(opt)
		pos += gettoalign(pos, &h, opt, size)
		if size > ld || pos > ld-size {
			cArgError(L, 2, "data string too short")
		}
		switch opt {
		case 'b', 'B', 'h', 'H', 'l', 'L', 'T', 'i', 'I':
			L.Push(lua.LNumber(structGetInteger(data[pos:pos+size], h.little, opt >= 'a', size)))
			n++
		case 'x':
		case 'f':
			L.Push(lua.LNumber(math.Float32frombits(h.order().Uint32([]byte(data[pos : pos+4])))))
			n++
		case 'd':
			L.Push(lua.LNumber(math.Float64frombits(h.order().Uint64([]byte(data[pos : pos+8])))))
			n++
		case 'c':
			if size == 0 {
				prev, ok := lua.LNil, false
				if n > 0 {
					prev = L.Get(-1)
					switch v := prev.(type) {
					case lua.LNumber:
						ok = true
					case lua.LString:
						_, ok = lua51.Str2d(string(v))
					}
				}
				if !ok {
					cError(L, "format 'c0' needs a previous size")
				}
				sz := checkNumber51(L, L.GetTop())
				L.Pop(1)
				n--
				size = int(cToInt64(sz))
				if size > ld || size < 0 || pos > ld-size {
					cArgError(L, 2, "data string too short")
				}
			}
			L.Push(lua.LString(data[pos : pos+size]))
			n++
		case 's':
			e := strings.IndexByte(data[pos:], 0)
			if e < 0 {
				cError(L, "unfinished string in data")
			}
			L.Push(lua.LString(data[pos : pos+e]))
			size = e + 1
			n++
		default:
			f.control(opt, &h)
		}
		pos += size
	}
	L.Push(lua.LNumber(pos + 1))
	return n + 1
}

// structGetInteger is getinteger: up to 8 bytes kept (the C code shifts a
// 64-bit value), sign extension from the top bit of size bytes (the
// shift count taken modulo 64, as x86-64 does).
func structGetInteger(b string, little, signed bool, size int) float64 {
	var l uint64
	if little {
		for i := size - 1; i >= 0; i-- {
			l = l<<8 | uint64(b[i])
		}
	} else {
		for i := 0; i < size; i++ {
			l = l<<8 | uint64(b[i])
		}
	}
	if !signed {
		return float64(l)
	}
	mask := ^uint64(0) << (uint(size*8-1) & 63)
	if l&mask != 0 {
		l |= mask
	}
	return float64(int64(l))
}

func structSize(L *lua.LState) int {
	f := &structFormat{L: L, fmt: checkString51(L, 1)}
	h := defaultStructHeader()
	pos := 0
	for f.more() {
		opt := f.next()
		size := f.optsize(opt)
		pos += gettoalign(pos, &h, opt, size)
		if opt == 's' {
			cArgError(L, 1, "option 's' has no fixed size")
		} else if opt == 'c' && size == 0 {
			cArgError(L, 1, "option 'c0' has no fixed size")
		}
		if !isAlnum(opt) {
			f.control(opt, &h)
		}
		pos += size
	}
	L.Push(lua.LNumber(pos))
	return 1
}

func isAlnum(b byte) bool {
	return isDigit(b) || (b >= 'a' && b <= 'z') || (b >= 'A' && b <= 'Z')
}

// cError raises an error from a library function as luaL_error does: the
// message gets the position of the caller when that is a Lua function
// and none when a Go function (pcall, for one) called it directly.
func cError(L *lua.LState, format string, args ...any) {
	L.Error(lua.LString(where(L, 1)+fmt.Sprintf(format, args...)), 0)
}

// cArgError is luaL_argerror: "bad argument #n to 'name' (msg)", where
// name is the one the calling Lua code used and '?' when a Go function
// called it.
func cArgError(L *lua.LState, n int, msg string) {
	name := "?"
	if dbg, ok := L.GetStack(0); ok && where(L, 1) != "" {
		if _, err := L.GetInfo("n", dbg, lua.LNil); err == nil && dbg.Name != "" {
			name = dbg.Name
		}
	}
	cError(L, "bad argument #%d to '%s' (%s)", n, name, msg)
}

// cTypeError is luaL_typerror: "tname expected, got <type or no value>".
func cTypeError(L *lua.LState, n int, tname string) {
	got := "no value"
	if n <= L.GetTop() {
		got = L.Get(n).Type().String()
	}
	cArgError(L, n, tname+" expected, got "+got)
}
