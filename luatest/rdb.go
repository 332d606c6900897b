package luatest

import (
	"encoding/binary"
	"math"
	"slices"

	"github.com/luagen/luagen/luatest/resp"
)

// The RDB serialization of one value (rdb.c of Redis 7.0.15), which DUMP
// writes and RESTORE reads: the object type byte, the object in the
// encoding the server holds it in, then (cmd_dump.go) the RDB version and
// a CRC64. Every string goes through rdbSaveRawString: integers of up to
// 11 characters as RDB integers, strings over 20 bytes LZF-compressed when
// that saves at least 4 bytes, the rest as they are.

// RDB object types (rdb.h).
const (
	rdbTypeString         = 0
	rdbTypeList           = 1
	rdbTypeSet            = 2
	rdbTypeZSet           = 3
	rdbTypeHash           = 4
	rdbTypeZSet2          = 5
	rdbTypeListZiplist    = 10
	rdbTypeSetIntset      = 11
	rdbTypeZSetZiplist    = 12
	rdbTypeHashZiplist    = 13
	rdbTypeListQuicklist  = 14
	rdbTypeStreamLP       = 15
	rdbTypeHashListpack   = 16
	rdbTypeZSetListpack   = 17
	rdbTypeListQuicklist2 = 18
	rdbTypeStreamLP2      = 19
)

// Thresholds of redis-server 7.0.15's built-in configuration (config.c),
// which decide the encodings (hash-max-listpack-entries is 512 there; the
// redis.conf shipped with the source says 128).
const (
	hashMaxListpackEntries = 512
	hashMaxListpackValue   = 64
	zsetMaxListpackEntries = 128
	zsetMaxListpackValue   = 64
	setMaxIntsetEntries    = 512
	quicklistNodeMaxBytes  = 8192 // list-max-listpack-size -2
	quicklistSizeOverhead  = 8    // SIZE_ESTIMATE_OVERHEAD
	quicklistPacked        = 2    // QUICKLIST_NODE_CONTAINER_PACKED
)

// appendRDBLen is rdbSaveLen.
func appendRDBLen(b []byte, n uint64) []byte {
	switch {
	case n < 1<<6:
		return append(b, byte(n))
	case n < 1<<14:
		return append(b, byte(0x40|n>>8), byte(n))
	case n <= math.MaxUint32:
		b = append(b, 0x80)
		return binary.BigEndian.AppendUint32(b, uint32(n))
	}
	b = append(b, 0x81)
	return binary.BigEndian.AppendUint64(b, n)
}

// appendRDBString is rdbSaveRawString with rdbcompression on (the
// default).
func appendRDBString(b []byte, s string) []byte {
	if len(s) <= 11 {
		if v, ok := parseInt(s); ok {
			if enc, ok := appendRDBInt(b, v); ok {
				return enc
			}
		}
	}
	if len(s) > 20 {
		// rdbSaveLzfStringObject: worth it only when it saves 4 bytes.
		if c := lzfCompress([]byte(s), len(s)-4); c != nil {
			b = append(b, 0xc0|3) // RDB_ENCVAL<<6 | RDB_ENC_LZF
			b = appendRDBLen(b, uint64(len(c)))
			b = appendRDBLen(b, uint64(len(s)))
			return append(b, c...)
		}
	}
	b = appendRDBLen(b, uint64(len(s)))
	return append(b, s...)
}

// appendRDBInt is rdbEncodeInteger: v as an 8, 16 or 32-bit RDB integer,
// or ok false when it needs more.
func appendRDBInt(b []byte, v int64) ([]byte, bool) {
	switch {
	case v >= math.MinInt8 && v <= math.MaxInt8:
		return append(b, 0xc0, byte(v)), true
	case v >= math.MinInt16 && v <= math.MaxInt16:
		return binary.LittleEndian.AppendUint16(append(b, 0xc1), uint16(v)), true
	case v >= math.MinInt32 && v <= math.MaxInt32:
		return binary.LittleEndian.AppendUint32(append(b, 0xc2), uint32(v)), true
	}
	return b, false
}

