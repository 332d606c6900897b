// Commands from https://redis.io/commands/?group=hyperloglog
//
// The HyperLogLog is Redis' own (hyperloglog.c, 7.0): the same
// MurmurHash64A, the same sparse and dense encodings byte for byte, the
// same promotion rules and cached cardinality, and Ertl's estimator, so
// PFCOUNT answers what the server answers and GET shows the same bytes.

package luatest

import (
	"encoding/binary"
	"fmt"
	"math"
	"strings"

	"github.com/luagen/luagen/luatest/resp"
)

var hllCommands = []*command{
	{name: "pfadd", fn: cmdPfadd},
	{name: "pfcount", fn: cmdPfcount},
	{name: "pfmerge", fn: cmdPfmerge},
	{name: "pfdebug", fn: cmdPfdebug},
}

const (
	hllP             = 14
	hllQ             = 64 - hllP
	hllRegisters     = 1 << hllP
	hllBits          = 6
	hllRegisterMax   = 1<<hllBits - 1
	hllHdrSize       = 16
	hllDenseSize     = hllHdrSize + (hllRegisters*hllBits+7)/8
	hllDense         = 0
	hllSparse        = 1
	hllSparseMaxByte = 3000 // hll-sparse-max-bytes
	hllValMaxValue   = 32
	hllValMaxLen     = 4
	hllZeroMaxLen    = 64
	hllXZeroMaxLen   = 16384
	hllAlphaInf      = 0.721347520444481703680
)

var errNotHLL = resp.ErrorReply("WRONGTYPE Key is not a valid HyperLogLog string value.")

func murmurHash64A(key []byte, seed uint64) uint64 {
	const m = 0xc6a4a7935bd1e995
	const r = 47
	h := seed ^ (uint64(len(key)) * m)
	n := len(key) - len(key)&7
	for i := 0; i < n; i += 8 {
		k := binary.LittleEndian.Uint64(key[i:])
		k *= m
		k ^= k >> r
		k *= m
		h ^= k
		h *= m
	}
	tail := key[n:]
	if len(tail) > 0 {
		for i := len(tail) - 1; i >= 0; i-- {
			h ^= uint64(tail[i]) << (8 * i)
		}
		h *= m
	}
	h ^= h >> r
	h *= m
	h ^= h >> r
	return h
}

// hllPatLen returns the register of ele and the length of its 000..1 run.
func hllPatLen(ele string) (int, int) {
	hash := murmurHash64A([]byte(ele), 0xadc83b19)
	index := int(hash & (hllRegisters - 1))
	hash >>= hllP
	hash |= 1 << hllQ
	count := 1
	for bit := uint64(1); hash&bit == 0; bit <<= 1 {
		count++
	}
	return index, count
}

// newHLL is createHLLObject: a sparse HLL of XZERO opcodes.
func newHLL() []byte {
	b := make([]byte, hllHdrSize, hllHdrSize+2)
	copy(b, "HYLL")
	b[4] = hllSparse
	for left := hllRegisters; left > 0; left -= hllXZeroMaxLen {
		n := min(left, hllXZeroMaxLen) - 1
		b = append(b, byte(n>>8)|0x40, byte(n&0xff))
	}
	return b
}

func isHLL(b string) bool {
	return len(b) >= hllHdrSize && b[:4] == "HYLL" && b[4] <= hllSparse && (b[4] != hllDense || len(b) == hllDenseSize)
}

func denseGet(regs []byte, i int) int {
	byt, fb := i*hllBits/8, uint(i*hllBits&7)
	b0 := uint(regs[byt])
	var b1 uint
	if byt+1 < len(regs) {
		b1 = uint(regs[byt+1])
	}
	return int((b0>>fb | b1<<(8-fb)) & hllRegisterMax)
}

