package luatest

import (
	"fmt"
	"math"
	"strings"

	"github.com/luagen/luagen/internal/lua51"
	"github.com/luagen/luagen/luatest/resp"
	lua "github.com/yuin/gopher-lua"
)

// cjsonConfig is lua-cjson's json_config_t: the settings of one cjson
// module table, kept by its functions (the C code's upvalue). The global
// cjson's settings live as long as the interpreter: a script's
// cjson.encode_max_depth(5) holds for the scripts after it until SCRIPT
// FLUSH starts a new interpreter, as on the server; cjson.new() makes a
// module with settings of its own.
type cjsonConfig struct {
	sparseConvert, sparseRatio, sparseSafe int
	encodeMaxDepth, decodeMaxDepth         int
	encodeInvalidNumbers                   int // 0 off, 1 on, 2 null
	decodeInvalidNumbers                   int
	encodeKeepBuffer                       int
	encodeNumberPrecision                  int
}

// newCjsonConfig is json_create_config: lua-cjson 2.1.0's defaults as
// Redis 7.0 builds it (deps/lua/src/lua_cjson.c).
func newCjsonConfig() *cjsonConfig {
	return &cjsonConfig{sparseRatio: 2, sparseSafe: 10, encodeMaxDepth: 1000, decodeMaxDepth: 1000,
		decodeInvalidNumbers: 1, encodeKeepBuffer: 1, encodeNumberPrecision: 14}
}

// newCjson is the cjson library Redis loads (lua-cjson 2.1.0,
// lua_cjson_new): encode, decode, the settings, new, and cjson.null (the
// NULL light userdata, one value shared by every module table new makes).
// Ported from the C source of Redis 7.0.15; see the README for where it
// differs (object key order).
func newCjson(L *lua.LState, null lua.LValue) *lua.LTable {
	cfg := newCjsonConfig()
	t := L.NewTable()
	fns := []struct {
		name string
		fn   func(*lua.LState, *cjsonConfig, lua.LValue) int
	}{
		{"encode", cjsonEncode},
		{"decode", cjsonDecode},
		{"encode_sparse_array", cjsonEncodeSparseArray},
		{"encode_max_depth", func(L *lua.LState, cfg *cjsonConfig, _ lua.LValue) int {
			cjsonArgInit(L, 1)
			return cjsonIntegerOption(L, 1, &cfg.encodeMaxDepth, 1, math.MaxInt32)
		}},
		{"decode_max_depth", func(L *lua.LState, cfg *cjsonConfig, _ lua.LValue) int {
			cjsonArgInit(L, 1)
			return cjsonIntegerOption(L, 1, &cfg.decodeMaxDepth, 1, math.MaxInt32)
		}},
		{"encode_number_precision", func(L *lua.LState, cfg *cjsonConfig, _ lua.LValue) int {
			cjsonArgInit(L, 1)
			return cjsonIntegerOption(L, 1, &cfg.encodeNumberPrecision, 1, 14)
		}},
		{"encode_keep_buffer", func(L *lua.LState, cfg *cjsonConfig, _ lua.LValue) int {
			// The buffer itself is invisible to scripts; the setting is not.
			cjsonArgInit(L, 1)
			return cjsonEnumOption(L, 1, &cfg.encodeKeepBuffer, nil, 1)
		}},
		{"encode_invalid_numbers", func(L *lua.LState, cfg *cjsonConfig, _ lua.LValue) int {
			cjsonArgInit(L, 1)
			return cjsonEnumOption(L, 1, &cfg.encodeInvalidNumbers, []string{"off", "on", "null"}, 1)
		}},
		{"decode_invalid_numbers", func(L *lua.LState, cfg *cjsonConfig, _ lua.LValue) int {
			cjsonArgInit(L, 1)
			return cjsonEnumOption(L, 1, &cfg.decodeInvalidNumbers, nil, 1)
		}},
		{"new", func(L *lua.LState, _ *cjsonConfig, null lua.LValue) int {
			L.Push(newCjson(L, null))
			return 1
		}},
	}
	for _, f := range fns {
		fn := f.fn
		t.RawSetString(f.name, L.NewFunction(func(L *lua.LState) int { return fn(L, cfg, null) }))
	}
	t.RawSetString("null", null)
	t.RawSetString("_NAME", lua.LString("cjson"))
	t.RawSetString("_VERSION", lua.LString("2.1.0"))
	return t
}

