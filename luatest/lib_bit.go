package luatest

import (
	"math"
	"math/bits"
	"strings"

	lua "github.com/yuin/gopher-lua"
)

// newBit is LuaBitOp 1.0 (http://bitop.luajit.org/api.html), the bit
// library Redis loads: 32-bit operations on Lua numbers, results as
// signed 32-bit numbers.
func newBit(L *lua.LState) *lua.LTable {
	t := L.NewTable()
	reduce := func(op func(a, b int32) int32) lua.LGFunction {
		return func(L *lua.LState) int {
			r := bitArg(L, 1)
			for i := 2; i <= L.GetTop(); i++ {
				r = op(r, bitArg(L, i))
			}
			L.Push(lua.LNumber(r))
			return 1
		}
	}
	shift := func(op func(a int32, n uint) int32) lua.LGFunction {
		return func(L *lua.LState) int {
			a := bitArg(L, 1)
			n := uint(bitArg(L, 2)) & 31
			L.Push(lua.LNumber(op(a, n)))
			return 1
		}
	}
	fns := map[string]lua.LGFunction{
		"tobit":   func(L *lua.LState) int { L.Push(lua.LNumber(bitArg(L, 1))); return 1 },
		"bnot":    func(L *lua.LState) int { L.Push(lua.LNumber(^bitArg(L, 1))); return 1 },
		"band":    reduce(func(a, b int32) int32 { return a & b }),
		"bor":     reduce(func(a, b int32) int32 { return a | b }),
		"bxor":    reduce(func(a, b int32) int32 { return a ^ b }),
		"lshift":  shift(func(a int32, n uint) int32 { return int32(uint32(a) << n) }),
		"rshift":  shift(func(a int32, n uint) int32 { return int32(uint32(a) >> n) }),
		"arshift": shift(func(a int32, n uint) int32 { return a >> n }),
		"rol":     shift(func(a int32, n uint) int32 { return int32(bits.RotateLeft32(uint32(a), int(n))) }),
		"ror":     shift(func(a int32, n uint) int32 { return int32(bits.RotateLeft32(uint32(a), -int(n))) }),
		"bswap": func(L *lua.LState) int {
			L.Push(lua.LNumber(int32(bits.ReverseBytes32(uint32(bitArg(L, 1))))))
			return 1
		},
		"tohex": bitTohex,
	}
	for name, fn := range fns {
		t.RawSetString(name, L.NewFunction(fn))
	}
	return t
}

// bitArg is LuaBitOp's barg, bit for bit: the low 32 bits of the double
// n + 2^52 + 2^51. Within ±2^51 that is n rounded to an integer (ties to
// even) modulo 2^32; past it the addition rounds first, as on the server
// (bit.band(2^52 + 255, 255) is 0 there, not 255).
func bitArg(L *lua.LState, i int) int32 {
	f := float64(L.CheckNumber(i))
	return int32(uint32(math.Float64bits(f + 6755399441055744.0)))
}

// bitTohex is bit.tohex(x [, n]): n hex digits (default 8), upper case
// when n is negative.
func bitTohex(L *lua.LState) int {
	b := uint32(bitArg(L, 1))
	n := int32(8)
	if L.GetTop() >= 2 && L.Get(2) != lua.LNil {
		n = bitArg(L, 2)
	}
	hex := "0123456789abcdef"
	if n < 0 {
		n = -n
		hex = "0123456789ABCDEF"
	}
	if n > 8 {
		n = 8
	}
	var sb strings.Builder
	for i := n - 1; i >= 0; i-- {
		sb.WriteByte(hex[(b>>(4*uint(i)))&15])
	}
	L.Push(lua.LString(sb.String()))
	return 1
}
