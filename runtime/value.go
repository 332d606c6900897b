package runtime

import (
	"strconv"
	"strings"
)

// Kind is the RESP type of a [Value].
type Kind uint8

// The kinds a script reply can have. A script running in the default RESP2
// mode can only produce Nil, Int, String, Array and (nested) Error; RESP3
// kinds appear when the script calls redis.setresp(3) and the client speaks
// RESP3 (rueidis always does). Source: "Lua to RESP2/RESP3 type conversion"
// in https://redis.io/docs/latest/develop/interact/programmability/lua-api/
const (
	KindNil       Kind = iota // nil bulk / RESP3 null: Lua false or nil
	KindInt                   // integer: Lua number (truncated) or true
	KindString                // bulk or status string: Lua string or {ok=...}
	KindArray                 // array: Lua table (up to its first nil)
	KindError                 // error reply nested inside an array
	KindDouble                // RESP3 double
	KindBool                  // RESP3 boolean
	KindMap                   // RESP3 map, stored flat in Array as key, value, ...
	KindBigNumber             // RESP3 big number, digits in Str
)

var kindNames = [...]string{"nil", "integer", "string", "array", "error", "double", "boolean", "map", "big number"}

func (k Kind) String() string {
	if int(k) < len(kindNames) {
		return kindNames[k]
	}
	return "kind(" + strconv.Itoa(int(k)) + ")"
}

// Value is one decoded reply. It is a plain value so a scalar reply costs no
// allocation; only the field its Kind names is meaningful.
type Value struct {
	Kind  Kind
	Int   int64   // KindInt; KindBool (0 or 1)
	Str   string  // KindString, KindError, KindBigNumber
	Float float64 // KindDouble
	Array []Value // KindArray; KindMap (key, value, key, value, ...)
}

// Nil is the nil reply (a nil bulk string, or RESP3 null).
var Nil = Value{}

// IntValue returns an integer Value.
func IntValue(n int64) Value { return Value{Kind: KindInt, Int: n} }

// StringValue returns a string Value.
func StringValue(s string) Value { return Value{Kind: KindString, Str: s} }

// ArrayValue returns an array Value holding vs.
func ArrayValue(vs ...Value) Value { return Value{Kind: KindArray, Array: vs} }

// String renders v the way redis-cli --no-raw does for one line, for error
// messages and debugging: (nil), (integer) 3, "text", (error) ..., [a, b].
func (v Value) String() string {
	switch v.Kind {
	case KindNil:
		return "(nil)"
	case KindInt:
		return "(integer) " + strconv.FormatInt(v.Int, 10)
	case KindString:
		return strconv.Quote(v.Str)
	case KindError:
		return "(error) " + v.Str
	case KindDouble:
		return "(double) " + strconv.FormatFloat(v.Float, 'g', -1, 64)
	case KindBool:
		if v.Int != 0 {
			return "(true)"
		}
		return "(false)"
	case KindBigNumber:
		return "(big number) " + v.Str
	case KindArray, KindMap:
		var b strings.Builder
		b.WriteByte('[')
		for i, e := range v.Array {
			if i > 0 {
				b.WriteString(", ")
			}
			b.WriteString(e.String())
		}
		b.WriteByte(']')
		return b.String()
	}
	return v.Kind.String()
}
