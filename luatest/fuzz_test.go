package luatest_test

import (
	"fmt"
	"strconv"
	"strings"
	"testing"

	"github.com/luagen/luagen/luatest"
	"github.com/luagen/luagen/luatest/resp"
	"github.com/luagen/luagen/redistest"
)

// FuzzDifferential turns its input into a script of random commands
// (redis.pcall, so every error is collected too) over a handful of keys,
// fields and values chosen to collide, runs it on luatest and on a real
// redis-server, and requires the same reply and the same keyspace. The
// seeds under testdata/fuzz/FuzzDifferential run with every `go test`.
func FuzzDifferential(f *testing.F) {
	for _, seed := range []string{
		"\x00\x01\x02\x03\x04\x05\x06\x07\x08\x09",
		"\x10\x11\x12\x13\x14\x15\x16\x17\x18\x19\x1a\x1b",
		"\x20\x21\x22\x23\x24\x25\x26\x27\x28\x29\x2a\x2b\x2c",
		"\x30\x31\x32\x33\x34\x35\x36\x37\x38\x39\x3a\x3b\x3c\x3d",
		"\x01\x01\x01\x02\x02\x02\x03\x03\x03\xff\xfe\xfd",
		"SET k1 5; INCRBYFLOAT; ZADD GT CH; LPOP count",
		// SCAN loops that write: the last op of fuzzCommands + 1 selects
		// fuzzScanLoop, so these bytes depend on len(fuzzCommands).
		string([]byte{byte(len(fuzzCommands)), 0, 0, 2, 0, 0}),
		string([]byte{byte(len(fuzzCommands)), 1, 1, 2, 0, 0, 1, 0, 1}),
		string([]byte{byte(len(fuzzCommands)), 2, 2, 1, 0, 2}),
		string([]byte{byte(len(fuzzCommands)), 3, 3, 0, 0, 1, 0, 0}),
	} {
		f.Add([]byte(seed))
	}
	srv := redistest.Start(f)
	real := dial(f, srv.Addr, 2)
	f.Fuzz(func(t *testing.T, data []byte) {
		script := fuzzScript(data)
		if script == "" {
			return
		}
		do(t, real, "FLUSHALL")
		fake := luatest.New(luatest.WithKeysCheck(luatest.KeysUnchecked))
		defer fake.Close()
		args := []string{"EVAL", script, "0"}
		want := do(t, real, args...)
		got := fake.Command(2, args...)
		if !resp.Equal(want, got) {
			t.Fatalf("script:\n%s\nserver:  %s\nluatest: %s", script, want, got)
		}
		if msg := diffKeyspace(dumpKeyspace(t, func(a ...string) resp.Reply { return do(t, real, a...) }),
			dumpKeyspace(t, func(a ...string) resp.Reply { return fake.Command(2, a...) })); msg != "" {
			t.Fatalf("script:\n%s\nkeyspace differs:\n%s", script, msg)
		}
	})
}

// The value domains are small so commands collide on keys, types and
// boundaries (integer overflow, floats, empty strings).
var (
	fzKeys   = []string{"k0", "k1", "k2", "k3"}
	fzFields = []string{"f0", "f1", "f2"}
	fzValues = []string{"0", "1", "-1", "5", "abc", "1.5", "", "9223372036854775807", "-9223372036854775808", "10", "1e3", " 7", "007", "3.0"}
	fzInts   = []string{"0", "1", "2", "-1", "-2", "3", "100", "-100", "x", "1.5"}
	fzScores = []string{"1", "2.5", "-inf", "+inf", "0", "-3", "(1", "abc", "1e2", "0x10"}
	fzTTLs   = []string{"100", "0", "-1", "50000", "x", "3600"}
)

type fuzzInput struct {
	data []byte
	i    int
}

func (in *fuzzInput) next() int {
	if in.i >= len(in.data) {
		return 0
	}
	b := in.data[in.i]
	in.i++
	return int(b)
}

