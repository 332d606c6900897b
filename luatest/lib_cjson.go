package luatest

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"unicode/utf8"

	lua "github.com/yuin/gopher-lua"
)

// newCjson is the cjson library Redis loads (lua-cjson 2.1.0 with its
// defaults): encode and decode plus cjson.null. Written on the standard
// library; see the README for where it differs (object key order).
func newCjson(L *lua.LState) *lua.LTable {
	t := L.NewTable()
	null := L.NewUserData() // cjson.null is a lightuserdata NULL
	t.RawSetString("null", null)
	t.RawSetString("encode", L.NewFunction(func(L *lua.LState) int {
		if L.GetTop() != 1 {
			L.RaiseError("bad argument #1 to 'encode' (expected 1 argument)")
		}
		var b strings.Builder
		cjsonEncode(L, &b, L.Get(1), null, 0)
		L.Push(lua.LString(b.String()))
		return 1
	}))
	t.RawSetString("decode", L.NewFunction(func(L *lua.LState) int {
		if L.GetTop() != 1 {
			L.RaiseError("bad argument #1 to 'decode' (expected 1 argument)")
		}
		d := &jsonDecoder{L: L, s: L.CheckString(1), null: null}
		v := d.value(0)
		d.skipSpace()
		if d.i < len(d.s) {
			d.fail("the end", d.tokenName())
		}
		L.Push(v)
		return 1
	}))
	for _, name := range []string{"encode_sparse_array", "encode_max_depth", "decode_max_depth",
		"encode_number_precision", "encode_keep_buffer", "encode_invalid_numbers", "decode_invalid_numbers"} {
		t.RawSetString(name, L.NewFunction(func(L *lua.LState) int { return 0 }))
	}
	t.RawSetString("new", L.NewFunction(func(L *lua.LState) int { L.Push(newCjson(L)); return 1 }))
	t.RawSetString("_NAME", lua.LString("cjson"))
	t.RawSetString("_VERSION", lua.LString("2.1.0"))
	return t
}

func cjsonEncode(L *lua.LState, b *strings.Builder, v lua.LValue, null *lua.LUserData, depth int) {
	switch v := v.(type) {
	case *lua.LNilType:
		b.WriteString("null")
	case lua.LBool:
		if v {
			b.WriteString("true")
		} else {
			b.WriteString("false")
		}
	case lua.LNumber:
		f := float64(v)
		if math.IsInf(f, 0) || math.IsNaN(f) {
			L.RaiseError("Cannot serialise number: must not be NaN or Inf")
		}
		b.WriteString(numberToString(f))
	case lua.LString:
		jsonQuote(b, string(v))
	case *lua.LUserData:
		if v == null {
			b.WriteString("null")
			return
		}
		L.RaiseError("Cannot serialise userdata: type not supported")
	case *lua.LTable:
		depth++
		if depth > 1000 {
			L.RaiseError("Cannot serialise, excessive nesting (%d)", depth)
		}
		if n, ok := luaArrayLength(L, v); ok {
			b.WriteByte('[')
			for i := 1; i <= n; i++ {
				if i > 1 {
					b.WriteByte(',')
				}
				cjsonEncode(L, b, v.RawGetInt(i), null, depth)
			}
			b.WriteByte(']')
			return
		}
		b.WriteByte('{')
		first := true
		forEach(v, func(k, val lua.LValue) {
			if !first {
				b.WriteByte(',')
			}
			first = false
			switch k := k.(type) {
			case lua.LString:
				jsonQuote(b, string(k))
			case lua.LNumber:
				b.WriteString(`"` + numberToString(float64(k)) + `"`)
			default:
				L.RaiseError("Cannot serialise table: table key must be a number or string")
			}
			b.WriteByte(':')
			cjsonEncode(L, b, val, null, depth)
		})
		b.WriteByte('}')
	default:
		L.RaiseError("Cannot serialise %s: type not supported", v.Type().String())
	}
}

