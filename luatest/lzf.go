package luatest

// LZF as Redis 7.0 builds it (deps/lzf: lzf_c.c and lzf_d.c with lzfP.h's
// defaults HLOG 16, VERY_FAST 1, ULTRA_FAST 0, CHECK_INPUT 1). RDB strings
// longer than 20 bytes are written compressed when that saves space
// (rdbSaveLzfStringObject), so DUMP and FUNCTION DUMP payloads are only
// byte-identical to the server's when the compressor makes the same
// choices: this is a line-by-line port, not a compatible re-implementation.
//
// One difference cannot be ported: lzf_c.c does not clear its hash table
// (INIT_HTAB 0), so a slot may hold a pointer left on the stack by an
// earlier call. Such a pointer is used only when it falls inside the
// current input within 8 KB before the cursor and the three bytes there
// match, so it changes the output in rare cases only; luatest starts from
// an empty table, which is what a fresh stack gives.

const (
	lzfHLog   = 16
	lzfHSize  = 1 << lzfHLog
	lzfMaxLit = 1 << 5
	lzfMaxOff = 1 << 13
	lzfMaxRef = (1 << 8) + (1 << 3)
)

// lzfIdx is IDX(h) for VERY_FAST: the hash slot of the three bytes in h.
func lzfIdx(h uint32) uint32 { return ((h >> (3*8 - lzfHLog)) - h*5) & (lzfHSize - 1) }

// lzfCompress is lzf_compress: it compresses in into at most outLen bytes
// and returns nil when the result would not fit (the caller then stores the
// string as is).
func lzfCompress(in []byte, outLen int) []byte {
	inLen := len(in)
	if inLen == 0 || outLen == 0 {
		return nil
	}
	// htab holds 1 + the input position of the last occurrence of each
	// hash, 0 for none (lzf_c.c's NULL pointer).
	htab := make([]int32, lzfHSize)
	// out has room for the writes lzf_compress makes past out_end before
	// it notices (a run's length byte reserved at op++).
	out := make([]byte, outLen+4)
	ip, op := 0, 0
	lit := 0
	op++ // start run

	first := func(p int) uint32 { return uint32(in[p])<<8 | uint32(in[p+1]) }
	next := func(v uint32, p int) uint32 { return v<<8 | uint32(in[p+2]) }

	var hval uint32
	if inLen >= 2 {
		hval = first(ip)
	}
	for ip < inLen-2 {
		hval = next(hval, ip)
		slot := lzfIdx(hval)
		ref := int(htab[slot]) - 1 // -1: NULL
		htab[slot] = int32(ip + 1)

		if ref >= 0 && ip-ref-1 < lzfMaxOff && ip-ref-1 >= 0 && ref > 0 &&
			in[ref+2] == in[ip+2] && in[ref] == in[ip] && in[ref+1] == in[ip+1] {
			off := ip - ref - 1
			// match found at ref
			length := 2
			maxlen := inLen - ip - length
			if maxlen > lzfMaxRef {
				maxlen = lzfMaxRef
			}
			if op+3+1 >= outLen { // first a faster conservative test
				notLit := 0
				if lit == 0 {
					notLit = 1
				}
				if op-notLit+3+1 >= outLen { // second the exact but rare test
					return nil
				}
			}
			out[op-lit-1] = byte(lit - 1) // stop run
			if lit == 0 {
				op-- // undo run if length is zero
			}
			for {
				if maxlen > 16 {
					stop := false
					for k := 0; k < 16; k++ {
						length++
						if in[ref+length] != in[ip+length] {
							stop = true
							break
						}
					}
					if stop {
						break
					}
				}
				for {
					length++
					if !(length < maxlen && in[ref+length] == in[ip+length]) {
						break
					}
				}
				break
			}
			length -= 2 // length is now #octets - 1
			ip++
			if length < 7 {
				out[op] = byte(off>>8 + length<<5)
				op++
			} else {
				out[op] = byte(off>>8 + 7<<5)
				op++
				out[op] = byte(length - 7)
				op++
			}
			out[op] = byte(off)
			op++
			lit = 0
			op++ // start run
			ip += length + 1
			if ip >= inLen-2 {
				break
			}
			// VERY_FAST: hash the two positions before the new cursor.
			ip -= 2
			hval = first(ip)
			hval = next(hval, ip)
			htab[lzfIdx(hval)] = int32(ip + 1)
			ip++
			hval = next(hval, ip)
			htab[lzfIdx(hval)] = int32(ip + 1)
			ip++
		} else {
			// one more literal byte we must copy
			if op >= outLen {
				return nil
			}
			lit++
			out[op] = in[ip]
			op++
			ip++
			if lit == lzfMaxLit {
				out[op-lit-1] = byte(lit - 1) // stop run
				lit = 0
				op++ // start run
			}
		}
	}
	if op+3 > outLen { // at most 3 bytes can be missing here
		return nil
	}
	for ip < inLen {
		lit++
		out[op] = in[ip]
		op++
		ip++
		if lit == lzfMaxLit {
			out[op-lit-1] = byte(lit - 1)
			lit = 0
			op++
		}
	}
	out[op-lit-1] = byte(lit - 1) // end run
	if lit == 0 {
		op-- // undo run if length is zero
	}
	return out[:op]
}

// lzfDecompress is lzf_decompress (lzf_d.c) for an output of exactly n
// bytes. For n = 0 anything goes: lzf_decompress answers 0 on an error,
// which is the length the server wanted, so it loads an empty string.
func lzfDecompress(in []byte, n uint64) (string, bool) {
	if n == 0 {
		return "", true
	}
	if n > 1<<32 {
		return "", false
	}
	out := make([]byte, 0, n)
	for ip := 0; ip < len(in); {
		ctrl := int(in[ip])
		ip++
		if ctrl < 32 {
			ctrl++
			if ip+ctrl > len(in) || uint64(len(out)+ctrl) > n {
				return "", false
			}
			out = append(out, in[ip:ip+ctrl]...)
			ip += ctrl
			continue
		}
		l := ctrl >> 5
		if l == 7 {
			if ip >= len(in) {
				return "", false
			}
			l += int(in[ip])
			ip++
		}
		if ip >= len(in) {
			return "", false
		}
		ref := len(out) - (ctrl&0x1f)<<8 - 1 - int(in[ip])
		ip++
		l += 2
		if ref < 0 || uint64(len(out)+l) > n {
			return "", false
		}
		for i := 0; i < l; i++ {
			out = append(out, out[ref+i])
		}
	}
	if uint64(len(out)) != n {
		return "", false
	}
	return string(out), true
}