func (in *fuzzInput) pick(xs []string) string { return xs[in.next()%len(xs)] }

// fuzzCommands build one command each from the input.
var fuzzCommands = []func(in *fuzzInput) []string{
	func(in *fuzzInput) []string { return []string{"GET", in.pick(fzKeys)} },
	func(in *fuzzInput) []string {
		c := []string{"SET", in.pick(fzKeys), in.pick(fzValues)}
		for n := in.next() % 3; n > 0; n-- {
			switch in.next() % 7 {
			case 0:
				c = append(c, "NX")
			case 1:
				c = append(c, "XX")
			case 2:
				c = append(c, "GET")
			case 3:
				c = append(c, "KEEPTTL")
			case 4:
				c = append(c, "EX", in.pick(fzTTLs))
			case 5:
				c = append(c, "PX", in.pick(fzTTLs))
			default:
				c = append(c, "BOGUS")
			}
		}
		return c
	},
	func(in *fuzzInput) []string { return []string{"INCR", in.pick(fzKeys)} },
	func(in *fuzzInput) []string { return []string{"INCRBY", in.pick(fzKeys), in.pick(fzValues)} },
	func(in *fuzzInput) []string { return []string{"DECRBY", in.pick(fzKeys), in.pick(fzInts)} },
	func(in *fuzzInput) []string { return []string{"INCRBYFLOAT", in.pick(fzKeys), in.pick(fzValues)} },
	func(in *fuzzInput) []string { return []string{"APPEND", in.pick(fzKeys), in.pick(fzValues)} },
	func(in *fuzzInput) []string { return []string{"STRLEN", in.pick(fzKeys)} },
	func(in *fuzzInput) []string {
		return []string{"GETRANGE", in.pick(fzKeys), in.pick(fzInts), in.pick(fzInts)}
	},
	func(in *fuzzInput) []string { return []string{"DEL", in.pick(fzKeys), in.pick(fzKeys)} },
	func(in *fuzzInput) []string { return []string{"EXISTS", in.pick(fzKeys), in.pick(fzKeys)} },
	func(in *fuzzInput) []string { return []string{"TYPE", in.pick(fzKeys)} },
	func(in *fuzzInput) []string {
		c := []string{"EXPIRE", in.pick(fzKeys), in.pick(fzTTLs)}
		if in.next()%3 == 0 {
			c = append(c, in.pick([]string{"NX", "XX", "GT", "LT"}))
		}
		return c
	},
	func(in *fuzzInput) []string { return []string{"PERSIST", in.pick(fzKeys)} },
	func(in *fuzzInput) []string { return []string{"TTL", in.pick(fzKeys)} },
	func(in *fuzzInput) []string {
		return []string{"HSET", in.pick(fzKeys), in.pick(fzFields), in.pick(fzValues)}
	},
	func(in *fuzzInput) []string { return []string{"HGET", in.pick(fzKeys), in.pick(fzFields)} },
	func(in *fuzzInput) []string { return []string{"HDEL", in.pick(fzKeys), in.pick(fzFields)} },
	func(in *fuzzInput) []string {
		return []string{"HINCRBY", in.pick(fzKeys), in.pick(fzFields), in.pick(fzInts)}
	},
	func(in *fuzzInput) []string {
		return []string{"HINCRBYFLOAT", in.pick(fzKeys), in.pick(fzFields), in.pick(fzValues)}
	},
	func(in *fuzzInput) []string { return []string{"HGETALL", in.pick(fzKeys)} },
	func(in *fuzzInput) []string { return []string{"HLEN", in.pick(fzKeys)} },
	func(in *fuzzInput) []string { return []string{"LPUSH", in.pick(fzKeys), in.pick(fzValues)} },
	func(in *fuzzInput) []string {
		return []string{"RPUSH", in.pick(fzKeys), in.pick(fzValues), in.pick(fzValues)}
	},
	func(in *fuzzInput) []string {
		c := []string{in.pick([]string{"LPOP", "RPOP"}), in.pick(fzKeys)}
		if in.next()%2 == 0 {
			c = append(c, in.pick(fzInts))
		}
		return c
	},
	func(in *fuzzInput) []string {
		return []string{"LRANGE", in.pick(fzKeys), in.pick(fzInts), in.pick(fzInts)}
	},
	func(in *fuzzInput) []string {
		return []string{"LREM", in.pick(fzKeys), in.pick(fzInts), in.pick(fzValues)}
	},
	func(in *fuzzInput) []string { return []string{"LINDEX", in.pick(fzKeys), in.pick(fzInts)} },
	func(in *fuzzInput) []string {
		return []string{"LSET", in.pick(fzKeys), in.pick(fzInts), in.pick(fzValues)}
	},
	func(in *fuzzInput) []string {
		return []string{"LTRIM", in.pick(fzKeys), in.pick(fzInts), in.pick(fzInts)}
	},
	func(in *fuzzInput) []string { return []string{"SADD", in.pick(fzKeys), in.pick(fzValues)} },
	func(in *fuzzInput) []string { return []string{"SREM", in.pick(fzKeys), in.pick(fzValues)} },
	func(in *fuzzInput) []string { return []string{"SISMEMBER", in.pick(fzKeys), in.pick(fzValues)} },
	func(in *fuzzInput) []string { return []string{"SCARD", in.pick(fzKeys)} },
	func(in *fuzzInput) []string {
		c := []string{"ZADD", in.pick(fzKeys)}
		for n := in.next() % 3; n > 0; n-- {
			c = append(c, in.pick([]string{"NX", "XX", "GT", "LT", "CH", "INCR"}))
		}
		return append(c, in.pick(fzScores), in.pick(fzFields))
	},
	func(in *fuzzInput) []string { return []string{"ZSCORE", in.pick(fzKeys), in.pick(fzFields)} },
	func(in *fuzzInput) []string {
		return []string{"ZINCRBY", in.pick(fzKeys), in.pick(fzScores), in.pick(fzFields)}
	},
	func(in *fuzzInput) []string {
		c := []string{"ZRANGE", in.pick(fzKeys), in.pick(fzScores), in.pick(fzScores)}
		for n := in.next() % 3; n > 0; n-- {
			switch in.next() % 4 {
			case 0:
				c = append(c, "BYSCORE")
			case 1:
				c = append(c, "REV")
			case 2:
				c = append(c, "WITHSCORES")
			default:
				c = append(c, "LIMIT", in.pick(fzInts), in.pick(fzInts))
			}
		}
		return c
	},
	func(in *fuzzInput) []string { return []string{"ZREM", in.pick(fzKeys), in.pick(fzFields)} },
	func(in *fuzzInput) []string {
		return []string{"ZCOUNT", in.pick(fzKeys), in.pick(fzScores), in.pick(fzScores)}
	},
	func(in *fuzzInput) []string { return []string{"ZRANK", in.pick(fzKeys), in.pick(fzFields)} },
	func(in *fuzzInput) []string { return []string{"ZPOPMIN", in.pick(fzKeys)} },
	func(in *fuzzInput) []string { return []string{"RENAME", in.pick(fzKeys), in.pick(fzKeys)} },
	func(in *fuzzInput) []string { return []string{"GETDEL", in.pick(fzKeys)} },
	func(in *fuzzInput) []string { return []string{"GETSET", in.pick(fzKeys), in.pick(fzValues)} },
	func(in *fuzzInput) []string { return []string{"MGET", in.pick(fzKeys), in.pick(fzKeys)} },
	func(in *fuzzInput) []string {
		return []string{"MSET", in.pick(fzKeys), in.pick(fzValues), in.pick(fzKeys), in.pick(fzValues)}
	},
	func(in *fuzzInput) []string { return []string{"SETNX", in.pick(fzKeys), in.pick(fzValues)} },
}

