// Commands from https://redis.io/commands/?group=bitmap

package luatest

import (
	"math"
	"math/bits"
	"strconv"
	"strings"

	"github.com/luagen/luagen/luatest/resp"
)

var bitmapCommands = []*command{
	{name: "setbit", fn: cmdSetbit},
	{name: "getbit", fn: cmdGetbit},
	{name: "bitcount", fn: cmdBitcount},
	{name: "bitpos", fn: cmdBitpos},
	{name: "bitop", fn: cmdBitop},
	{name: "bitfield", fn: cmdBitfield},
	{name: "bitfield_ro", fn: cmdBitfield},
}

var errBitOffset = resp.ErrorReply("ERR bit offset is not an integer or out of range")

// parseBitOffset is getBitOffsetFromArgument: 0 .. 2^32-1 bits (512 MB),
// or "#n" meaning n*width for BITFIELD.
func parseBitOffset(s string, hash bool, width int64) (int64, bool) {
	mul := int64(1)
	if hash && strings.HasPrefix(s, "#") {
		s, mul = s[1:], width
	}
	n, ok := parseInt(s)
	if !ok || n < 0 {
		return 0, false
	}
	if n > math.MaxInt64/mul {
		return 0, false
	}
	n *= mul
	if n>>3 >= 512*1024*1024 {
		return 0, false
	}
	return n, true
}

// stringForBits returns key's string for a bit command that writes,
// creating it and growing it with zero bytes to hold bit maxBit.
func (c *cmdCtx) stringForBits(key string, maxBit int64) (*entry, bool) {
	e, wrong := c.r.lookupType(key, typeString)
	if wrong {
		return nil, false
	}
	if e == nil {
		e = &entry{kind: typeString}
		c.r.db[key] = e
	}
	if need := int(maxBit>>3) + 1; len(e.str) < need {
		e.str += strings.Repeat("\x00", need-len(e.str))
	}
	e.raw = true
	return e, true
}

func bitAt(s string, off int64) int64 {
	if off>>3 >= int64(len(s)) {
		return 0
	}
	return int64(s[off>>3]>>(7-uint(off&7))) & 1
}

// SETBIT key offset value — https://redis.io/commands/setbit/
func cmdSetbit(c *cmdCtx, args []string) resp.Reply {
	off, ok := parseBitOffset(args[1], false, 0)
	if !ok {
		return errBitOffset
	}
	if args[2] != "0" && args[2] != "1" {
		return resp.ErrorReply("ERR bit is not an integer or out of range")
	}
	e, ok := c.stringForBits(args[0], off)
	if !ok {
		return errWrongType
	}
	old := bitAt(e.str, off)
	b := []byte(e.str)
	mask := byte(1) << (7 - uint(off&7))
	if args[2] == "1" {
		b[off>>3] |= mask
	} else {
		b[off>>3] &^= mask
	}
	e.str = string(b)
	return resp.IntReply(old)
}

// GETBIT key offset — https://redis.io/commands/getbit/
func cmdGetbit(c *cmdCtx, args []string) resp.Reply {
	off, ok := parseBitOffset(args[1], false, 0)
	if !ok {
		return errBitOffset
	}
	v, _, wrong := c.getString(args[0])
	if wrong {
		return errWrongType
	}
	return resp.IntReply(bitAt(v, off))
}

// bitRange converts start/end (bytes, or bits when isBit) the way
// bitcountCommand and bitposCommand do into an inclusive bit range; ok is
// false for an empty range.
func bitRange(start, end int64, strlen int, isBit bool) (lo, hi int64, ok bool) {
	total := int64(strlen)
	if isBit {
		total <<= 3
	}
	if start < 0 {
		start += total
	}
	if end < 0 {
		end += total
	}
	start, end = max(start, 0), max(end, 0)
	if end >= total {
		end = total - 1
	}
	if start > end {
		return 0, 0, false
	}
	if isBit {
		return start, end, true
	}
	return start * 8, end*8 + 7, true
}

