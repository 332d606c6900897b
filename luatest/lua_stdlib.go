package luatest

import (
	"fmt"
	"math"
	"strconv"
	"strings"

	lua "github.com/yuin/gopher-lua"
)

var posInf = math.Inf(1)

// defaultNaN is the NaN an x86-64 CPU produces for an invalid operation
// (0/0, inf*0, SQRTSD of a negative): its sign bit is set, so glibc prints
// it "-nan". Go's math.NaN() has the sign bit clear ("nan").
var defaultNaN = math.Float64frombits(0xfff8000000000000)

// mathNaNs replaces the math functions whose Go versions answer
// math.NaN() where glibc's answer the CPU's default NaN (printed "-nan" by
// tostring, as the real server does) or pass a NaN argument through with
// its sign: fmod, log, sin, cos and tan. The others already agree.
func mathNaNs(L *lua.LState, m *lua.LTable) {
	fn1 := func(name string, f func(float64) float64, invalid func(float64) bool) {
		m.RawSetString(name, L.NewFunction(func(L *lua.LState) int {
			x := checkNumber51(L, 1)
			switch {
			case math.IsNaN(x):
				L.Push(lua.LNumber(x))
			case invalid(x):
				L.Push(lua.LNumber(defaultNaN))
			default:
				L.Push(lua.LNumber(f(x)))
			}
			return 1
		}))
	}
	isInf := func(x float64) bool { return math.IsInf(x, 0) }
	fn1("log", math.Log, func(x float64) bool { return x < 0 })
	fn1("sin", math.Sin, isInf)
	fn1("cos", math.Cos, isInf)
	fn1("tan", math.Tan, isInf)
	m.RawSetString("fmod", L.NewFunction(func(L *lua.LState) int {
		x, y := checkNumber51(L, 1), checkNumber51(L, 2)
		switch {
		case math.IsNaN(x):
			L.Push(lua.LNumber(x))
		case math.IsNaN(y):
			L.Push(lua.LNumber(y))
		case y == 0 || math.IsInf(x, 0):
			L.Push(lua.LNumber(defaultNaN))
		default:
			L.Push(lua.LNumber(math.Mod(x, y)))
		}
		return 1
	}))
}

// mathRandom is Redis' patched math_random (deps/lua/src/lmathlib.c): the
// same ranges as Lua 5.1, drawn from [rand48] instead of rand().
func mathRandom(L *lua.LState, rnd *rand48) int {
	r := float64(rnd.next()%redisLrand48Max) / float64(redisLrand48Max)
	switch L.GetTop() {
	case 0:
		L.Push(lua.LNumber(r))
	case 1:
		u := cInt(checkNumber51(L, 1))
		if u < 1 {
			L.ArgError(1, "interval is empty")
		}
		L.Push(lua.LNumber(math.Floor(r*float64(u)) + 1))
	case 2:
		l, u := cInt(checkNumber51(L, 1)), cInt(checkNumber51(L, 2))
		if l > u {
			L.ArgError(2, "interval is empty")
		}
		L.Push(lua.LNumber(math.Floor(r*float64(u-l+1)) + float64(l)))
	default:
		L.RaiseError("wrong number of arguments")
	}
	return 1
}

// tableConcat is Lua 5.1's table.concat, with numbers printed "%.14g".
func tableConcat(L *lua.LState) int {
	t := L.CheckTable(1)
	sep := L.OptString(2, "")
	i := L.OptInt(3, 1)
	j := L.OptInt(4, t.Len())
	var b strings.Builder
	for k := i; k <= j; k++ {
		switch v := t.RawGetInt(k).(type) {
		case lua.LString:
			b.WriteString(string(v))
		case lua.LNumber:
			b.WriteString(numberToString(float64(v)))
		default:
			L.RaiseError("invalid value (at index %d) in table for 'concat'", k)
		}
		if k != j {
			b.WriteString(sep)
		}
	}
	L.Push(lua.LString(b.String()))
	return 1
}