// Domains of the commands added with databases, bitmaps, lex ranges,
// set algebra, SORT, streams, HyperLogLog and geo.
var (
	fzDBs     = []string{"0", "1", "2", "16", "x"}
	fzLex     = []string{"-", "+", "[f0", "(f1", "[f2", "f0", "(a"}
	fzIDs     = []string{"1", "2", "1-1", "2-*", "5-1", "0-0", "x", "3"}
	fzBitOffs = []string{"0", "1", "7", "8", "15", "100", "-1", "x"}
	fzCoords  = [][2]string{{"13.361389", "38.115556"}, {"15.087269", "37.502669"}, {"0", "0"}, {"181", "0"}, {"-0.1", "51.5"}}
)

func init() {
	fuzzCommands = append(fuzzCommands,
		func(in *fuzzInput) []string { return []string{"SELECT", in.pick(fzDBs)} },
		func(in *fuzzInput) []string { return []string{"MOVE", in.pick(fzKeys), in.pick(fzDBs)} },
		func(in *fuzzInput) []string {
			c := []string{"COPY", in.pick(fzKeys), in.pick(fzKeys)}
			if in.next()%2 == 0 {
				c = append(c, "DB", in.pick(fzDBs))
			}
			if in.next()%2 == 0 {
				c = append(c, "REPLACE")
			}
			return c
		},
		func(in *fuzzInput) []string { return []string{"SWAPDB", in.pick(fzDBs), in.pick(fzDBs)} },
		func(in *fuzzInput) []string { return []string{"OBJECT", "ENCODING", in.pick(fzKeys)} },
		func(in *fuzzInput) []string {
			return []string{"SETBIT", in.pick(fzKeys), in.pick(fzBitOffs), in.pick([]string{"0", "1", "2"})}
		},
		func(in *fuzzInput) []string { return []string{"GETBIT", in.pick(fzKeys), in.pick(fzBitOffs)} },
		func(in *fuzzInput) []string {
			c := []string{"BITCOUNT", in.pick(fzKeys)}
			if in.next()%2 == 0 {
				c = append(c, in.pick(fzInts), in.pick(fzInts))
				if in.next()%2 == 0 {
					c = append(c, in.pick([]string{"BIT", "BYTE"}))
				}
			}
			return c
		},
		func(in *fuzzInput) []string {
			c := []string{"BITPOS", in.pick(fzKeys), in.pick([]string{"0", "1"})}
			for n := in.next() % 3; n > 0; n-- {
				c = append(c, in.pick(fzInts))
			}
			return c
		},
		func(in *fuzzInput) []string {
			return []string{"BITOP", in.pick([]string{"AND", "OR", "XOR", "NOT"}), in.pick(fzKeys), in.pick(fzKeys)}
		},
		func(in *fuzzInput) []string {
			t := in.pick([]string{"u4", "i8", "u8", "i16", "u1", "i64"})
			c := []string{"BITFIELD", in.pick(fzKeys)}
			if in.next()%2 == 0 {
				c = append(c, "OVERFLOW", in.pick([]string{"WRAP", "SAT", "FAIL"}))
			}
			switch in.next() % 3 {
			case 0:
				c = append(c, "GET", t, in.pick(fzBitOffs))
			case 1:
				c = append(c, "SET", t, in.pick(fzBitOffs), in.pick(fzValues))
			default:
				c = append(c, "INCRBY", t, in.pick(fzBitOffs), in.pick(fzInts))
			}
			return c
		},
		func(in *fuzzInput) []string {
			c := []string{"LPOS", in.pick(fzKeys), in.pick(fzValues)}
			if in.next()%2 == 0 {
				c = append(c, in.pick([]string{"RANK", "COUNT", "MAXLEN"}), in.pick(fzInts))
			}
			return c
		},
		func(in *fuzzInput) []string {
			return []string{"LMPOP", "2", in.pick(fzKeys), in.pick(fzKeys), in.pick([]string{"LEFT", "RIGHT"}), "COUNT", in.pick(fzInts)}
		},
		func(in *fuzzInput) []string { return []string{"SINTERCARD", "2", in.pick(fzKeys), in.pick(fzKeys)} },
		func(in *fuzzInput) []string {
			return []string{"LCS", in.pick(fzKeys), in.pick(fzKeys), in.pick([]string{"LEN", "IDX", "WITHMATCHLEN"})}
		},
		func(in *fuzzInput) []string {
			return []string{in.pick([]string{"ZRANGEBYLEX", "ZREVRANGEBYLEX", "ZLEXCOUNT", "ZREMRANGEBYLEX"}), in.pick(fzKeys), in.pick(fzLex), in.pick(fzLex)}
		},
		func(in *fuzzInput) []string {
			c := []string{in.pick([]string{"ZUNIONSTORE", "ZINTERSTORE", "ZDIFFSTORE"}), in.pick(fzKeys), "2", in.pick(fzKeys), in.pick(fzKeys)}
			if c[0] != "ZDIFFSTORE" && in.next()%2 == 0 {
				c = append(c, "WEIGHTS", in.pick(fzScores), in.pick(fzScores))
			}
			if c[0] != "ZDIFFSTORE" && in.next()%2 == 0 {
				c = append(c, "AGGREGATE", in.pick([]string{"SUM", "MIN", "MAX", "FOO"}))
			}
			return c
		},
		func(in *fuzzInput) []string {
			return []string{in.pick([]string{"ZUNION", "ZINTER", "ZDIFF"}), "2", in.pick(fzKeys), in.pick(fzKeys), "WITHSCORES"}
		},
		func(in *fuzzInput) []string {
			return []string{"ZRANGESTORE", in.pick(fzKeys), in.pick(fzKeys), in.pick(fzInts), in.pick(fzInts)}
		},
		func(in *fuzzInput) []string {
			return []string{"ZMPOP", "1", in.pick(fzKeys), in.pick([]string{"MIN", "MAX"}), "COUNT", in.pick(fzInts)}
		},
		func(in *fuzzInput) []string { return []string{"ZINTERCARD", "2", in.pick(fzKeys), in.pick(fzKeys)} },
		func(in *fuzzInput) []string { return []string{"HRANDFIELD", in.pick(fzKeys), "100", "WITHVALUES"} },
		func(in *fuzzInput) []string {
			c := []string{"SORT", in.pick(fzKeys)}
			for n := in.next() % 3; n > 0; n-- {
				switch in.next() % 4 {
				case 0:
					c = append(c, "ALPHA")
				case 1:
					c = append(c, "DESC")
				case 2:
					c = append(c, "LIMIT", in.pick(fzInts), in.pick(fzInts))
				default:
					c = append(c, "STORE", in.pick(fzKeys))
				}
			}
			return c
		},
		func(in *fuzzInput) []string {
			return []string{"XADD", in.pick(fzKeys), in.pick(fzIDs), in.pick(fzFields), in.pick(fzValues)}
		},
		func(in *fuzzInput) []string {
			return []string{in.pick([]string{"XRANGE", "XREVRANGE"}), in.pick(fzKeys), in.pick([]string{"-", "+", "1", "(1-1", "2"}), in.pick([]string{"-", "+", "5", "(5-1"})}
		},
		func(in *fuzzInput) []string { return []string{"XLEN", in.pick(fzKeys)} },
		func(in *fuzzInput) []string { return []string{"XDEL", in.pick(fzKeys), in.pick(fzIDs)} },
		func(in *fuzzInput) []string { return []string{"XTRIM", in.pick(fzKeys), "MAXLEN", in.pick(fzInts)} },
		func(in *fuzzInput) []string { return []string{"XREAD", "STREAMS", in.pick(fzKeys), in.pick(fzIDs)} },
		func(in *fuzzInput) []string {
			return []string{"PFADD", in.pick(fzKeys), in.pick(fzValues), in.pick(fzFields)}
		},
		func(in *fuzzInput) []string { return []string{"PFCOUNT", in.pick(fzKeys), in.pick(fzKeys)} },
		func(in *fuzzInput) []string { return []string{"PFMERGE", in.pick(fzKeys), in.pick(fzKeys)} },
		func(in *fuzzInput) []string {
			xy := fzCoords[in.next()%len(fzCoords)]
			return []string{"GEOADD", in.pick(fzKeys), xy[0], xy[1], in.pick(fzFields)}
		},
		func(in *fuzzInput) []string {
			return []string{"GEODIST", in.pick(fzKeys), in.pick(fzFields), in.pick(fzFields), in.pick([]string{"m", "km", "mi"})}
		},
		func(in *fuzzInput) []string { return []string{"GEOPOS", in.pick(fzKeys), in.pick(fzFields)} },
		func(in *fuzzInput) []string {
			return []string{"GEOSEARCH", in.pick(fzKeys), "FROMMEMBER", in.pick(fzFields), "BYRADIUS", in.pick([]string{"10", "200", "5000"}), "km", "ASC", "WITHDIST"}
		},
	)
}