// appendRDBObject is rdbSaveObjectType followed by rdbSaveObject for e in
// the encoding encodingOf gives.
func appendRDBObject(b []byte, e *entry) []byte {
	switch e.kind {
	case typeString:
		return appendRDBString(append(b, rdbTypeString), e.str)
	case typeList:
		nodes := quicklistNodes(e)
		b = appendRDBLen(append(b, rdbTypeListQuicklist2), uint64(len(nodes)))
		for _, n := range nodes {
			b = appendRDBLen(b, quicklistPacked)
			b = appendRDBString(b, string(n))
		}
		return b
	case typeSet:
		members := setMembers(e.set)
		if encodingOf(e) == "intset" {
			return appendRDBString(append(b, rdbTypeSetIntset), string(intsetBlob(members, e.intsetWidth)))
		}
		b = appendRDBLen(append(b, rdbTypeSet), uint64(len(members)))
		for _, m := range members {
			b = appendRDBString(b, m)
		}
		return b
	case typeZSet:
		members := e.zset.members()
		if encodingOf(e) == "listpack" {
			lp := newListpack()
			for _, m := range members {
				lp.add(m)
				if v, ok := double2ll(e.zset.scores[m]); ok {
					lp.addInt(v)
				} else {
					lp.add(formatScore(e.zset.scores[m]))
				}
			}
			return appendRDBString(append(b, rdbTypeZSetListpack), string(lp.bytes()))
		}
		// Greatest first, as the server walks its skiplist backwards.
		b = appendRDBLen(append(b, rdbTypeZSet2), uint64(len(members)))
		for i := len(members) - 1; i >= 0; i-- {
			b = appendRDBString(b, members[i])
			b = binary.LittleEndian.AppendUint64(b, math.Float64bits(e.zset.scores[members[i]]))
		}
		return b
	case typeHash:
		if encodingOf(e) == "listpack" {
			lp := newListpack()
			for _, f := range e.hash.fields {
				lp.add(f)
				lp.add(e.hash.values[f])
			}
			return appendRDBString(append(b, rdbTypeHashListpack), string(lp.bytes()))
		}
		b = appendRDBLen(append(b, rdbTypeHash), uint64(e.hash.len()))
		for _, f := range e.hash.fields {
			b = appendRDBString(b, f)
			b = appendRDBString(b, e.hash.values[f])
		}
		return b
	}
	return appendRDBStream(b, e.stream)
}

// formatScore is d2string for a score that is not an integer.
func formatScore(f float64) string {
	switch {
	case math.IsInf(f, 1):
		return "inf"
	case math.IsInf(f, -1):
		return "-inf"
	}
	return resp.FormatDouble(f)
}

// double2ll is util.c's: d as an int64 when it is one, within ±2^62.
func double2ll(d float64) (int64, bool) {
	if d < -float64(math.MaxInt64/2) || d > float64(math.MaxInt64/2) {
		return 0, false
	}
	ll := int64(d)
	return ll, float64(ll) == d
}

// quicklistNodes returns a list's quicklist nodes as listpacks.
func quicklistNodes(e *entry) [][]byte {
	var nodes [][]byte
	list := e.list
	for _, n := range e.qlist().nodes {
		lp := newListpack()
		for _, v := range list[:n.count] {
			lp.add(v)
		}
		nodes = append(nodes, lp.bytes())
		list = list[n.count:]
	}
	return nodes
}

// intsetBlob is an intset (intset.c): the encoding (2, 4 or 8 bytes per
// integer, at least width), the count and the sorted integers, little
// endian. members are in ascending order.
func intsetBlob(members []string, width uint8) []byte {
	enc := max(width, 2)
	for _, m := range members {
		v, _ := intsetMember(m)
		enc = max(enc, intsetWidthOf(v))
	}
	b := binary.LittleEndian.AppendUint32(nil, uint32(enc))
	b = binary.LittleEndian.AppendUint32(b, uint32(len(members)))
	for _, m := range members {
		v, _ := intsetMember(m)
		switch enc {
		case 2:
			b = binary.LittleEndian.AppendUint16(b, uint16(v))
		case 4:
			b = binary.LittleEndian.AppendUint32(b, uint32(v))
		default:
			b = binary.LittleEndian.AppendUint64(b, uint64(v))
		}
	}
	return b
}