// tableForeach is Lua 5.1's deprecated table.foreach / table.foreachi,
// which Redis still ships.
func tableForeach(indexed bool) lua.LGFunction {
	return func(L *lua.LState) int {
		t := L.CheckTable(1)
		f := L.CheckFunction(2)
		call := func(k, v lua.LValue) bool {
			L.Push(f)
			L.Push(k)
			L.Push(v)
			L.Call(2, 1)
			r := L.Get(-1)
			L.Pop(1)
			if r != lua.LNil {
				L.Push(r)
				return true
			}
			return false
		}
		if indexed {
			for i := 1; i <= t.Len(); i++ {
				if call(lua.LNumber(i), t.RawGetInt(i)) {
					return 1
				}
			}
			return 0
		}
		// lua_next, in Lua 5.1's order.
		for k, v := next51(L, t, lua.LNil); k != lua.LNil; k, v = next51(L, t, k) {
			if call(k, v) {
				return 1
			}
		}
		return 0
	}
}

// strFormat is Lua 5.1's string.format (lstrlib.c str_format): C printf
// conversions with Lua's argument rules — %d/%i/%o/%u/%x/%X/%c take the
// number cast to an integer, %s takes tostring of a number ("%.14g"), %q
// quotes as Lua does.
func strFormat(L *lua.LState) int {
	f := L.CheckString(1)
	arg := 1
	var b strings.Builder
	for i := 0; i < len(f); i++ {
		c := f[i]
		if c != '%' {
			b.WriteByte(c)
			continue
		}
		i++
		if i >= len(f) {
			L.RaiseError("invalid option '%%' to 'format'")
		}
		if f[i] == '%' {
			b.WriteByte('%')
			continue
		}
		// flags, width, precision (scanformat)
		start := i
		for i < len(f) && strings.IndexByte("-+ #0", f[i]) >= 0 {
			i++
		}
		if i-start > 5 {
			L.RaiseError("invalid format (repeated flags)")
		}
		for n := 0; i < len(f) && isDigit(f[i]); n++ {
			if n == 2 {
				L.RaiseError("invalid format (width or precision too long)")
			}
			i++
		}
		if i < len(f) && f[i] == '.' {
			i++
			for n := 0; i < len(f) && isDigit(f[i]); n++ {
				if n == 2 {
					L.RaiseError("invalid format (width or precision too long)")
				}
				i++
			}
		}
		if i >= len(f) {
			L.RaiseError("invalid option '%%%s' to 'format'", f[start:])
		}
		spec := f[start:i]
		conv := f[i]
		if arg++; arg > L.GetTop() {
			cArgError(L, arg, "no value")
		}
		switch conv {
		case 'c':
			// luaL_addlstring(&b, buff, strlen(buff)): a NUL ends the item.
			out := cFormat("%"+spec+"c", byte(int64(checkNumber51(L, arg))))
			if k := strings.IndexByte(out, 0); k >= 0 {
				out = out[:k]
			}
			b.WriteString(out)
		case 'd', 'i':
			b.WriteString(cFormat("%"+spec+"d", int64(checkNumber51(L, arg))))
		case 'o', 'u', 'x', 'X':
			n := int64(checkNumber51(L, arg))
			verb := conv
			if conv == 'u' {
				verb = 'd'
			}
			if n < 0 {
				// C prints the two's complement of a long as unsigned.
				b.WriteString(cFormat("%"+spec+string(verb), uint64(n)))
			} else {
				b.WriteString(cFormat("%"+spec+string(verb), n))
			}
		case 'e', 'E', 'f', 'g', 'G':
			b.WriteString(cFloat(spec, conv, float64(checkNumber51(L, arg))))
		case 'q':
			b.WriteString(luaQuote(checkString51(L, arg)))
		case 's':
			var s string
			switch v := L.CheckAny(arg).(type) {
			case lua.LNumber:
				s = numberToString(float64(v))
			case lua.LString:
				s = string(v)
			default:
				L.ArgError(arg, "string expected, got "+v.Type().String())
			}
			if !strings.Contains(spec, ".") && len(s) >= 100 {
				b.WriteString(s) // too long to format: kept whole, NULs included
			} else {
				b.WriteString(formatS(spec, s))
			}
		default:
			L.RaiseError("invalid option '%%%c' to 'format'", conv)
		}
	}
	L.Push(lua.LString(b.String()))
	return 1
}