// fuzzScanLoop is a full SCAN, SSCAN, HSCAN or ZSCAN iteration over the
// keyspace or a key that writes while it iterates: for each element it gets
// back it deletes it, adds a companion "n:" element, or both, optionally
// after filling the key past the compact encodings' limits. Elements added
// during an iteration may or may not come back (on the server too), so the
// loop skips "n:" elements, and its writes are idempotent; it adds the
// number of distinct other elements it saw, which every element present
// throughout makes equal on both sides. A filled hash is deleted at the
// end: HGETALL of a hashtable answers in the server's own order.
func fuzzScanLoop(in *fuzzInput) string {
	kind := in.next() % 4
	key := strconv.Quote(in.pick(fzKeys))
	mode := in.next() % 3 // 0 delete, 1 add, 2 both
	fill := in.next()%2 == 0
	opts := fmt.Sprintf("'COUNT', %q", in.pick([]string{"1", "3", "10", "100"}))
	if in.next()%2 == 0 {
		opts += fmt.Sprintf(", 'MATCH', %q", in.pick([]string{"m1*", "k*", "n:*", "*1", "f?"}))
	}
	var b strings.Builder
	b.WriteString("do\n")
	scan, step, del, addn := "", 1, "", ""
	switch kind {
	case 0:
		scan, del, addn = "'SCAN', cursor", "'DEL', e", "'SET', 'n:' .. e, '1'"
		if fill {
			b.WriteString("  for i = 1, 300 do redis.pcall('SET', 'm' .. i, i) end\n")
		}
	case 1:
		scan, del, addn = "'SSCAN', "+key+", cursor", "'SREM', "+key+", e", "'SADD', "+key+", 'n:' .. e"
		if fill {
			b.WriteString("  for i = 1, 300 do redis.pcall('SADD', " + key + ", 'm' .. i) end\n")
		}
	case 2:
		scan, step, del, addn = "'HSCAN', "+key+", cursor", 2, "'HDEL', "+key+", e", "'HSET', "+key+", 'n:' .. e, r[2][i+1]"
		if fill {
			b.WriteString("  for i = 1, 600 do redis.pcall('HSET', " + key + ", 'm' .. i, i) end\n")
		}
	default:
		scan, step, del, addn = "'ZSCAN', "+key+", cursor", 2, "'ZREM', "+key+", e", "'ZADD', "+key+", r[2][i+1], 'n:' .. e"
		if fill {
			b.WriteString("  for i = 1, 200 do redis.pcall('ZADD', " + key + ", i, 'm' .. i) end\n")
		}
	}
	fmt.Fprintf(&b, `  local seen, cnt, cursor = {}, 0, '0'
  repeat
    local r = redis.pcall(%s, %s)
    if r.err then add(r); break end
    cursor = r[1]
    for i = 1, #r[2], %d do
      local e = r[2][i]
      if e:sub(1, 2) ~= 'n:' then
        if not seen[e] then seen[e] = true; cnt = cnt + 1 end
`, scan, opts, step)
	if mode != 1 {
		fmt.Fprintf(&b, "        redis.pcall(%s)\n", del)
	}
	if mode != 0 {
		fmt.Fprintf(&b, "        redis.pcall(%s)\n", addn)
	}
	b.WriteString("      end\n    end\n  until cursor == '0'\n  add(cnt)\n")
	if kind == 2 && fill {
		b.WriteString("  add(redis.pcall('HLEN', " + key + "))\n  redis.pcall('DEL', " + key + ")\n")
	}
	b.WriteString("end\n")
	return b.String()
}