// luaArrayLength is lua-cjson's lua_array_length: a table whose keys are
// all positive integers is an array of its largest key (holes become
// null) unless it is "excessively sparse"; an empty table is an object.
func luaArrayLength(L *lua.LState, t *lua.LTable) (int, bool) {
	maxKey, items := 0, 0
	array := true
	forEach(t, func(k, _ lua.LValue) {
		n, ok := k.(lua.LNumber)
		if !ok || float64(n) < 1 || math.Floor(float64(n)) != float64(n) {
			array = false
			return
		}
		if int(n) > maxKey {
			maxKey = int(n)
		}
		items++
	})
	if !array || items == 0 {
		return 0, false
	}
	if maxKey > 10 && maxKey > items*2 {
		L.RaiseError("Cannot serialise table: excessively sparse array")
	}
	return maxKey, true
}

// jsonQuote escapes as lua-cjson does: '"', '\\' and '/' with a backslash,
// control characters and DEL as \b \f \n \r \t or \u00XX; other bytes as is.
func jsonQuote(b *strings.Builder, s string) {
	b.WriteByte('"')
	for i := 0; i < len(s); i++ {
		switch c := s[i]; c {
		case '"', '\\', '/':
			b.WriteByte('\\')
			b.WriteByte(c)
		case '\b':
			b.WriteString(`\b`)
		case '\f':
			b.WriteString(`\f`)
		case '\n':
			b.WriteString(`\n`)
		case '\r':
			b.WriteString(`\r`)
		case '\t':
			b.WriteString(`\t`)
		default:
			if c < 0x20 || c == 0x7f {
				fmt.Fprintf(b, `\u%04x`, c)
			} else {
				b.WriteByte(c)
			}
		}
	}
	b.WriteByte('"')
}

// jsonDecoder is cjson.decode, with lua-cjson's error messages
// ("Expected value but found invalid token at character 1").
type jsonDecoder struct {
	L    *lua.LState
	s    string
	i    int
	null *lua.LUserData
}

func (d *jsonDecoder) fail(expected, found string) {
	d.L.RaiseError("Expected %s but found %s at character %d", expected, found, d.i+1)
}

func (d *jsonDecoder) skipSpace() {
	for d.i < len(d.s) && strings.IndexByte(" \t\r\n", d.s[d.i]) >= 0 {
		d.i++
	}
}

// tokenName names the token at d.i as json_token_type_name does.
func (d *jsonDecoder) tokenName() string {
	if d.i >= len(d.s) {
		return "T_END"
	}
	switch c := d.s[d.i]; {
	case c == '{':
		return "T_OBJ_BEGIN"
	case c == '}':
		return "T_OBJ_END"
	case c == '[':
		return "T_ARR_BEGIN"
	case c == ']':
		return "T_ARR_END"
	case c == ',':
		return "T_COMMA"
	case c == ':':
		return "T_COLON"
	case c == '"':
		return "T_STRING"
	case c == '-' || isDigit(c):
		return "T_NUMBER"
	case strings.HasPrefix(d.s[d.i:], "true"), strings.HasPrefix(d.s[d.i:], "false"):
		return "T_BOOLEAN"
	case strings.HasPrefix(d.s[d.i:], "null"):
		return "T_NULL"
	}
	return "invalid token"
}