// cjsonArgInit is json_arg_init: at most n arguments, padded with nils.
func cjsonArgInit(L *lua.LState, n int) {
	if L.GetTop() > n {
		cArgError(L, n+1, "found too many arguments")
	}
	L.SetTop(n)
}

// checkInt51 is luaL_checkinteger stored in a C int: a number or numeric
// string, converted to a 64-bit integer as x86-64 does, then truncated to
// 32 bits.
func checkInt51(L *lua.LState, n int) int {
	return int(int32(cToInt64(checkNumber51(L, n))))
}

// cjsonIntegerOption is json_integer_option: a nil argument leaves the
// setting; the range error names argument #1 whatever the argument's
// position, as the C code does. It pushes the setting.
func cjsonIntegerOption(L *lua.LState, idx int, setting *int, lo, hi int) int {
	if L.Get(idx) != lua.LNil {
		v := checkInt51(L, idx)
		if v < lo || v > hi {
			cArgError(L, 1, fmt.Sprintf("expected integer between %d and %d", lo, hi))
		}
		*setting = v
	}
	L.Push(lua.LNumber(*setting))
	return 1
}

// cjsonEnumOption is json_enum_option: a boolean, or one of options by
// name (luaL_checkoption); nil leaves the setting. It pushes the setting
// as a boolean when it is off or boolTrue, else as its name.
func cjsonEnumOption(L *lua.LState, idx int, setting *int, options []string, boolTrue int) int {
	if options == nil {
		options, boolTrue = []string{"off", "on"}, 1
	}
	switch v := L.Get(idx).(type) {
	case *lua.LNilType:
	case lua.LBool:
		if boolTrue == 0 {
			*setting = checkOption51(L, idx, options)
		} else if v {
			*setting = boolTrue
		} else {
			*setting = 0
		}
	default:
		*setting = checkOption51(L, idx, options)
	}
	if boolTrue != 0 && (*setting == 0 || *setting == boolTrue) {
		L.Push(lua.LBool(*setting != 0))
	} else {
		L.Push(lua.LString(options[*setting]))
	}
	return 1
}

// checkOption51 is luaL_checkoption without a default.
func checkOption51(L *lua.LState, idx int, options []string) int {
	name := checkString51(L, idx)
	for i, o := range options {
		if o == name {
			return i
		}
	}
	cArgError(L, idx, "invalid option '"+cString(name)+"'")
	return 0
}

// cjson.encode_sparse_array([convert[, ratio[, safe]]]) — each argument
// is applied before the next is checked.
func cjsonEncodeSparseArray(L *lua.LState, cfg *cjsonConfig, _ lua.LValue) int {
	cjsonArgInit(L, 3)
	cjsonEnumOption(L, 1, &cfg.sparseConvert, nil, 1)
	cjsonIntegerOption(L, 2, &cfg.sparseRatio, 0, math.MaxInt32)
	cjsonIntegerOption(L, 3, &cfg.sparseSafe, 0, math.MaxInt32)
	return 3
}

// ===== encoding =====

// cjsonEncoder is json_encode's state. slots counts the Lua stack slots
// the C code would hold, for json_check_encode_depth's lua_checkstack.
type cjsonEncoder struct {
	L    *lua.LState
	cfg  *cjsonConfig
	null lua.LValue
	b    strings.Builder
}

func cjsonEncode(L *lua.LState, cfg *cjsonConfig, null lua.LValue) int {
	if L.GetTop() != 1 {
		cArgError(L, 1, "expected 1 argument")
	}
	e := &cjsonEncoder{L: L, cfg: cfg, null: null}
	// The argument is the one slot of the C function's stack.
	e.data(L.Get(1), 0, 1)
	L.Push(lua.LString(e.b.String()))
	return 1
}