// intsetWidthOf is _intsetValueEncoding.
func intsetWidthOf(v int64) uint8 {
	switch {
	case v < math.MinInt32 || v > math.MaxInt32:
		return 8
	case v < math.MinInt16 || v > math.MaxInt16:
		return 4
	}
	return 2
}

// listpack builds a listpack (listpack.c) by appending.
type listpack struct {
	b []byte
	n int
}

func newListpack() *listpack { return &listpack{b: make([]byte, 6, 64)} }

// size is lpBytes of the finished listpack.
func (lp *listpack) size() int { return len(lp.b) + 1 }

// add is lpAppend: a string that string2ll takes is stored as an integer
// (parseInt refuses more than 20 bytes, as lpStringToInt64 does).
func (lp *listpack) add(s string) {
	if v, ok := parseInt(s); ok {
		lp.addInt(v)
		return
	}
	start := len(lp.b)
	switch n := len(s); lpStrHeaderSize(n) {
	case 1:
		lp.b = append(lp.b, byte(n)|0x80)
	case 2:
		lp.b = append(lp.b, byte(n>>8)|0xe0, byte(n))
	default:
		lp.b = binary.LittleEndian.AppendUint32(append(lp.b, 0xf0), uint32(n))
	}
	lp.b = append(lp.b, s...)
	lp.finish(start)
}

// addInt is lpAppendInteger (lpEncodeIntegerGetType).
func (lp *listpack) addInt(v int64) {
	start := len(lp.b)
	switch lpIntSize(v) {
	case 1:
		lp.b = append(lp.b, byte(v))
	case 2:
		u := uint64(v) & (1<<13 - 1)
		lp.b = append(lp.b, byte(u>>8)|0xc0, byte(u))
	case 3:
		lp.b = binary.LittleEndian.AppendUint16(append(lp.b, 0xf1), uint16(v))
	case 4:
		u := uint32(v)
		lp.b = append(lp.b, 0xf2, byte(u), byte(u>>8), byte(u>>16))
	case 5:
		lp.b = binary.LittleEndian.AppendUint32(append(lp.b, 0xf3), uint32(v))
	default:
		lp.b = binary.LittleEndian.AppendUint64(append(lp.b, 0xf4), uint64(v))
	}
	lp.finish(start)
}

// lpIntSize is how many bytes the integer encoding lpEncodeIntegerGetType
// picks for v takes, back length excluded: 7-bit, 13-bit, then 16, 24, 32
// and 64-bit integers after a type byte.
func lpIntSize(v int64) int {
	switch {
	case v >= 0 && v <= 127:
		return 1
	case v >= -4096 && v <= 4095:
		return 2
	case v >= math.MinInt16 && v <= math.MaxInt16:
		return 3
	case v >= -1<<23 && v < 1<<23:
		return 4
	case v >= math.MinInt32 && v <= math.MaxInt32:
		return 5
	}
	return 9
}

// lpStrHeaderSize is the size of the header lpEncodeString writes for a
// string of n bytes: 6, 12 or 32-bit length.
func lpStrHeaderSize(n int) int {
	switch {
	case n < 64:
		return 1
	case n < 4096:
		return 2
	}
	return 5
}

// finish appends the back length of the entry that starts at start
// (lpEncodeBacklen).
func (lp *listpack) finish(start int) {
	l := uint64(len(lp.b) - start)
	// 7 bits a byte, most significant first; every byte but the first
	// has its high bit set.
	n := backlenSize(l)
	lp.b = append(lp.b, byte(l>>(7*(n-1))))
	for i := n - 2; i >= 0; i-- {
		lp.b = append(lp.b, byte(l>>(7*i)&127)|128)
	}
	lp.n++
}

// bytes returns the finished listpack: header (total bytes, element count
// or 65535 when unknown) and the 0xff terminator.
func (lp *listpack) bytes() []byte {
	out := append(slices.Clip(lp.b), 0xff)
	binary.LittleEndian.PutUint32(out, uint32(len(out)))
	binary.LittleEndian.PutUint16(out[4:], uint16(min(lp.n, 65535)))
	return out
}