func denseSetReg(regs []byte, i, v int) {
	byt, fb := i*hllBits/8, uint(i*hllBits&7)
	fb8 := 8 - fb
	regs[byt] &^= byte(hllRegisterMax << fb)
	regs[byt] |= byte(uint(v) << fb)
	if byt+1 < len(regs) {
		regs[byt+1] &^= byte(hllRegisterMax >> fb8)
		regs[byt+1] |= byte(uint(v) >> fb8)
	}
}

// denseSet is hllDenseSet: 1 when the register grew.
func denseSet(regs []byte, i, count int) int {
	if denseGet(regs, i) < count {
		denseSetReg(regs, i, count)
		return 1
	}
	return 0
}

// sparseOps walks the sparse opcodes: fn(pos, oplen, first, span, kind, val).
// An XZERO opcode cut at the end reads its second byte as 0, as the server
// reads the string's terminating NUL.
func sparseOps(sp []byte, fn func(pos, oplen, first, span int, kind byte, val int) bool) {
	first := 0
	for p := 0; p < len(sp); {
		op := sp[p]
		switch {
		case op&0xc0 == 0: // ZERO
			if !fn(p, 1, first, int(op&0x3f)+1, 'z', 0) {
				return
			}
			first += int(op&0x3f) + 1
			p++
		case op&0xc0 == 0x40: // XZERO
			var lo byte
			if p+1 < len(sp) {
				lo = sp[p+1]
			}
			span := int(op&0x3f)<<8 | int(lo) + 1
			if !fn(p, 2, first, span, 'x', 0) {
				return
			}
			first += span
			p += 2
		default: // VAL
			span := int(op&0x3) + 1
			if !fn(p, 1, first, span, 'v', int(op>>2&0x1f)+1) {
				return
			}
			first += span
			p++
		}
	}
}

// sparseRegisters walks a sparse HLL as hllMerge and hllSparseToDense do,
// calling set for each register a VAL opcode gives. It reports whether the
// opcodes cover exactly the 16384 registers (false: the server's
// "Corrupted HLL"). A VAL that would run past the last register stops the
// walk and is corruption even after a complete HLL: 7.0.15 as the
// differential tests run it (Debian's build, with the security fixes to
// hyperloglog.c) refuses a trailing VAL that the 7.0.15 tag's loop would
// skip.
func sparseRegisters(sp []byte, set func(i, val int)) bool {
	i, overflow := 0, false
	sparseOps(sp, func(_, _, first, span int, kind byte, val int) bool {
		if kind == 'v' {
			if first+span > hllRegisters {
				overflow = true
				return false
			}
			for j := 0; j < span; j++ {
				set(first+j, val)
			}
		}
		i = first + span
		return true
	})
	return !overflow && i == hllRegisters
}

// toDense is hllSparseToDense; false when the sparse HLL is corrupted.
func toDense(b []byte) ([]byte, bool) {
	if b[4] == hllDense {
		return b, true
	}
	d := make([]byte, hllDenseSize)
	copy(d, b[:hllHdrSize])
	d[4] = hllDense
	regs := d[hllHdrSize:]
	if !sparseRegisters(b[hllHdrSize:], func(i, val int) { denseSetReg(regs, i, val) }) {
		return b, false
	}
	return d, true
}

func valOp(val, n int) byte { return byte((val-1)<<2|(n-1)) | 0x80 }

func zeroOps(n int) []byte {
	if n > hllZeroMaxLen {
		return []byte{byte((n-1)>>8) | 0x40, byte((n - 1) & 0xff)}
	}
	return []byte{byte(n - 1)}
}

