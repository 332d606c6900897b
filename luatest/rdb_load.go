package luatest

import (
	"encoding/binary"
	"math"
	"strconv"
)

// rdbLoadObject is rdbLoadObject (rdb.c) for the types a DUMP of Redis 2.8
// to 7.0 can hold, modules excepted: plain lists, sets, sorted
// sets and hashes; ziplist, intset and listpack blobs; quicklists of
// ziplists (Redis 3.2–6.2) and of listpacks (7.0); streams of Redis 5 to
// 7.0 (stream_rdb.go). ok is false for a
// payload the server answers "Bad data format" to, including empty
// collections and duplicate set members or hash fields.
func rdbLoadObject(rd *rdbReader, typ byte) (e *entry, ok bool) {
	switch typ {
	case rdbTypeString:
		s, ok := rd.str()
		return &entry{kind: typeString, str: s}, ok
	case rdbTypeList:
		items, ok := rd.strings(1)
		return listEntry(items, ok)
	case rdbTypeListZiplist:
		items, ok := rd.blobItems(false)
		e, ok := listEntry(items, ok)
		if ok { // one node, however long
			e.ql = nodesOf(items, []int{len(items)})
		}
		return e, ok
	case rdbTypeListQuicklist, rdbTypeListQuicklist2:
		return rdbLoadQuicklist(rd, typ)
	case rdbTypeSet:
		members, ok := rd.strings(1)
		return setEntry(members, ok, 0)
	case rdbTypeSetIntset:
		return rdbLoadIntset(rd)
	case rdbTypeZSet, rdbTypeZSet2:
		return rdbLoadZSet(rd, typ)
	case rdbTypeZSetZiplist, rdbTypeZSetListpack:
		return rdbLoadPackedZSet(rd, typ)
	case rdbTypeHash:
		return hashEntry(rd.strings(2))
	case rdbTypeStreamLP, rdbTypeStreamLP2:
		return rdbLoadStream(rd, typ == rdbTypeStreamLP2)
	case rdbTypeHashZiplist, rdbTypeHashListpack:
		items, ok := rd.blobItems(typ == rdbTypeHashListpack)
		if len(items)%2 != 0 {
			return nil, false
		}
		e, ok := hashEntry(items, ok)
		if ok {
			e.packed = true
		}
		return e, ok
	}
	return nil, false
}

// rdbLoadQuicklist loads a quicklist of ziplists (RDB_TYPE_LIST_QUICKLIST)
// or of listpacks and plain nodes (RDB_TYPE_LIST_QUICKLIST_2), keeping
// its node sizes.
func rdbLoadQuicklist(rd *rdbReader, typ byte) (*entry, bool) {
	n, ok := rd.length()
	if !ok {
		return nil, false
	}
	var items []string
	var nodes []int
	for i := uint64(0); i < n; i++ {
		container := uint64(quicklistPacked)
		if typ == rdbTypeListQuicklist2 {
			if container, ok = rd.length(); !ok || (container != 1 && container != quicklistPacked) {
				return nil, false
			}
		}
		blob, ok := rd.str()
		if !ok {
			return nil, false
		}
		if container == 1 { // QUICKLIST_NODE_CONTAINER_PLAIN: one element as is
			items = append(items, blob)
			nodes = append(nodes, 1)
			continue
		}
		var part []string
		if typ == rdbTypeListQuicklist {
			part, ok = ziplistItems(blob)
		} else {
			part, ok = listpackItems(blob)
		}
		if !ok || len(part) == 0 {
			return nil, false
		}
		items = append(items, part...)
		nodes = append(nodes, len(part))
	}
	e, ok := listEntry(items, true)
	if ok {
		e.ql = nodesOf(items, nodes)
	}
	return e, ok
}

