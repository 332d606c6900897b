// Package resp holds RESP2/RESP3 replies as redis-cli sees them: a [Reply]
// keeps every distinction the wire makes (status vs bulk string, map vs
// array, double, boolean, big number, verbatim string), which
// [github.com/luagen/luagen/runtime.Value] deliberately folds away. luatest
// produces Replies, [Conn] reads them from a real server, and [Reply.Format]
// prints them exactly as `redis-cli --no-raw` does, so the two can be
// compared byte for byte.
package resp

import (
	"math"
	"strconv"
	"strings"
)

// Kind is the RESP type of a [Reply].
type Kind uint8

// The reply kinds. RESP2 has Status, Error, Int, Bulk, Nil and Array; the
// rest exist only in RESP3 (https://github.com/redis/redis-specifications/blob/master/protocol/RESP3.md).
const (
	Nil       Kind = iota // "$-1" / "*-1" in RESP2, "_" in RESP3
	Status                // "+OK"
	Error                 // "-ERR ..."; Str holds the text without '-'
	Int                   // ":3"
	Bulk                  // "$5 hello"
	Array                 // "*2 ..."
	Map                   // "%1 ..."; Elems holds key, value, key, value, ...
	Set                   // "~1 ..."
	Double                // ",3.5"; Str holds the text as sent, Float the value
	Bool                  // "#t"; Int is 1 or 0
	BigNumber             // "(123..."; Str holds the digits
	Verbatim              // "=9 txt:hello"; Str holds the text after "txt:"
)

var kindNames = [...]string{"nil", "status", "error", "integer", "bulk", "array", "map", "set", "double", "boolean", "big number", "verbatim"}

// String names the kind, e.g. "bulk" or "big number".
func (k Kind) String() string {
	if int(k) < len(kindNames) {
		return kindNames[k]
	}
	return "kind(" + strconv.Itoa(int(k)) + ")"
}

// Reply is one reply. Only the fields its Kind names are meaningful.
type Reply struct {
	Kind  Kind
	Str   string  // Status, Error, Bulk, Double (as sent), BigNumber, Verbatim
	Int   int64   // Int; Bool (1 or 0)
	Float float64 // Double
	Elems []Reply // Array, Set; Map as key, value, ...
}

// NilReply is the nil reply.
var NilReply = Reply{}

// NullArray is the nil reply of a command that answers a null array:
// "*-1" in RESP2, "_" in RESP3 like [NilReply]. Int is 1 to tell it from
// the null bulk string "$-1" when the reply is written as RESP2; [Equal]
// does not tell them apart, since redis-cli and clients do not either.
var NullArray = Reply{Kind: Nil, Int: 1}

// OK is the "+OK" status reply.
var OK = Reply{Kind: Status, Str: "OK"}

// IntReply returns an integer reply.
func IntReply(n int64) Reply { return Reply{Kind: Int, Int: n} }

// BulkReply returns a bulk string reply.
func BulkReply(s string) Reply { return Reply{Kind: Bulk, Str: s} }

// StatusReply returns a status (simple string) reply.
func StatusReply(s string) Reply { return Reply{Kind: Status, Str: s} }

// ErrorReply returns an error reply; msg is the text after '-', e.g.
// "ERR syntax error" or "WRONGTYPE Operation against ...".
func ErrorReply(msg string) Reply { return Reply{Kind: Error, Str: msg} }

// ArrayReply returns an array reply holding elems.
func ArrayReply(elems ...Reply) Reply { return Reply{Kind: Array, Elems: elems} }

// BulkArray returns an array of bulk strings.
func BulkArray(ss []string) Reply {
	r := Reply{Kind: Array, Elems: make([]Reply, len(ss))}
	for i, s := range ss {
		r.Elems[i] = BulkReply(s)
	}
	return r
}

// DoubleReply returns a RESP3 double. Str is formatted as Redis 7.0 sends
// it: "%.17g", "inf", "-inf" (networking.c, addReplyDouble).
func DoubleReply(f float64) Reply { return Reply{Kind: Double, Float: f, Str: FormatDouble(f)} }

// BoolReply returns a RESP3 boolean.
func BoolReply(b bool) Reply {
	if b {
		return Reply{Kind: Bool, Int: 1}
	}
	return Reply{Kind: Bool}
}

// IsError reports whether r is an error reply.
func (r Reply) IsError() bool { return r.Kind == Error }

// FormatDouble formats f as Redis 7.0 does in replies and in Lua call
// arguments: C's "%.17g" (so 0.1 is "0.10000000000000001"), with "inf",
// "-inf" and "nan" spelled like glibc.
func FormatDouble(f float64) string { return FormatG(f, 17) }

// FormatG formats f like C's printf("%.<prec>g"): the shortest of %e and %f
// for that many significant digits, trailing zeros removed, exponent with at
// least two digits; glibc's "inf", "-inf", "nan" and "-nan" for the
// non-finite values (sign of a NaN is kept as glibc prints it).
func FormatG(f float64, prec int) string {
	switch {
	case f != f:
		if math.Signbit(f) {
			return "-nan"
		}
		return "nan"
	case f > 1.7976931348623157e308:
		return "inf"
	case f < -1.7976931348623157e308:
		return "-inf"
	}
	s := strconv.FormatFloat(f, 'g', prec, 64)
	// Go writes "1e+06" like C; it writes "1e-07" like C too. Only the
	// exponent padding differs for three-digit exponents, which both print
	// in full. Nothing else to adjust.
	return s
}

// String renders r on one line for test failure messages.
func (r Reply) String() string {
	var b strings.Builder
	r.writeOneLine(&b)
	return b.String()
}

func (r Reply) writeOneLine(b *strings.Builder) {
	switch r.Kind {
	case Nil:
		b.WriteString("(nil)")
	case Status:
		b.WriteString("+" + r.Str)
	case Error:
		b.WriteString("(error) " + r.Str)
	case Int:
		b.WriteString("(integer) " + strconv.FormatInt(r.Int, 10))
	case Bulk:
		b.WriteString(strconv.Quote(r.Str))
	case Double:
		b.WriteString("(double) " + r.Str)
	case Bool:
		if r.Int != 0 {
			b.WriteString("(true)")
		} else {
			b.WriteString("(false)")
		}
	case BigNumber:
		b.WriteString("(big number) " + r.Str)
	case Verbatim:
		b.WriteString("(verbatim) " + strconv.Quote(r.Str))
	case Array, Set, Map:
		open, close := "[", "]"
		if r.Kind == Set {
			open, close = "~[", "]"
		} else if r.Kind == Map {
			open, close = "{", "}"
		}
		b.WriteString(open)
		for i, e := range r.Elems {
			if i > 0 {
				if r.Kind == Map && i%2 == 1 {
					b.WriteString(": ")
				} else {
					b.WriteString(", ")
				}
			}
			e.writeOneLine(b)
		}
		b.WriteString(close)
	default:
		b.WriteString(r.Kind.String())
	}
}

// Equal reports whether a and b are the same reply. Doubles compare by
// their wire text, so NaN equals NaN.
func Equal(a, b Reply) bool {
	if a.Kind == Nil && b.Kind == Nil {
		return true
	}
	if a.Kind != b.Kind || a.Str != b.Str || a.Int != b.Int || len(a.Elems) != len(b.Elems) {
		return false
	}
	for i := range a.Elems {
		if !Equal(a.Elems[i], b.Elems[i]) {
			return false
		}
	}
	return true
}