// BITCOUNT key [start end [BYTE | BIT]] — https://redis.io/commands/bitcount/
func cmdBitcount(c *cmdCtx, args []string) resp.Reply {
	v, found, wrong := c.getString(args[0])
	if wrong {
		return errWrongType
	}
	if !found {
		return resp.IntReply(0)
	}
	lo, hi := int64(0), int64(len(v))*8-1
	switch len(args) {
	case 1:
	case 3, 4:
		start, ok1 := parseInt(args[1])
		end, ok2 := parseInt(args[2])
		if !ok1 || !ok2 {
			return errNotInt
		}
		isBit, ok := bitUnit(args[3:])
		if !ok {
			return errSyntax
		}
		if start < 0 && end < 0 && start > end {
			return resp.IntReply(0)
		}
		if lo, hi, ok = bitRange(start, end, len(v), isBit); !ok {
			return resp.IntReply(0)
		}
	default:
		return errSyntax
	}
	var n int64
	for off := lo; off <= hi; {
		if off&7 == 0 && off+7 <= hi {
			n += int64(bits.OnesCount8(v[off>>3]))
			off += 8
			continue
		}
		n += bitAt(v, off)
		off++
	}
	return resp.IntReply(n)
}

// bitUnit reads the optional BYTE | BIT argument.
func bitUnit(opt []string) (isBit, ok bool) {
	if len(opt) == 0 {
		return false, true
	}
	switch strings.ToUpper(opt[0]) {
	case "BIT":
		return true, true
	case "BYTE":
		return false, true
	}
	return false, false
}

// BITPOS key bit [start [end [BYTE | BIT]]] — https://redis.io/commands/bitpos/
func cmdBitpos(c *cmdCtx, args []string) resp.Reply {
	bit, ok := parseInt(args[1])
	if !ok {
		return errNotInt
	}
	if bit != 0 && bit != 1 {
		return resp.ErrorReply("ERR The bit argument must be 1 or 0.")
	}
	v, found, wrong := c.getString(args[0])
	if wrong {
		return errWrongType
	}
	if !found {
		if bit == 1 {
			return resp.IntReply(-1)
		}
		return resp.IntReply(0)
	}
	lo, hi := int64(0), int64(len(v))*8-1
	endGiven := false

	switch len(args) {
	case 2:
	case 3, 4, 5:
		start, ok := parseInt(args[2])
		if !ok {
			return errNotInt
		}
		isBit, ok := bitUnit(args[min(4, len(args)):])
		if !ok {
			return errSyntax
		}
		end := int64(len(v)) - 1
		if isBit {
			end = int64(len(v))*8 - 1
		}
		if len(args) >= 4 {
			if end, ok = parseInt(args[3]); !ok {
				return errNotInt
			}
			endGiven = true
		}
		if lo, hi, ok = bitRange(start, end, len(v), isBit); !ok {
			return resp.IntReply(-1)
		}
	default:
		return errSyntax
	}
	if len(v) == 0 {
		return resp.IntReply(-1) // start > end on an empty string
	}
	for off := lo; off <= hi; off++ {
		if bitAt(v, off) == bit {
			return resp.IntReply(off)
		}
	}
	if bit == 0 && !endGiven {
		// Looking for a clear bit past the end of a string of ones: the
		// string is as if padded with zeros.
		return resp.IntReply((hi/8 + 1) * 8)
	}
	return resp.IntReply(-1)
}