// rdbLoadIntset loads an intset blob: its encoding's width, its length,
// then its little-endian integers.
func rdbLoadIntset(rd *rdbReader) (*entry, bool) {
	blob, ok := rd.str()
	if !ok || len(blob) < 8 {
		return nil, false
	}
	width := binary.LittleEndian.Uint32([]byte(blob))
	n := uint64(binary.LittleEndian.Uint32([]byte(blob[4:])))
	if (width != 2 && width != 4 && width != 8) || uint64(len(blob)) != 8+n*uint64(width) {
		return nil, false
	}
	members := make([]string, n)
	for i := range members {
		at := 8 + i*int(width)
		members[i] = strconv.FormatInt(leInt([]byte(blob[at:at+int(width)])), 10)
	}
	return setEntry(members, true, uint8(width))
}

// rdbLoadZSet loads a plain sorted set: member and score pairs, scores as
// ASCII (RDB_TYPE_ZSET) or binary doubles (RDB_TYPE_ZSET_2).
func rdbLoadZSet(rd *rdbReader, typ byte) (*entry, bool) {
	n, ok := rd.length()
	if !ok || n == 0 {
		return nil, false
	}
	z := newZSet()
	for i := uint64(0); i < n; i++ {
		m, ok := rd.str()
		if !ok {
			return nil, false
		}
		var score float64
		if typ == rdbTypeZSet2 {
			b, ok := rd.bytes(8)
			if !ok {
				return nil, false
			}
			score = math.Float64frombits(binary.LittleEndian.Uint64(b))
		} else if score, ok = rd.asciiDouble(); !ok {
			return nil, false
		}
		if _, dup := z.scores[m]; dup || math.IsNaN(score) {
			return nil, false
		}
		z.set(m, score)
	}
	return &entry{kind: typeZSet, zset: z}, true
}

// rdbLoadPackedZSet loads a sorted set held in a ziplist or listpack of
// member and score pairs.
func rdbLoadPackedZSet(rd *rdbReader, typ byte) (*entry, bool) {
	items, ok := rd.blobItems(typ == rdbTypeZSetListpack)
	if !ok || len(items) == 0 || len(items)%2 != 0 {
		return nil, false
	}
	z := newZSet()
	for i := 0; i < len(items); i += 2 {
		score, ok := parseFloat(items[i+1])
		if _, dup := z.scores[items[i]]; dup || !ok {
			return nil, false
		}
		z.set(items[i], score)
	}
	z.longAdded = false // what the listpack holds stays there
	return &entry{kind: typeZSet, zset: z, packed: true}, true
}

func listEntry(items []string, ok bool) (*entry, bool) {
	if !ok || len(items) == 0 {
		return nil, false
	}
	return &entry{kind: typeList, list: items}, true
}

func setEntry(members []string, ok bool, width uint8) (*entry, bool) {
	if !ok || len(members) == 0 {
		return nil, false
	}
	s := make(map[string]struct{}, len(members))
	for _, m := range members {
		if _, dup := s[m]; dup {
			return nil, false
		}
		s[m] = struct{}{}
	}
	return &entry{kind: typeSet, set: s, intsetWidth: width}, true
}

func hashEntry(items []string, ok bool) (*entry, bool) {
	if !ok || len(items) == 0 {
		return nil, false
	}
	h := newHash()
	for i := 0; i < len(items); i += 2 {
		if !h.set(items[i], items[i+1]) {
			return nil, false
		}
	}
	return &entry{kind: typeHash, hash: h}, true
}

// strings reads a length and that many strings times per.
func (rd *rdbReader) strings(per uint64) ([]string, bool) {
	n, ok := rd.length()
	if !ok {
		return nil, false
	}
	return rd.nStrings(n * per)
}

func (rd *rdbReader) nStrings(n uint64) ([]string, bool) {
	if n > uint64(len(rd.b)) { // every string takes at least a byte
		return nil, false
	}
	out := make([]string, n)
	for i := range out {
		s, ok := rd.str()
		if !ok {
			return nil, false
		}
		out[i] = s
	}
	return out, true
}

// blobItems reads a string holding a listpack or a ziplist and returns its
// elements.
func (rd *rdbReader) blobItems(listpack bool) ([]string, bool) {
	blob, ok := rd.str()
	if !ok {
		return nil, false
	}
	if listpack {
		return listpackItems(blob)
	}
	return ziplistItems(blob)
}