// fuzzScript builds a script of up to 24 pcalls whose replies are collected
// in an array (nil stored as the string "NIL" so the array has no holes).
func fuzzScript(data []byte) string {
	in := &fuzzInput{data: data}
	var b strings.Builder
	b.WriteString("local out, n = {}, 0\nlocal function add(v) n = n + 1; if v == nil then out[n] = 'NIL' else out[n] = v end end\n")
	count := 0
	for in.i < len(in.data) && count < 24 {
		op := in.next() % (len(fuzzCommands) + 1)
		if op == len(fuzzCommands) {
			b.WriteString(fuzzScanLoop(in))
			count++
			continue
		}
		cmd := fuzzCommands[op](in)
		quoted := make([]string, len(cmd))
		for i, a := range cmd {
			quoted[i] = strconv.Quote(a)
		}
		fmt.Fprintf(&b, "add(redis.pcall(%s))\n", strings.Join(quoted, ", "))
		count++
	}
	if count == 0 {
		return ""
	}
	b.WriteString("return out\n")
	return b.String()
}

// FuzzSyntax breaks scripts: it takes a corpus script (or one built by
// fuzzScript), applies up to four token mutations (truncation, deleting,
// duplicating or swapping tokens, inserting brackets, keywords, quotes,
// long brackets, malformed numbers and escapes, cutting a token in two)
// and requires the server's answer from SCRIPT LOAD, from loadstring and,
// when the chunk does not compile, from FUNCTION LOAD, on luatest: the
// same compile error, text and line, or the same SHA. SCRIPT LOAD only
// compiles, so a mutated script that happens to be valid never runs.
func FuzzSyntax(f *testing.F) {
	for _, seed := range []string{
		"\x00\x00\x00",
		"\x01\x05\x00\x03\x00\x07",
		"\x02\x10\x01\x02\x04\x00\x01\x05",
		"\x03\x20\x03\x00\x09\x06\x00\x02",
		"\xff\x01\x01\x00\x00",
		"\x07\x31\x05\x00\x11\x04\x00\x20\x02\x01\x01",
	} {
		f.Add([]byte(seed))
	}
	var bases []string
	for _, c := range loadCorpus(f) {
		if !c.Library {
			bases = append(bases, c.Script)
		}
	}
	srv := redistest.Start(f)
	real := dial(f, srv.Addr, 2)
	f.Fuzz(func(t *testing.T, data []byte) {
		in := &fuzzInput{data: data}
		var script string
		if b := in.next(); b == 0xff {
			script = fuzzScript(in.data[in.i:])
		} else {
			script = bases[(b<<8|in.next())%len(bases)]
		}
		script = mutateSyntax(in, script)
		fake := luatest.New(luatest.WithKeysCheck(luatest.KeysUnchecked))
		defer fake.Close()
		compare := func(args ...string) resp.Reply {
			want := do(t, real, args...)
			got := fake.Command(2, args...)
			if !resp.Equal(want, got) {
				t.Fatalf("%s of:\n%s\nserver:  %s\nluatest: %s", args[0], script, want, got)
			}
			return want
		}
		loaded := compare("SCRIPT", "LOAD", script)
		msg := compare("EVAL", "local f, err = loadstring(ARGV[1]) return err", "0", script)
		// FUNCTION LOAD sends its error as is: a CR or LF in it (a string
		// token written with escapes, '\13\10') breaks the protocol.
		if loaded.Kind == resp.Error && !strings.ContainsAny(msg.Str, "\r\n") {
			do(t, real, "FUNCTION", "FLUSH")
			compare("FUNCTION", "LOAD", "#!lua name=fz\n"+script)
		}
	})
}