// hllSet is hllSparseSet / hllDenseSet: it returns the (possibly
// promoted) HLL and 1 when a register grew, 0 when none did, or -1 when
// the sparse HLL is corrupted (its opcodes end before the register). It
// follows the C code step by step on a buffer with the NUL the server's
// string ends with, so a corrupted HLL changes as it does there.
func hllSet(b []byte, index, count int) ([]byte, int) {
	if b[4] == hllDense {
		return b, denseSet(b[hllHdrSize:], index, count)
	}
	promote := func() ([]byte, int) {
		d, ok := toDense(b)
		if !ok {
			return b, -1
		}
		denseSet(d[hllHdrSize:], index, count)
		return d, 1
	}
	if count > hllValMaxValue {
		return promote()
	}
	// full is the string plus room for the 3 bytes a split adds and the
	// terminating NUL; end is the string's length.
	full := make([]byte, len(b)+4)
	copy(full, b)
	end := len(b)
	isZero := func(p int) bool { return full[p]&0xc0 == 0 }
	isXZero := func(p int) bool { return full[p]&0xc0 == 0x40 }
	spanAt := func(p int) (span, oplen int) {
		switch {
		case isZero(p):
			return int(full[p]&0x3f) + 1, 1
		case !isXZero(p): // VAL
			return int(full[p]&0x3) + 1, 1
		default:
			return int(full[p]&0x3f)<<8 | int(full[p+1]) + 1, 2
		}
	}
	// Step 1: find the opcode that covers index.
	p, first, span, oplen, prev := hllHdrSize, 0, 0, 0, -1
	for p < end {
		span, oplen = spanAt(p)
		if index <= first+span-1 {
			break
		}
		prev = p
		p += oplen
		first += span
	}
	if span == 0 || p >= end {
		return b, -1
	}
	next := p + oplen
	if next >= end {
		next = -1
	}
	isVal := !isZero(p) && !isXZero(p)
	cur := int(full[p]>>2&0x1f) + 1 // a VAL's value
	// Step 2: the cases that change the opcode in place.
	var seq []byte
	switch {
	case isVal && cur >= count:
		return b, 0
	case isVal && span == 1, isZero(p) && span == 1:
		full[p] = valOp(count, 1)
	default: // split the opcode
		last := first + span - 1
		if !isVal {
			if index != first {
				seq = append(seq, zeroOps(index-first)...)
			}
			seq = append(seq, valOp(count, 1))
			if index != last {
				seq = append(seq, zeroOps(last-index)...)
			}
		} else {
			if index != first {
				seq = append(seq, valOp(cur, index-first))
			}
			seq = append(seq, valOp(count, 1))
			if index != last {
				seq = append(seq, valOp(cur, last-index))
			}
		}
		// Step 3: put the new sequence in place of the old opcode.
		delta := len(seq) - oplen
		if delta > 0 && end+delta > hllSparseMaxByte {
			return promote()
		}
		if delta != 0 && next >= 0 {
			copy(full[next+delta:], full[next:end])
		}
		end += delta
		copy(full[p:], seq)
	}
	// Step 4: merge adjacent VAL opcodes of the same value, scanning up to
	// five opcodes from the one before the change.
	p = hllHdrSize
	if prev >= 0 {
		p = prev
	}
	for scan := 5; p < end && scan > 0; scan-- {
		if isXZero(p) {
			p += 2
			continue
		}
		if isZero(p) {
			p++
			continue
		}
		if p+1 < end && full[p+1]&0x80 != 0 {
			v1, v2 := int(full[p]>>2&0x1f)+1, int(full[p+1]>>2&0x1f)+1
			if v1 == v2 {
				if n := int(full[p]&3) + 1 + int(full[p+1]&3) + 1; n <= hllValMaxLen {
					full[p+1] = valOp(v1, n)
					copy(full[p:], full[p+1:end+1])
					end--
					continue // the server re-examines p, and counts the step
				}
			}
		}
		p++
	}
	return full[:end:end], 1
}

// hllMax raises max to the registers of an HLL (hllMerge); false when the
// sparse HLL is corrupted.
func hllMax(b []byte, max []int) bool {
	if b[4] == hllDense {
		regs := b[hllHdrSize:]
		for i := range max {
			if v := denseGet(regs, i); v > max[i] {
				max[i] = v
			}
		}
		return true
	}
	return sparseRegisters(b[hllHdrSize:], func(i, val int) {
		if val > max[i] {
			max[i] = val
		}
	})
}