// asciiDouble is rdbLoadDoubleValue: a length byte (253 NaN, 254 +inf,
// 255 -inf) and that many characters strtod reads.
func (rd *rdbReader) asciiDouble() (float64, bool) {
	b, ok := rd.bytes(1)
	if !ok {
		return 0, false
	}
	switch b[0] {
	case 253:
		return math.NaN(), true
	case 254:
		return math.Inf(1), true
	case 255:
		return math.Inf(-1), true
	}
	s, ok := rd.bytes(uint64(b[0]))
	if !ok {
		return 0, false
	}
	f, err := strconv.ParseFloat(string(s), 64)
	return f, err == nil
}

// listpackItems returns the elements of a listpack (listpack.c), integers
// as decimal strings; ok is false when it is malformed.
func listpackItems(blob string) ([]string, bool) {
	b := []byte(blob)
	if len(b) < 7 || int(binary.LittleEndian.Uint32(b)) != len(b) || b[len(b)-1] != 0xff {
		return nil, false
	}
	var out []string
	p := 6
	for p < len(b)-1 {
		c := b[p]
		var hdr, n int
		var v int64
		isInt := true
		need := func(k int) bool { return p+k <= len(b)-1 }
		switch {
		case c&0x80 == 0:
			hdr, v = 1, int64(c&0x7f)
		case c&0xc0 == 0x80:
			hdr, n, isInt = 1, int(c&0x3f), false
		case c&0xe0 == 0xc0:
			if !need(2) {
				return nil, false
			}
			hdr = 2
			u := int64(c&0x1f)<<8 | int64(b[p+1])
			if u >= 1<<12 {
				u -= 1 << 13
			}
			v = u
		case c&0xf0 == 0xe0:
			if !need(2) {
				return nil, false
			}
			hdr, n, isInt = 2, int(c&0x0f)<<8|int(b[p+1]), false
		case c == 0xf0:
			if !need(5) {
				return nil, false
			}
			hdr, n, isInt = 5, int(binary.LittleEndian.Uint32(b[p+1:])), false
		case c >= 0xf1 && c <= 0xf4:
			size := map[byte]int{0xf1: 2, 0xf2: 3, 0xf3: 4, 0xf4: 8}[c]
			if !need(1 + size) {
				return nil, false
			}
			hdr, v = 1+size, leInt(b[p+1:p+1+size])
		default:
			return nil, false
		}
		if n < 0 || !need(hdr+n) {
			return nil, false
		}
		if isInt {
			out = append(out, strconv.FormatInt(v, 10))
		} else {
			out = append(out, string(b[p+hdr:p+hdr+n]))
		}
		l := hdr + n
		p += l + backlenSize(uint64(l))
	}
	if p != len(b)-1 {
		return nil, false
	}
	return out, true
}

// backlenSize is lpEncodeBacklen's size for an entry of l bytes.
func backlenSize(l uint64) int {
	switch {
	case l <= 127:
		return 1
	case l < 16383:
		return 2
	case l < 2097151:
		return 3
	case l < 268435455:
		return 4
	}
	return 5
}

// ziplistItems returns the elements of a ziplist (ziplist.c, the compact
// encoding of Redis before 7.0).
func ziplistItems(blob string) ([]string, bool) {
	b := []byte(blob)
	if len(b) < 11 || int(binary.LittleEndian.Uint32(b)) != len(b) || b[len(b)-1] != 0xff {
		return nil, false
	}
	var out []string
	p := 10
	for p < len(b)-1 {
		if b[p] < 254 { // prevlen
			p++
		} else {
			p += 5
		}
		if p >= len(b)-1 {
			return nil, false
		}
		c := b[p]
		need := func(k int) bool { return p+k <= len(b)-1 }
		var hdr, n int
		var v int64
		isInt := true
		switch {
		case c>>6 == 0:
			hdr, n, isInt = 1, int(c&0x3f), false
		case c>>6 == 1:
			if !need(2) {
				return nil, false
			}
			hdr, n, isInt = 2, int(c&0x3f)<<8|int(b[p+1]), false
		case c>>6 == 2:
			if !need(5) {
				return nil, false
			}
			hdr, n, isInt = 5, int(binary.BigEndian.Uint32(b[p+1:])), false
		case c >= 0xf1 && c <= 0xfd:
			hdr, v = 1, int64(c&0x0f)-1
		default:
			size := map[byte]int{0xc0: 2, 0xd0: 4, 0xe0: 8, 0xf0: 3, 0xfe: 1}[c]
			if size == 0 || !need(1+size) {
				return nil, false
			}
			hdr, v = 1+size, leInt(b[p+1:p+1+size])
		}
		if n < 0 || !need(hdr+n) {
			return nil, false
		}
		if isInt {
			out = append(out, strconv.FormatInt(v, 10))
		} else {
			out = append(out, string(b[p+hdr:p+hdr+n]))
		}
		p += hdr + n
	}
	return out, p == len(b)-1
}