// exception is json_encode_exception: "Cannot serialise <type>: reason".
func (e *cjsonEncoder) exception(v lua.LValue, reason string) {
	cError(e.L, "Cannot serialise %s: %s", luaTypeName(v), reason)
}

// luaTypeName is lua_typename(lua_type(v)): a light userdata is "userdata".
func luaTypeName(v lua.LValue) string {
	return v.Type().String()
}

// data is json_append_data.
func (e *cjsonEncoder) data(v lua.LValue, depth, slots int) {
	switch v := v.(type) {
	case lua.LString:
		jsonQuote(&e.b, string(v))
	case lua.LNumber:
		e.number(v)
	case lua.LBool:
		if v {
			e.b.WriteString("true")
		} else {
			e.b.WriteString("false")
		}
	case *lua.LTable:
		depth++
		// json_check_encode_depth: the depth setting, and room for a key,
		// a value and an error message on the stack.
		if depth > e.cfg.encodeMaxDepth || slots+3 > luaMaxCStack {
			cError(e.L, "Cannot serialise, excessive nesting (%d)", depth)
		}
		if n := e.arrayLength(v); n > 0 {
			e.b.WriteByte('[')
			for i := 1; i <= n; i++ {
				if i > 1 {
					e.b.WriteByte(',')
				}
				e.data(v.RawGetInt(i), depth, slots+1)
			}
			e.b.WriteByte(']')
			return
		}
		e.b.WriteByte('{')
		first := true
		forEach(v, func(k, val lua.LValue) {
			if !first {
				e.b.WriteByte(',')
			}
			first = false
			switch k := k.(type) {
			case lua.LNumber:
				e.b.WriteByte('"')
				e.number(k)
				e.b.WriteString(`":`)
			case lua.LString:
				jsonQuote(&e.b, string(k))
				e.b.WriteByte(':')
			default:
				e.exception(k, "table key must be a number or string")
			}
			e.data(val, depth, slots+2)
		})
		e.b.WriteByte('}')
	case *lua.LNilType:
		e.b.WriteString("null")
	default:
		if v == e.null {
			e.b.WriteString("null")
			return
		}
		e.exception(v, "type not supported")
	}
}

// number is json_append_number: invalid numbers refused, written as C
// writes them, or as null, by the encode_invalid_numbers setting; the
// others with "%.<precision>g".
func (e *cjsonEncoder) number(n lua.LNumber) {
	f := float64(n)
	switch e.cfg.encodeInvalidNumbers {
	case 0:
		if math.IsInf(f, 0) || math.IsNaN(f) {
			e.exception(n, "must not be NaN or Inf")
		}
	case 1:
		if math.IsNaN(f) {
			e.b.WriteString("nan")
			return
		}
	default:
		if math.IsInf(f, 0) || math.IsNaN(f) {
			e.b.WriteString("null")
			return
		}
	}
	e.b.WriteString(resp.FormatG(f, e.cfg.encodeNumberPrecision))
}

// arrayLength is lua_array_length: a table whose keys are all numbers
// that are integers from 1 is an array of its largest key (holes become
// null) unless it is excessively sparse by the encode_sparse_array
// settings (an error, or an object when convert is on); anything else is
// an object (-1). The C code keeps the largest key in an int, which a key
// past 2^31-1 turns into INT_MIN (x86-64's cvttsd2si), and multiplies ints.
func (e *cjsonEncoder) arrayLength(t *lua.LTable) int {
	var maxKey, items int32
	array := true
	forEach(t, func(k, _ lua.LValue) {
		n, ok := k.(lua.LNumber)
		if !array {
			return
		}
		if f := float64(n); !ok || f == 0 || math.Floor(f) != f || f < 1 {
			array = false
			return
		}
		if float64(n) > float64(maxKey) {
			maxKey = cToInt32(float64(n))
		}
		items++
	})
	if !array {
		return -1
	}
	cfg := e.cfg
	if ratio := int32(cfg.sparseRatio); ratio > 0 && maxKey > items*ratio && maxKey > int32(cfg.sparseSafe) {
		if cfg.sparseConvert == 0 {
			e.exception(t, "excessively sparse array")
		}
		return -1
	}
	return int(maxKey)
}