// sparseValid is hllSparseRegHisto's check: the opcodes' runs add up to
// exactly the 16384 registers.
func sparseValid(sp []byte) bool {
	n := 0
	sparseOps(sp, func(_, _, _, span int, _ byte, _ int) bool { n += span; return true })
	return n == hllRegisters
}

var errCorruptHLL = resp.ErrorReply("INVALIDOBJ Corrupted HLL object detected")

func hllSigma(x float64) float64 {
	if x == 1 {
		return math.Inf(1)
	}
	y, z := 1.0, x
	for {
		x *= x
		zp := z
		z += x * y
		y += y
		if zp == z {
			return z
		}
	}
}

func hllTau(x float64) float64 {
	if x == 0 || x == 1 {
		return 0
	}
	y, z := 1.0, 1-x
	for {
		x = math.Sqrt(x)
		zp := z
		y *= 0.5
		z -= (1 - x) * (1 - x) * y
		if zp == z {
			return z / 3
		}
	}
}

// hllCount is hllCount over a register array.
func hllCount(regs []int) int64 {
	var histo [64]int
	for _, v := range regs {
		histo[v]++
	}
	m := float64(hllRegisters)
	z := m * hllTau((m-float64(histo[hllQ+1]))/m)
	for j := hllQ; j >= 1; j-- {
		z += float64(histo[j])
		z *= 0.5
	}
	z += m * hllSigma(float64(histo[0])/m)
	return int64(math.Round(hllAlphaInf * m * m / z))
}

// hllOf returns key's entry (nil when missing) or the error reply for a
// key that is not an HLL (isHLLObjectOrReply).
func (c *cmdCtx) hllOf(key string) (*entry, *resp.Reply) {
	e, wrong := c.r.lookupType(key, typeString)
	if wrong {
		return nil, &errWrongType
	}
	if e != nil && !isHLL(e.str) {
		return nil, &errNotHLL
	}
	return e, nil
}

// putHLL stores b as key's HLL: into e, or a new entry when e is nil.
func (c *cmdCtx) putHLL(key string, e *entry, b []byte) {
	if e == nil {
		c.r.db[key] = &entry{kind: typeString, str: string(b), raw: true}
		return
	}
	e.str, e.raw = string(b), true
}

// PFADD key [element ...] — https://redis.io/commands/pfadd/
func cmdPfadd(c *cmdCtx, args []string) resp.Reply {
	e, bad := c.hllOf(args[0])
	if bad != nil {
		return *bad
	}
	updated := false
	var b []byte
	if e == nil {
		b, updated = newHLL(), true
	} else {
		b = []byte(e.str)
		e.raw = true // dbUnshareStringValue
	}
	for _, el := range args[1:] {
		idx, count := hllPatLen(el)
		var r int
		b, r = hllSet(b, idx, count)
		if r < 0 { // the elements before stay added, as on the server
			if updated {
				b[hllHdrSize-1] |= 0x80
			}
			if e != nil { // (a new HLL is never corrupted)
				e.str = string(b)
			}
			return errCorruptHLL
		}
		updated = updated || r == 1
	}
	if !updated {
		return resp.IntReply(0)
	}
	b[hllHdrSize-1] |= 0x80 // invalidate the cached cardinality
	c.putHLL(args[0], e, b)
	return resp.IntReply(1)
}