// BITOP AND | OR | XOR | NOT destkey key [key ...] —
// https://redis.io/commands/bitop/ (missing keys are zero bytes; an empty
// result deletes destkey).
func cmdBitop(c *cmdCtx, args []string) resp.Reply {
	op := strings.ToUpper(args[0])
	if op != "AND" && op != "OR" && op != "XOR" && op != "NOT" {
		return errSyntax
	}
	srcs := args[2:]
	if op == "NOT" && len(srcs) != 1 {
		return resp.ErrorReply("ERR BITOP NOT must be called with a single source key.")
	}
	vals := make([]string, len(srcs))
	maxLen := 0
	for i, k := range srcs {
		v, _, wrong := c.getString(k)
		if wrong {
			return errWrongType
		}
		vals[i] = v
		maxLen = max(maxLen, len(v))
	}
	out := make([]byte, maxLen)
	for j := range out {
		byteAt := func(v string) byte {
			if j < len(v) {
				return v[j]
			}
			return 0
		}
		b := byteAt(vals[0])
		for _, v := range vals[1:] {
			switch op {
			case "AND":
				b &= byteAt(v)
			case "OR":
				b |= byteAt(v)
			case "XOR":
				b ^= byteAt(v)
			}
		}
		if op == "NOT" {
			b = ^b
		}
		out[j] = b
	}
	delete(c.r.db, args[1])
	if maxLen > 0 {
		c.r.db[args[1]] = &entry{kind: typeString, str: string(out), raw: true}
	}
	return resp.IntReply(int64(maxLen))
}

// bitfieldOp is one GET, SET or INCRBY of BITFIELD.
type bitfieldOp struct {
	op       string // GET, SET, INCRBY
	signed   bool
	width    int64
	offset   int64
	value    int64
	overflow string // WRAP, SAT, FAIL
}

// BITFIELD key [GET type offset | [OVERFLOW WRAP|SAT|FAIL] SET type offset
// value | INCRBY type offset increment ...] — https://redis.io/commands/bitfield/,
// and BITFIELD_RO key [GET type offset ...].
func cmdBitfield(c *cmdCtx, args []string) resp.Reply {
	var ops []bitfieldOp
	overflow := "WRAP"
	maxBit, writes := int64(-1), false
	for i := 1; i < len(args); i++ {
		name := strings.ToUpper(args[i])
		if name == "OVERFLOW" && i+1 < len(args) {
			switch o := strings.ToUpper(args[i+1]); o {
			case "WRAP", "SAT", "FAIL":
				overflow = o
			default:
				return resp.ErrorReply("ERR Invalid OVERFLOW type specified")
			}
			i++
			continue
		}
		need := 3
		if name == "GET" {
			need = 2
		} else if name != "SET" && name != "INCRBY" {
			return errSyntax
		}
		if i+need > len(args)-1 {
			return errSyntax
		}
		op := bitfieldOp{op: name, overflow: overflow}
		t := args[i+1]
		w, err := strconv.ParseInt(strings.TrimLeft(t, "iuIU"), 10, 64)
		okType := len(t) > 1 && (t[0] == 'i' || t[0] == 'I' || t[0] == 'u' || t[0] == 'U') && err == nil && w >= 1
		op.signed = okType && (t[0] == 'i' || t[0] == 'I')
		if !okType || op.signed && w > 64 || !op.signed && w > 63 {
			return resp.ErrorReply("ERR Invalid bitfield type. Use something like i16 u8. Note that u64 is not supported but i64 is.")
		}
		op.width = w
		off, ok := parseBitOffset(args[i+2], true, w)
		if !ok {
			return errBitOffset
		}
		op.offset = off
		if name != "GET" {
			v, ok := parseInt(args[i+3])
			if !ok {
				return errNotInt
			}
			op.value = v
			writes = true
			maxBit = max(maxBit, off+w-1)
		}
		ops = append(ops, op)
		i += need
	}
	if c.name == "bitfield_ro" && writes {
		return resp.ErrorReply("ERR BITFIELD_RO only supports the GET subcommand")
	}
	var e *entry
	if writes {
		var ok bool
		if e, ok = c.stringForBits(args[0], maxBit); !ok {
			return errWrongType
		}
	} else if _, _, wrong := c.getString(args[0]); wrong {
		return errWrongType
	}
	out := make([]resp.Reply, 0, len(ops))
	for _, op := range ops {
		var cur string
		if e != nil {
			cur = e.str
		} else {
			cur, _, _ = c.getString(args[0])
		}
		old := getBitfield(cur, op)
		if op.op == "GET" {
			out = append(out, resp.IntReply(old))
			continue
		}
		v, fail := bitfieldFit(old, op)
		if fail {
			out = append(out, resp.NilReply)
			continue
		}
		e.str = setBitfield(e.str, op, v)
		if op.op == "SET" {
			out = append(out, resp.IntReply(old))
		} else {
			out = append(out, resp.IntReply(v))
		}
	}
	return resp.ArrayReply(out...)
}