// cToInt32 is C's (int) conversion of a double on x86-64: INT_MIN when out
// of range.
func cToInt32(f float64) int32 {
	if math.IsNaN(f) || f >= 2147483648.0 || f <= -2147483649.0 {
		return math.MinInt32
	}
	return int32(f)
}

// jsonQuote escapes as lua-cjson's char2escape does: '"', '\\' and '/'
// with a backslash, \b \t \n \f \r, other control characters and DEL as
// \u00XX; other bytes as is.
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

// ===== decoding =====

// JSON token types, in json_token_type_t's order.
const (
	tObjBegin = iota
	tObjEnd
	tArrBegin
	tArrEnd
	tString
	tNumber
	tBoolean
	tNull
	tColon
	tComma
	tEnd
	tWhitespace
	tError
	tUnknown
)

var jsonTokenNames = [...]string{"T_OBJ_BEGIN", "T_OBJ_END", "T_ARR_BEGIN", "T_ARR_END", "T_STRING",
	"T_NUMBER", "T_BOOLEAN", "T_NULL", "T_COLON", "T_COMMA", "T_END", "T_WHITESPACE", "T_ERROR", "T_UNKNOWN"}

// jsonCh2Token and jsonEscape2Char are json_create_config's tables.
var jsonCh2Token, jsonEscape2Char = func() (tok [256]int, esc [256]byte) {
	for i := range tok {
		tok[i] = tError
	}
	for c, t := range map[byte]int{'{': tObjBegin, '}': tObjEnd, '[': tArrBegin, ']': tArrEnd, ',': tComma,
		':': tColon, 0: tEnd, ' ': tWhitespace, '\t': tWhitespace, '\n': tWhitespace, '\r': tWhitespace} {
		tok[c] = t
	}
	for _, c := range []byte("fiInNt\"+-0123456789") {
		tok[c] = tUnknown
	}
	for c, e := range map[byte]byte{'"': '"', '\\': '\\', '/': '/', 'b': '\b', 't': '\t', 'n': '\n',
		'f': '\f', 'r': '\r', 'u': 'u'} {
		esc[c] = e
	}
	return
}()

// jsonToken is json_token_t.
type jsonToken struct {
	typ     int
	index   int
	str     string // T_STRING's value, T_ERROR's description
	num     float64
	boolean bool
}

// jsonParser is json_parse_t. The text ends at its first NUL byte, as
// the C code reads it.
type jsonParser struct {
	L     *lua.LState
	cfg   *cjsonConfig
	null  lua.LValue
	s     string
	p     int
	depth int
}

func cjsonDecode(L *lua.LState, cfg *cjsonConfig, null lua.LValue) int {
	if L.GetTop() != 1 {
		cArgError(L, 1, "expected 1 argument")
	}
	s := checkString51(L, 1)
	// Detect Unicode other than UTF-8 (RFC 4627, section 3).
	if len(s) >= 2 && (s[0] == 0 || s[1] == 0) {
		cError(L, "JSON parser does not support UTF-16 or UTF-32")
	}
	j := &jsonParser{L: L, cfg: cfg, null: null, s: cString(s)}
	var tok jsonToken
	j.next(&tok)
	// The argument is the one slot of the C function's stack.
	v := j.value(&tok, 1)
	j.next(&tok)
	if tok.typ != tEnd {
		j.fail("the end", &tok)
	}
	L.Push(v)
	return 1
}

func (j *jsonParser) at(i int) byte {
	if i < len(j.s) {
		return j.s[i]
	}
	return 0
}