// formatS is sprintf's %s as Lua 5.1's string.format reaches it: the
// string ends at its first NUL, the precision keeps that many bytes, the
// width pads with spaces (glibc ignores '0' for %s), counting bytes; Go's
// fmt counts runes.
func formatS(spec, s string) string {
	if k := strings.IndexByte(s, 0); k >= 0 {
		s = s[:k]
	}
	flags := spec[:len(spec)-len(strings.TrimLeft(spec, "-+ #0"))]
	rest := spec[len(flags):]
	widthStr, precStr, hasPrec := strings.Cut(rest, ".")
	if hasPrec {
		prec, _ := strconv.Atoi(precStr) // "" is 0, as in C
		if len(s) > prec {
			s = s[:prec]
		}
	}
	if width, _ := strconv.Atoi(widthStr); len(s) < width {
		pad := strings.Repeat(" ", width-len(s))
		if strings.Contains(flags, "-") {
			return s + pad
		}
		return pad + s
	}
	return s
}

// cFormat formats with Go's fmt, whose integer, string and char verbs
// agree with C's for the flags Lua allows.
func cFormat(format string, v any) string {
	if c, ok := v.(byte); ok {
		return fmt.Sprintf(strings.Replace(format, "c", "s", 1), string([]byte{c}))
	}
	return fmt.Sprintf(format, v)
}

// cFloat formats f like C's printf %e/%f/%g with the given flags, width
// and precision, including glibc's inf/nan spellings.
func cFloat(spec string, conv byte, f float64) string {
	if math.IsInf(f, 0) || math.IsNaN(f) {
		s := "inf"
		if math.IsNaN(f) {
			s = "nan"
		}
		if conv == 'E' || conv == 'G' {
			s = strings.ToUpper(s)
		}
		if math.Signbit(f) {
			s = "-" + s
		} else if strings.Contains(spec, "+") {
			s = "+" + s
		}
		return cFormat("%"+strings.Map(func(r rune) rune {
			if r == '0' || r == '#' || r == '+' {
				return -1
			}
			return r
		}, strings.SplitN(spec, ".", 2)[0])+"s", s)
	}
	if conv == 'g' || conv == 'G' {
		// Go's %g differs from C's for precision handling; build it.
		prec := 6
		flags, width := spec, ""
		if i := strings.IndexByte(spec, '.'); i >= 0 {
			p, _ := strconv.Atoi(spec[i+1:])
			prec = p
			flags = spec[:i]
		}
		j := 0
		for j < len(flags) && strings.IndexByte("-+ #0", flags[j]) >= 0 {
			j++
		}
		flags, width = flags[:j], flags[j:]
		if prec == 0 {
			prec = 1
		}
		s := strconv.FormatFloat(f, 'g', prec, 64)
		if strings.Contains(flags, "#") {
			s = strconv.FormatFloat(f, byte(conv), prec, 64)
		}
		if conv == 'G' {
			s = strings.ToUpper(s)
		}
		if f >= 0 && strings.Contains(flags, "+") {
			s = "+" + s
		} else if f >= 0 && strings.Contains(flags, " ") {
			s = " " + s
		}
		w, _ := strconv.Atoi(width)
		for len(s) < w {
			switch {
			case strings.Contains(flags, "-"):
				s += " "
			case strings.Contains(flags, "0"):
				if s[0] == '-' || s[0] == '+' || s[0] == ' ' {
					s = s[:1] + "0" + s[1:]
				} else {
					s = "0" + s
				}
			default:
				s = " " + s
			}
		}
		return s
	}
	return fmt.Sprintf("%"+spec+string(conv), f)
}

// luaQuote is %q of Lua 5.1 (addquoted): quotes, escaped backslash, quote
// and newline ("\" then a real newline), "\r" as \r, NUL as \000.
func luaQuote(s string) string {
	var b strings.Builder
	b.WriteByte('"')
	for i := 0; i < len(s); i++ {
		switch c := s[i]; c {
		case '"', '\\', '\n':
			b.WriteByte('\\')
			b.WriteByte(c)
		case '\r':
			b.WriteString(`\r`)
		case 0:
			b.WriteString(`\000`)
		default:
			b.WriteByte(c)
		}
	}
	b.WriteByte('"')
	return b.String()
}

// cInt is Lua 5.1's luaL_checkint of a number: (int)luaL_checkinteger,
// a 64-bit integer cut to its low 32 bits (math.random(2^32 + 1) is
// math.random(1) on the server).
func cInt(d float64) int {
	return int(int32(cToInt64(d)))
}