func getBitfield(s string, op bitfieldOp) int64 {
	var u uint64
	for i := int64(0); i < op.width; i++ {
		u = u<<1 | uint64(bitAt(s, op.offset+i))
	}
	if op.signed && op.width < 64 && u&(1<<(op.width-1)) != 0 {
		u |= ^uint64(0) << op.width
	}
	return int64(u)
}

func setBitfield(s string, op bitfieldOp, v int64) string {
	b := []byte(s)
	u := uint64(v)
	for i := int64(0); i < op.width; i++ {
		off := op.offset + i
		bit := (u >> (op.width - 1 - i)) & 1
		mask := byte(1) << (7 - uint(off&7))
		if bit == 1 {
			b[off>>3] |= mask
		} else {
			b[off>>3] &^= mask
		}
	}
	return string(b)
}

// bitfieldFit applies the overflow policy to SET's value or INCRBY's sum
// as bitfieldGeneric does; fail is true when OVERFLOW FAIL refuses it.
// The checks are checkSignedBitfieldOverflow and
// checkUnsignedBitfieldOverflow line by line, with C's wrapping 64-bit
// arithmetic: so SET i8 to -2^63 under SAT writes 127, as the server does
// (its maxincr overflows).
func bitfieldFit(old int64, op bitfieldOp) (int64, bool) {
	bits := uint64(op.width)
	var incr int64
	if op.signed {
		value := op.value
		if op.op == "INCRBY" {
			value, incr = old, op.value
		}
		limit, overflow := checkSignedBitfieldOverflow(value, incr, bits, op.overflow)
		if !overflow {
			return value + incr, false
		}
		return limit, op.overflow == "FAIL"
	}
	value := uint64(op.value)
	if op.op == "INCRBY" {
		value, incr = uint64(old), op.value
	}
	limit, overflow := checkUnsignedBitfieldOverflow(value, incr, bits, op.overflow)
	if !overflow {
		return int64(value + uint64(incr)), false
	}
	return int64(limit), op.overflow == "FAIL"
}

// checkSignedBitfieldOverflow is bitops.c's: whether value+incr overflows
// a signed field of bits, and the value WRAP or SAT writes then.
func checkSignedBitfieldOverflow(value, incr int64, bits uint64, owtype string) (int64, bool) {
	max := int64(math.MaxInt64)
	if bits != 64 {
		max = int64(1)<<(bits-1) - 1
	}
	min := -max - 1
	maxincr := int64(uint64(max) - uint64(value)) // may wrap, as in C
	minincr := min - value
	var limit int64
	switch {
	case value > max || (bits != 64 && incr > maxincr) || (value >= 0 && incr > 0 && incr > maxincr):
		limit = max
	case value < min || (bits != 64 && incr < minincr) || (value < 0 && incr < 0 && incr < minincr):
		limit = min
	default:
		return 0, false
	}
	if owtype == "WRAP" {
		c := uint64(value) + uint64(incr)
		if bits < 64 {
			mask := ^uint64(0) << bits
			if c&(uint64(1)<<(bits-1)) != 0 {
				c |= mask
			} else {
				c &^= mask
			}
		}
		limit = int64(c)
	}
	return limit, true
}

// checkUnsignedBitfieldOverflow is bitops.c's, for an unsigned field.
func checkUnsignedBitfieldOverflow(value uint64, incr int64, bits uint64, owtype string) (uint64, bool) {
	max := uint64(math.MaxUint64)
	if bits != 64 {
		max = uint64(1)<<bits - 1
	}
	maxincr := int64(max - value)
	minincr := int64(-value)
	var limit uint64
	switch {
	case value > max || (incr > 0 && incr > maxincr):
		limit = max
	case incr < 0 && incr < minincr:
		limit = 0
	default:
		return 0, false
	}
	if owtype == "WRAP" {
		limit = (value + uint64(incr)) &^ (^uint64(0) << bits)
	}
	return limit, true
}