// nodesOf is the quicklist of items split into nodes of the given counts.
func nodesOf(items []string, counts []int) *quicklist {
	q := &quicklist{n: len(items)}
	for _, c := range counts {
		q.nodes = append(q.nodes, nodeOf(items[:c]))
		items = items[c:]
	}
	return q
}

// leInt reads a little-endian two's complement integer of len(b) bytes
// (1 to 8), as listpack and ziplist store their integer entries.
func leInt(b []byte) int64 {
	var u uint64
	for i := len(b) - 1; i >= 0; i-- {
		u = u<<8 | uint64(b[i])
	}
	shift := 64 - 8*len(b)
	return int64(u<<shift) >> shift
}

// rdbReader reads RDB lengths and strings (rdbLoadLen,
// rdbGenericLoadStringObject), LZF-compressed ones included.
type rdbReader struct {
	b   []byte
	pos int
}

// lenOrEnc reads a length, or for a special encoding (the top bits 11)
// its type with enc set.
func (rd *rdbReader) lenOrEnc() (n uint64, enc bool, ok bool) {
	if rd.pos >= len(rd.b) {
		return 0, false, false
	}
	first := rd.b[rd.pos]
	rd.pos++
	switch first >> 6 {
	case 0:
		return uint64(first & 0x3f), false, true
	case 1:
		if rd.pos >= len(rd.b) {
			return 0, false, false
		}
		n = uint64(first&0x3f)<<8 | uint64(rd.b[rd.pos])
		rd.pos++
		return n, false, true
	case 3:
		return uint64(first & 0x3f), true, true
	}
	switch first {
	case 0x80:
		if rd.pos+4 > len(rd.b) {
			return 0, false, false
		}
		n = uint64(binary.BigEndian.Uint32(rd.b[rd.pos:]))
		rd.pos += 4
		return n, false, true
	case 0x81:
		if rd.pos+8 > len(rd.b) {
			return 0, false, false
		}
		n = binary.BigEndian.Uint64(rd.b[rd.pos:])
		rd.pos += 8
		return n, false, true
	}
	return 0, false, false
}

func (rd *rdbReader) length() (uint64, bool) {
	n, enc, ok := rd.lenOrEnc()
	return n, ok && !enc
}

func (rd *rdbReader) bytes(n uint64) ([]byte, bool) {
	if n > uint64(len(rd.b)-rd.pos) {
		return nil, false
	}
	b := rd.b[rd.pos : rd.pos+int(n)]
	rd.pos += int(n)
	return b, true
}

func (rd *rdbReader) str() (string, bool) {
	n, enc, ok := rd.lenOrEnc()
	if !ok {
		return "", false
	}
	if !enc {
		b, ok := rd.bytes(n)
		return string(b), ok
	}
	switch n {
	case 0, 1, 2: // RDB_ENC_INT8, INT16, INT32: little-endian integers
		size := uint64(1) << n
		b, ok := rd.bytes(size)
		if !ok {
			return "", false
		}
		return strconv.FormatInt(leInt(b), 10), true
	case 3: // RDB_ENC_LZF
		clen, ok1 := rd.length()
		ulen, ok2 := rd.length()
		if !ok1 || !ok2 {
			return "", false
		}
		in, ok := rd.bytes(clen)
		if !ok {
			return "", false
		}
		return lzfDecompress(in, ulen)
	}
	return "", false
}