func (d *jsonDecoder) value(depth int) lua.LValue {
	d.skipSpace()
	if d.i >= len(d.s) {
		d.fail("value", "T_END")
	}
	switch c := d.s[d.i]; {
	case c == '{':
		if depth >= 1000 {
			d.L.RaiseError("Found too many nested data structures (%d) at character %d", depth+1, d.i+1)
		}
		d.i++
		t := d.L.NewTable()
		d.skipSpace()
		if d.i < len(d.s) && d.s[d.i] == '}' {
			d.i++
			return t
		}
		for {
			d.skipSpace()
			if d.i >= len(d.s) || d.s[d.i] != '"' {
				d.fail("object key string", d.tokenName())
			}
			k := d.str()
			d.skipSpace()
			if d.i >= len(d.s) || d.s[d.i] != ':' {
				d.fail("colon", d.tokenName())
			}
			d.i++
			t.RawSetString(k, d.value(depth+1))
			d.skipSpace()
			if d.i < len(d.s) && d.s[d.i] == ',' {
				d.i++
				continue
			}
			if d.i < len(d.s) && d.s[d.i] == '}' {
				d.i++
				return t
			}
			d.fail("comma or object end", d.tokenName())
		}
	case c == '[':
		if depth >= 1000 {
			d.L.RaiseError("Found too many nested data structures (%d) at character %d", depth+1, d.i+1)
		}
		d.i++
		t := d.L.NewTable()
		d.skipSpace()
		if d.i < len(d.s) && d.s[d.i] == ']' {
			d.i++
			return t
		}
		for n := 1; ; n++ {
			t.RawSetInt(n, d.value(depth+1))
			d.skipSpace()
			if d.i < len(d.s) && d.s[d.i] == ',' {
				d.i++
				continue
			}
			if d.i < len(d.s) && d.s[d.i] == ']' {
				d.i++
				return t
			}
			d.fail("comma or array end", d.tokenName())
		}
	case c == '"':
		return lua.LString(d.str())
	case c == '-' || isDigit(c) || c == 'I' || c == 'N' || c == 'i' || c == 'n' && !strings.HasPrefix(d.s[d.i:], "null"):
		f, n := strtod(d.s[d.i:])
		if n == 0 {
			d.fail("value", "invalid number")
		}
		d.i += n
		return lua.LNumber(f)
	case strings.HasPrefix(d.s[d.i:], "true"):
		d.i += 4
		return lua.LTrue
	case strings.HasPrefix(d.s[d.i:], "false"):
		d.i += 5
		return lua.LFalse
	case strings.HasPrefix(d.s[d.i:], "null"):
		d.i += 4
		return d.null
	}
	d.fail("value", d.tokenName())
	return lua.LNil
}

func (d *jsonDecoder) str() string {
	start := d.i
	d.i++ // opening quote
	var b strings.Builder
	for {
		if d.i >= len(d.s) {
			d.i = start
			d.fail("value", "unexpected end of string")
		}
		c := d.s[d.i]
		switch {
		case c == '"':
			d.i++
			return b.String()
		case c == '\\':
			if d.i+1 >= len(d.s) {
				d.i = start
				d.fail("value", "unexpected end of string")
			}
			e := d.s[d.i+1]
			switch e {
			case '"', '\\', '/':
				b.WriteByte(e)
			case 'b':
				b.WriteByte('\b')
			case 'f':
				b.WriteByte('\f')
			case 'n':
				b.WriteByte('\n')
			case 'r':
				b.WriteByte('\r')
			case 't':
				b.WriteByte('\t')
			case 'u':
				if d.i+6 > len(d.s) {
					d.i = start
					d.fail("value", "invalid unicode escape code")
				}
				n, err := strconv.ParseUint(d.s[d.i+2:d.i+6], 16, 16)
				if err != nil {
					d.i = start
					d.fail("value", "invalid unicode escape code")
				}
				r := rune(n)
				d.i += 4
				if r >= 0xD800 && r < 0xDC00 && d.i+8 <= len(d.s) && d.s[d.i+2:d.i+4] == `\u` {
					if lo, err := strconv.ParseUint(d.s[d.i+4:d.i+8], 16, 16); err == nil && lo >= 0xDC00 && lo < 0xE000 {
						r = (r-0xD800)<<10 + (rune(lo) - 0xDC00) + 0x10000
						d.i += 6
					}
				}
				var buf [4]byte
				b.Write(buf[:utf8.EncodeRune(buf[:], r)])
			default:
				d.i = start
				d.fail("value", "invalid escape code")
			}
			d.i += 2
		case c < 0x20:
			d.i = start
			d.fail("value", "invalid token")
		default:
			b.WriteByte(c)
			d.i++
		}
	}
}