func (j *jsonParser) setError(tok *jsonToken, msg string) {
	tok.typ, tok.index, tok.str = tError, j.p, msg
}

// next is json_next_token.
func (j *jsonParser) next(tok *jsonToken) {
	var ch byte
	for {
		ch = j.at(j.p)
		tok.typ = jsonCh2Token[ch]
		if tok.typ != tWhitespace {
			break
		}
		j.p++
	}
	tok.index = j.p
	switch tok.typ {
	case tError:
		j.setError(tok, "invalid token")
		return
	case tEnd:
		return
	case tUnknown:
	default:
		j.p++
		return
	}
	rest := j.s[j.p:]
	switch {
	case ch == '"':
		j.stringToken(tok)
		return
	case ch == '-' || isDigit(ch):
		if j.cfg.decodeInvalidNumbers == 0 && j.invalidNumber() {
			j.setError(tok, "invalid number")
			return
		}
		j.numberToken(tok)
		return
	case strings.HasPrefix(rest, "true"):
		tok.typ, tok.boolean = tBoolean, true
		j.p += 4
		return
	case strings.HasPrefix(rest, "false"):
		tok.typ, tok.boolean = tBoolean, false
		j.p += 5
		return
	case strings.HasPrefix(rest, "null"):
		tok.typ = tNull
		j.p += 4
		return
	case j.cfg.decodeInvalidNumbers != 0 && j.invalidNumber():
		// Inf, NaN, hex and '+': only numbers known to be invalid JSON, so
		// that other bad tokens are "invalid token".
		j.numberToken(tok)
		return
	}
	j.setError(tok, "invalid token")
}

// invalidNumber is json_is_invalid_number: a '+', hex or a leading zero,
// inf or nan (any case).
func (j *jsonParser) invalidNumber() bool {
	p := j.p
	if j.at(p) == '+' {
		return true
	}
	if j.at(p) == '-' {
		p++
	}
	if c := j.at(p); c == '0' {
		c2 := j.at(p + 1)
		return c2|0x20 == 'x' || isDigit(c2)
	} else if c <= '9' || c >= 0x80 { // a signed char
		return false
	}
	rest := strings.ToLower(j.s[p:min(p+3, len(j.s))])
	return rest == "inf" || rest == "nan"
}

// numberToken is json_next_number_token: strtod.
func (j *jsonParser) numberToken(tok *jsonToken) {
	f, n := lua51.Strtod(j.s[j.p:])
	if n == 0 {
		j.setError(tok, "invalid number")
		return
	}
	tok.typ, tok.num = tNumber, f
	j.p += n
}

// stringToken is json_next_string_token; an error's index is where the
// string went wrong.
func (j *jsonParser) stringToken(tok *jsonToken) {
	j.p++ // the opening quote
	var b []byte
	for {
		ch := j.at(j.p)
		if ch == '"' {
			break
		}
		if ch == 0 {
			j.setError(tok, "unexpected end of string")
			return
		}
		if ch == '\\' {
			ch = jsonEscape2Char[j.at(j.p+1)]
			if ch == 'u' {
				if j.unicodeEscape(&b) {
					continue
				}
				j.setError(tok, "invalid unicode escape code")
				return
			}
			if ch == 0 {
				j.setError(tok, "invalid escape code")
				return
			}
			j.p++
		}
		b = append(b, ch)
		j.p++
	}
	j.p++
	tok.typ, tok.str = tString, string(b)
}

// hex4 is decode_hex4: four hex digits at i, or -1.
func (j *jsonParser) hex4(i int) int {
	n := 0
	for k := 0; k < 4; k++ {
		c := j.at(i + k)
		var d int
		switch {
		case isDigit(c):
			d = int(c - '0')
		case c|0x20 >= 'a' && c|0x20 <= 'f':
			d = int(c|0x20-'a') + 10
		default:
			return -1
		}
		n = n<<4 | d
	}
	return n
}