// PFCOUNT key [key ...] — https://redis.io/commands/pfcount/ (one key: the
// cached cardinality, recomputed and stored when invalid).
func cmdPfcount(c *cmdCtx, args []string) resp.Reply {
	if len(args) > 1 {
		max := make([]int, hllRegisters)
		for _, k := range args {
			e, bad := c.hllOf(k)
			if bad != nil {
				return *bad
			}
			if e != nil && !hllMax([]byte(e.str), max) {
				return errCorruptHLL
			}
		}
		return resp.IntReply(hllCount(max))
	}
	e, bad := c.hllOf(args[0])
	if bad != nil {
		return *bad
	}
	if e == nil {
		return resp.IntReply(0)
	}
	e.raw = true // dbUnshareStringValue
	b := []byte(e.str)
	card := b[8:16]
	if card[7]&0x80 == 0 {
		return resp.IntReply(int64(binary.LittleEndian.Uint64(card)))
	}
	if b[4] == hllSparse && !sparseValid(b[hllHdrSize:]) {
		return errCorruptHLL
	}
	max := make([]int, hllRegisters)
	hllMax(b, max)
	n := hllCount(max)
	binary.LittleEndian.PutUint64(card, uint64(n))
	e.str = string(b)
	return resp.IntReply(n)
}

// PFMERGE destkey [sourcekey ...] — https://redis.io/commands/pfmerge/
// (destkey is one of the sources; dense if any source is dense).
func cmdPfmerge(c *cmdCtx, args []string) resp.Reply {
	max := make([]int, hllRegisters)
	useDense := false
	var dst *entry
	for i, k := range args {
		e, bad := c.hllOf(k)
		if bad != nil {
			return *bad
		}
		if i == 0 {
			dst = e
		}
		if e != nil {
			useDense = useDense || e.str[4] == hllDense
			if !hllMax([]byte(e.str), max) {
				return errCorruptHLL
			}
		}
	}
	var b []byte
	if dst == nil {
		b = newHLL()
	} else {
		b = []byte(dst.str)
		dst.raw = true // dbUnshareStringValue
	}
	if useDense {
		var ok bool
		if b, ok = toDense(b); !ok {
			return errCorruptHLL
		}
	}
	for j, v := range max {
		if v != 0 {
			b, _ = hllSet(b, j, v)
		}
	}
	b[hllHdrSize-1] |= 0x80
	c.putHLL(args[0], dst, b)
	return resp.OK
}

// PFDEBUG GETREG | DECODE | ENCODING | TODENSE key —
// https://redis.io/commands/pfdebug/ (pfdebugCommand; GETREG converts a
// sparse HLL to dense first, as the server does).
func cmdPfdebug(c *cmdCtx, args []string) resp.Reply {
	e, bad := c.hllOf(args[1])
	if bad != nil {
		return *bad
	}
	if e == nil {
		return resp.ErrorReply("ERR The specified key does not exist")
	}
	e.raw = true // dbUnshareStringValue
	b := []byte(e.str)
	switch strings.ToUpper(args[0]) {
	case "GETREG":
		var ok bool
		if b, ok = toDense(b); !ok {
			return errCorruptHLL
		}
		e.str = string(b)
		out := make([]resp.Reply, hllRegisters)
		for i := range out {
			out[i] = resp.IntReply(int64(denseGet(b[hllHdrSize:], i)))
		}
		return resp.ArrayReply(out...)
	case "DECODE":
		if b[4] != hllSparse {
			return resp.ErrorReply("ERR HLL encoding is not sparse")
		}
		var parts []string
		sparseOps(b[hllHdrSize:], func(_, _, _, span int, kind byte, val int) bool {
			switch kind {
			case 'z':
				parts = append(parts, fmt.Sprintf("z:%d", span))
			case 'x':
				parts = append(parts, fmt.Sprintf("Z:%d", span))
			default:
				parts = append(parts, fmt.Sprintf("v:%d,%d", val, span))
			}
			return true
		})
		return resp.BulkReply(strings.Join(parts, " "))
	case "ENCODING":
		if b[4] == hllSparse {
			return resp.StatusReply("sparse")
		}
		return resp.StatusReply("dense")
	case "TODENSE":
		if b[4] == hllDense {
			return resp.IntReply(0)
		}
		d, ok := toDense(b)
		if !ok {
			return errCorruptHLL
		}
		e.str = string(d)
		return resp.IntReply(1)
	}
	return resp.ErrorReply(fmt.Sprintf("ERR Unknown PFDEBUG subcommand '%s'", args[0]))
}