// syntaxInserts are what mutateSyntax puts into a script: the tokens and
// fragments that unbalance or break Lua 5.1's grammar.
var syntaxInserts = []string{
	"(", ")", "{", "}", "[", "]", "end", "do", "then", "else", "elseif", "until",
	"function", "local", "return", "break", "if", "for", "while", "repeat", "in",
	"=", "==", ",", ";", ":", ".", "..", "...", "+", "-", "#", "not", "and",
	"'", "\"", "[[", "]]", "[==[", "]=]", "--[[", "--", "\n", "\r\n", "\\",
	"0x", "1e", "1..2", "3.4.5", "0x1p4", "'\\400'", "'\\q'", "\x01", "goto", "::",
	"x", "f()", "a.b", "a:b", "//", "~=", "~", "<=", "'a\\\nb'", "[=[x]=]",
}

// mutateSyntax applies up to four mutations, read from in, to script's
// tokens (luaTokens).
func mutateSyntax(in *fuzzInput, script string) string {
	toks := luaTokens(script)
	for n := in.next()%4 + 1; n > 0 && len(toks) > 0; n-- {
		i := (in.next()<<8 | in.next()) % len(toks)
		switch in.next() % 7 {
		case 0: // truncate
			toks = toks[:i]
		case 1: // delete
			toks = append(toks[:i:i], toks[i+1:]...)
		case 2: // duplicate
			toks = append(toks[:i+1:i+1], toks[i:]...)
		case 3: // insert
			toks = append(toks[:i:i], append([]string{in.pick(syntaxInserts)}, toks[i:]...)...)
		case 4: // swap with the next
			if i+1 < len(toks) {
				toks[i], toks[i+1] = toks[i+1], toks[i]
			}
		case 5: // replace
			toks[i] = in.pick(syntaxInserts)
		default: // cut a token in two, dropping its end
			if t := toks[i]; len(t) > 1 {
				toks[i] = t[:1+in.next()%(len(t)-1)]
			}
		}
	}
	return strings.Join(toks, "")
}

// luaTokens splits a script into rough Lua tokens, whitespace included,
// so that joining them gives the script back: names, numbers, quoted
// strings, and single punctuation or space characters.
func luaTokens(s string) []string {
	var toks []string
	for i := 0; i < len(s); {
		j := i + 1
		c := s[i]
		switch {
		case c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9':
			for j < len(s) && (s[j] == '_' || s[j] == '.' && c >= '0' && c <= '9' ||
				s[j] >= 'a' && s[j] <= 'z' || s[j] >= 'A' && s[j] <= 'Z' || s[j] >= '0' && s[j] <= '9') {
				j++
			}
		case c == '\'' || c == '"':
			for j < len(s) && s[j] != c && s[j] != '\n' {
				if s[j] == '\\' {
					j++
				}
				j++
			}
			j = min(j+1, len(s))
		}
		toks = append(toks, s[i:j])
		i = j
	}
	return toks
}