// unicodeEscape is json_append_unicode_escape: \uXXXX, or a UTF-16
// surrogate pair of two, as UTF-8.
func (j *jsonParser) unicodeEscape(b *[]byte) bool {
	cp := j.hex4(j.p + 2)
	if cp < 0 {
		return false
	}
	escLen := 6
	if cp&0xF800 == 0xD800 {
		if cp&0x400 != 0 || j.at(j.p+6) != '\\' || j.at(j.p+7) != 'u' {
			return false
		}
		lo := j.hex4(j.p + 8)
		if lo < 0 || lo&0xFC00 != 0xDC00 {
			return false
		}
		cp = ((cp&0x3FF)<<10 | lo&0x3FF) + 0x10000
		escLen = 12
	}
	switch {
	case cp <= 0x7F:
		*b = append(*b, byte(cp))
	case cp <= 0x7FF:
		*b = append(*b, byte(cp>>6|0xC0), byte(cp&0x3F|0x80))
	case cp <= 0xFFFF:
		*b = append(*b, byte(cp>>12|0xE0), byte(cp>>6&0x3F|0x80), byte(cp&0x3F|0x80))
	default:
		*b = append(*b, byte(cp>>18|0xF0), byte(cp>>12&0x3F|0x80), byte(cp>>6&0x3F|0x80), byte(cp&0x3F|0x80))
	}
	j.p += escLen
	return true
}

// fail is json_throw_parse_error.
func (j *jsonParser) fail(expected string, tok *jsonToken) {
	found := tok.str
	if tok.typ != tError {
		found = jsonTokenNames[tok.typ]
	}
	cError(j.L, "Expected %s but found %s at character %d", expected, found, tok.index+1)
}

// descend is json_decode_descend: the decode_max_depth setting, and room
// for need more slots on the Lua stack (slots are in use).
func (j *jsonParser) descend(need, slots int) {
	j.depth++
	if j.depth <= j.cfg.decodeMaxDepth && slots+need <= luaMaxCStack {
		return
	}
	cError(j.L, "Found too many nested data structures (%d) at character %d", j.depth, j.p)
}

// value is json_process_value for tok, with slots Lua stack slots in use.
func (j *jsonParser) value(tok *jsonToken, slots int) lua.LValue {
	switch tok.typ {
	case tString:
		return lua.LString(tok.str)
	case tNumber:
		return lua.LNumber(tok.num)
	case tBoolean:
		return lua.LBool(tok.boolean)
	case tNull:
		return j.null
	case tObjBegin:
		return j.object(slots)
	case tArrBegin:
		return j.array(slots)
	}
	j.fail("value", tok)
	return lua.LNil
}

// object is json_parse_object_context: the table, a key and a value.
func (j *jsonParser) object(slots int) lua.LValue {
	j.descend(3, slots)
	t := j.L.NewTable()
	var tok jsonToken
	j.next(&tok)
	if tok.typ == tObjEnd {
		j.depth--
		return t
	}
	for {
		if tok.typ != tString {
			j.fail("object key string", &tok)
		}
		key := tok.str
		j.next(&tok)
		if tok.typ != tColon {
			j.fail("colon", &tok)
		}
		j.next(&tok)
		t.RawSetString(key, j.value(&tok, slots+2))
		j.next(&tok)
		if tok.typ == tObjEnd {
			j.depth--
			return t
		}
		if tok.typ != tComma {
			j.fail("comma or object end", &tok)
		}
		j.next(&tok)
	}
}

// array is json_parse_array_context: the table and a value.
func (j *jsonParser) array(slots int) lua.LValue {
	j.descend(2, slots)
	t := j.L.NewTable()
	var tok jsonToken
	j.next(&tok)
	if tok.typ == tArrEnd {
		j.depth--
		return t
	}
	for i := 1; ; i++ {
		t.RawSetInt(i, j.value(&tok, slots+1))
		j.next(&tok)
		if tok.typ == tArrEnd {
			j.depth--
			return t
		}
		if tok.typ != tComma {
			j.fail("comma or array end", &tok)
		}
		j.next(&tok)
	}
}
