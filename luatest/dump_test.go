package luatest_test

import (
	"encoding/binary"
	"fmt"
	"hash/crc64"
	"math/rand/v2"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/luagen/luagen/luatest"
	"github.com/luagen/luagen/luatest/resp"
	"github.com/luagen/luagen/redistest"
	"github.com/stretchr/testify/require"
)

// TestDumpRoundTrip builds the same random values on luatest and on a real
// redis-server and requires (1) byte-identical DUMP payloads wherever the
// server's encoding has a defined order (everything but hashtable hashes
// and sets of more than one element, whose order follows the server's
// randomly seeded hash function), and (2) that each side RESTOREs the
// other's payload into the same value with the same encoding.
func TestDumpRoundTrip(t *testing.T) {
	srv := redistest.Start(t)
	real := dial(t, srv.Addr, 2)
	fake := luatest.New()
	defer fake.Close()
	both := func(args ...string) {
		t.Helper()
		want, got := do(t, real, args...), fake.Command(2, args...)
		require.True(t, resp.Equal(want, got), "%.80q: server %s, luatest %s", args, want, got)
	}
	rng := rand.New(rand.NewPCG(7, 2026))
	keys := map[string]string{} // key -> kind
	for i := 0; i < 300; i++ {
		key := fmt.Sprintf("k%d", i)
		kind := []string{"string", "list", "hash", "set", "zset", "stream"}[rng.IntN(6)]
		keys[key] = kind
		for _, cmd := range randomValue(rng, key, kind) {
			both(cmd...)
		}
	}
	exact := 0
	for key, kind := range keys {
		wantDump, gotDump := do(t, real, "DUMP", key), fake.Command(2, "DUMP", key)
		require.Equal(t, resp.Bulk, gotDump.Kind, "%s: %s", key, gotDump)
		enc := do(t, real, "OBJECT", "ENCODING", key).Str
		require.Equal(t, enc, fake.Command(2, "OBJECT", "ENCODING", key).Str, "%s (%s) encoding", key, kind)
		if enc != "hashtable" || cardinality(t, real, key, kind) == 1 {
			require.Equal(t, wantDump.Str, gotDump.Str, "%s (%s, %s): DUMP differs", key, kind, enc)
			exact++
		}
		both("RESTORE", "fromfake:"+key, "0", gotDump.Str)
		both("RESTORE", "fromserver:"+key, "0", wantDump.Str)
		realDo := func(a ...string) resp.Reply { return do(t, real, a...) }
		fakeDo := func(a ...string) resp.Reply { return fake.Command(2, a...) }
		want := contents(t, realDo, key, kind)
		for _, k := range []string{"fromfake:" + key, "fromserver:" + key} {
			requireSame(t, want, contents(t, realDo, k, kind), "%s restored as %s on the server", key, k)
			requireSame(t, want, contents(t, fakeDo, k, kind), "%s restored as %s on luatest", key, k)
			// RESTORE picks the compact encoding again when the value fits.
			require.Equal(t, realDo("OBJECT", "ENCODING", k).Str, fakeDo("OBJECT", "ENCODING", k).Str, "%s restored as %s", key, k)
		}
	}
	t.Logf("%d keys, %d DUMP payloads byte-identical", len(keys), exact)
	require.Greater(t, exact, len(keys)/2)
}

// randomValue returns the commands that build one random value of kind,
// in shapes that reach every encoding and conversion.
func randomValue(rng *rand.Rand, key, kind string) [][]string {
	elem := func() string {
		switch rng.IntN(6) {
		case 0:
			v := rng.Int64() >> uint(rng.IntN(64)) // every integer width
			if rng.IntN(2) == 0 {
				v = -v
			}
			return strconv.FormatInt(v, 10)
		case 1:
			return strconv.Itoa(rng.IntN(300) - 150)
		case 2: // compressible
			return strings.Repeat(string(rune('a'+rng.IntN(3))), rng.IntN(120))
		case 3:
			b := make([]byte, rng.IntN(90))
			for i := range b {
				b[i] = byte(rng.IntN(256))
			}
			return string(b)
		}
		return fmt.Sprintf("e%d", rng.IntN(1000))
	}
	n := 1 + rng.IntN(20)
	if rng.IntN(4) == 0 {
		n = 100 + rng.IntN(600)
	}
	switch kind {
	case "string":
		return [][]string{{"SET", key, elem()}}
	case "list": // from both ends, in batches, some popped again
		var cmds [][]string
		for left := n; left > 0; {
			cmd := []string{[]string{"LPUSH", "RPUSH"}[rng.IntN(2)], key}
			for b := 1 + rng.IntN(min(left, 50)); b > 0; b-- {
				cmd = append(cmd, elem())
				left--
			}
			cmds = append(cmds, cmd)
			switch rng.IntN(6) {
			case 0:
				cmds = append(cmds, []string{[]string{"LPOP", "RPOP"}[rng.IntN(2)], key, strconv.Itoa(rng.IntN(20))})
			case 1: // a pivot that may have been popped: then nothing happens
				pivot := cmd[2+rng.IntN(len(cmd)-2)]
				cmds = append(cmds, []string{"LINSERT", key, []string{"BEFORE", "AFTER"}[rng.IntN(2)], pivot, elem()})
			}
		}
		return append(cmds, []string{"RPUSH", key, "last"})
	case "hash":
		var cmds [][]string
		for i := 0; i < n; i++ {
			cmds = append(cmds, []string{"HSET", key, elem(), elem()})
		}
		if rng.IntN(3) == 0 { // shrink: the encoding stays
			cmds = append(cmds, []string{"HSET", key, "keep", "v"}, []string{"HDEL", key, cmds[0][2]})
		}
		return cmds
	case "set":
		var cmds [][]string
		ints := rng.IntN(2) == 0
		for i := 0; i < n; i++ {
			m := elem()
			if ints {
				m = strconv.Itoa(rng.IntN(100000) - 50000)
			}
			cmds = append(cmds, []string{"SADD", key, m})
		}
		if rng.IntN(3) == 0 {
			cmds = append(cmds, []string{"SADD", key, "1"}, []string{"SREM", key, cmds[0][2]})
		}
		return cmds
	}
	if kind == "stream" {
		var cmds [][]string
		fields := []string{"f", "g"}
		for i := 1; i <= n; i++ {
			cmd := []string{"XADD", key, fmt.Sprintf("%d-%d", i, rng.IntN(3))}
			for j := 0; j <= rng.IntN(3); j++ {
				cmd = append(cmd, fields[rng.IntN(2)], elem())
			}
			cmds = append(cmds, cmd)
		}
		for i := 0; i < n/5; i++ {
			cmds = append(cmds, []string{"XDEL", key, cmds[rng.IntN(n)][2]})
		}
		if rng.IntN(3) == 0 {
			cmds = append(cmds, []string{"XTRIM", key, "MAXLEN", strconv.Itoa(n / 2)})
		}
		return append(cmds, []string{"XGROUP", "CREATE", key, "g", "0"})
	}
	cmd := []string{"ZADD", key}
	for i := 0; i < n; i++ {
		score := strconv.Itoa(rng.IntN(1000) - 500)
		if rng.IntN(2) == 0 {
			score = strconv.FormatFloat(rng.Float64()*1e6-5e5, 'g', -1, 64)
		}
		cmd = append(cmd, score, elem())
	}
	return [][]string{cmd}
}

func cardinality(t *testing.T, c *resp.Conn, key, kind string) int64 {
	switch kind {
	case "hash":
		return do(t, c, "HLEN", key).Int
	case "stream":
		return 1 // no hashtable
	}
	return do(t, c, "SCARD", key).Int
}

// contents reads a value in a form that does not depend on the order of
// a hashtable.
func contents(t *testing.T, do func(...string) resp.Reply, key, kind string) string {
	t.Helper()
	require.Equal(t, kind, do("TYPE", key).Str, key)
	var r resp.Reply
	switch kind {
	case "string":
		r = do("GET", key)
	case "list":
		r = do("LRANGE", key, "0", "-1")
	case "hash":
		r = do("HGETALL", key)
		pairs := make([]string, 0, len(r.Elems)/2)
		for i := 0; i < len(r.Elems); i += 2 {
			pairs = append(pairs, strconv.Quote(r.Elems[i].Str)+"="+strconv.Quote(r.Elems[i+1].Str))
		}
		sort.Strings(pairs)
		return strings.Join(pairs, ",")
	case "set":
		r = do("SMEMBERS", key)
		sort.Slice(r.Elems, func(i, j int) bool { return r.Elems[i].Str < r.Elems[j].Str })
	case "stream":
		info := do("XINFO", "STREAM", key)
		info.Elems = info.Elems[:16] // up to the groups: not the first and last entry again
		info.Elems[5] = resp.Reply{} // radix-tree-nodes: luatest estimates it
		return do("XRANGE", key, "-", "+").String() + info.String() + do("XINFO", "GROUPS", key).String()
	default:
		r = do("ZRANGE", key, "0", "-1", "WITHSCORES")
	}
	return r.String()
}

// TestRestoreRedis6Payloads restores payloads in the encodings Redis 6
// wrote (ziplists, a quicklist of ziplists, RDB version 9) on both sides.
func TestRestoreRedis6Payloads(t *testing.T) {
	srv := redistest.Start(t)
	real := dial(t, srv.Addr, 2)
	fake := luatest.New()
	defer fake.Close()
	items := []string{"f", "1", "300", "-70000", "5000000000", "100000", "-5", strings.Repeat("x", 70), "12", "v"}
	zl := ziplist(items)
	zset := ziplist([]string{"c", "-3", "a", "1", "b", "2.5"}) // in score order: the server trusts it
	for name, body := range map[string][]byte{
		"hash":      append([]byte{13}, rdbString(zl)...),
		"list":      append([]byte{10}, rdbString(zl)...),
		"quicklist": append([]byte{14, 2}, append(rdbString(zl), rdbString(ziplist([]string{"tail"}))...)...),
		"zset":      append([]byte{12}, rdbString(zset)...),
		"oldzset":   {3, 2, 1, 'a', 3, '1', '.', '5', 1, 'b', 254},
	} {
		payload := string(footer(body))
		want := do(t, real, "RESTORE", name, "0", payload)
		require.Equal(t, "OK", want.Str, "%s: %s", name, want)
		require.Equal(t, "OK", fake.Command(2, "RESTORE", name, "0", payload).Str, name)
		kind := do(t, real, "TYPE", name).Str
		require.Equal(t, contents(t, func(a ...string) resp.Reply { return do(t, real, a...) }, name, kind),
			contents(t, func(a ...string) resp.Reply { return fake.Command(2, a...) }, name, kind), name)
		require.Equal(t, do(t, real, "DUMP", name).Str, fake.Command(2, "DUMP", name).Str, "%s re-dumped in 7.0's encoding", name)
	}
}

// ziplist encodes items as Redis 6's ziplist.c does.
func ziplist(items []string) []byte {
	var entries []byte
	prev, tail := 0, 10
	for _, it := range items {
		tail = 10 + len(entries)
		e := []byte{byte(prev)}
		if v, err := strconv.ParseInt(it, 10, 64); err == nil && strconv.FormatInt(v, 10) == it {
			switch {
			case v >= 0 && v <= 12:
				e = append(e, 0xf1+byte(v))
			case v >= -128 && v <= 127:
				e = append(e, 0xfe, byte(v))
			case v >= -32768 && v <= 32767:
				e = binary.LittleEndian.AppendUint16(append(e, 0xc0), uint16(v))
			case v >= -1<<23 && v < 1<<23:
				e = append(e, 0xf0, byte(v), byte(v>>8), byte(v>>16))
			case v >= -1<<31 && v < 1<<31:
				e = binary.LittleEndian.AppendUint32(append(e, 0xd0), uint32(v))
			default:
				e = binary.LittleEndian.AppendUint64(append(e, 0xe0), uint64(v))
			}
		} else if len(it) < 64 {
			e = append(append(e, byte(len(it))), it...)
		} else {
			e = append(append(e, 0x40|byte(len(it)>>8), byte(len(it))), it...)
		}
		prev = len(e)
		entries = append(entries, e...)
	}
	b := binary.LittleEndian.AppendUint32(nil, uint32(10+len(entries)+1))
	b = binary.LittleEndian.AppendUint32(b, uint32(tail))
	b = binary.LittleEndian.AppendUint16(b, uint16(len(items)))
	return append(append(b, entries...), 0xff)
}

func rdbString(b []byte) []byte {
	if len(b) >= 64 {
		return append([]byte{0x40 | byte(len(b)>>8), byte(len(b))}, b...)
	}
	return append([]byte{byte(len(b))}, b...)
}

// footer appends RDB version 9 (Redis 6) and the CRC64 redis' crc64.c
// computes (Jones polynomial, reflected, no inversion).
func footer(b []byte) []byte {
	b = append(b, 9, 0)
	tab := crc64.MakeTable(0x95ac9329ac4bc9b5)
	return binary.LittleEndian.AppendUint64(b, ^crc64.Update(^uint64(0), tab, b))
}

// requireSame is require.Equal for long values: it shows where they part.
func requireSame(t *testing.T, want, got, format string, args ...any) {
	t.Helper()
	if want == got {
		return
	}
	i := 0
	for i < len(want) && i < len(got) && want[i] == got[i] {
		i++
	}
	from := max(i-60, 0)
	t.Fatalf(format+": differ at byte %d:\nwant …%.200s\ngot  …%.200s", append(args, i, want[from:], got[from:])...)
}

// TestRestoreMalformedPayloads restores corrupted payloads (with a valid
// checksum, so the parser sees them): each answers OK or "Bad data format",
// never an internal error.
func TestRestoreMalformedPayloads(t *testing.T) {
	r := luatest.Start(t)
	for _, cmd := range [][]string{
		{"SET", "s", strings.Repeat("abc", 30)}, {"RPUSH", "l", "a", "1", "300", strings.Repeat("x", 70)},
		{"HSET", "h", "f", "v", "n", "12"}, {"SADD", "i", "1", "100000"}, {"SADD", "t", "a", "b"},
		{"ZADD", "z", "1", "a", "2.5", "b"}, {"ZADD", "y", "1", strings.Repeat("m", 70)},
		{"XADD", "x", "1-1", "f", "v"}, {"XADD", "x", "2-1", "g", "w"}, {"XGROUP", "CREATE", "x", "g", "0"},
		{"XREADGROUP", "GROUP", "g", "c", "STREAMS", "x", ">"},
	} {
		r.MustDo(cmd...)
	}
	rng := rand.New(rand.NewPCG(1, 2))
	for _, key := range []string{"s", "l", "h", "i", "t", "z", "y", "x"} {
		good := []byte(r.Command(2, "DUMP", key).Str)
		body := good[:len(good)-10]
		for i := 0; i < 2000; i++ {
			bad := append([]byte(nil), body...)
			switch rng.IntN(3) {
			case 0:
				bad[rng.IntN(len(bad))] = byte(rng.IntN(256))
			case 1:
				bad = bad[:rng.IntN(len(bad))]
			default:
				for k := 0; k < 4; k++ {
					bad[rng.IntN(len(bad))] ^= byte(1 << rng.IntN(8))
				}
			}
			got := r.Command(2, "RESTORE", "copy", "0", string(footer(bad)), "REPLACE")
			if got.Kind == resp.Error {
				require.Equal(t, "ERR Bad data format", got.Str, "%s: %q", key, bad)
				continue
			}
			// What loaded can be read and dumped again.
			for _, read := range [][]string{{"DUMP", "copy"}, {"OBJECT", "ENCODING", "copy"}, {"LRANGE", "copy", "0", "-1"},
				{"HGETALL", "copy"}, {"SMEMBERS", "copy"}, {"ZRANGE", "copy", "0", "-1"}, {"XRANGE", "copy", "-", "+"},
				{"XINFO", "STREAM", "copy"}, {"XINFO", "GROUPS", "copy"}, {"XADD", "copy", "*", "f", "v"}} {
				rep := r.Command(2, read...)
				require.False(t, strings.Contains(rep.Str, "internal error"), "%s: %q: %v: %s", key, bad, read, rep.Str)
			}
		}
	}
}

// TestRestoredListpackKeepsLongElements restores a hash and a sorted set
// whose listpacks hold elements over 64 bytes (as a server configured with
// larger limits writes them): the server keeps them listpacks until a
// write adds a long element or the entry limit is passed; so does luatest.
func TestRestoredListpackKeepsLongElements(t *testing.T) {
	srv := redistest.Start(t)
	real := dial(t, srv.Addr, 2)
	fake := luatest.Start(t)
	long := strings.Repeat("l", 80)
	hash := []byte{16}
	hash = append(hash, rdbString(listpackOf("f", long, long, "v"))...)
	zset := []byte{17}
	zset = append(zset, rdbString(listpackOf("a", "1.5", long, "2.5"))...)
	steps := [][]string{
		{"RESTORE", "h", "0", string(footer(hash))}, {"OBJECT", "ENCODING", "h"}, {"HSET", "h", "g", "short"},
		{"OBJECT", "ENCODING", "h"}, {"DUMP", "h"}, {"HSET", "h", "x", long}, {"OBJECT", "ENCODING", "h"},
		{"RESTORE", "z", "0", string(footer(zset))}, {"OBJECT", "ENCODING", "z"}, {"ZADD", "z", "3", "b"},
		{"OBJECT", "ENCODING", "z"}, {"DUMP", "z"}, {"ZADD", "z", "4", long + "x"}, {"OBJECT", "ENCODING", "z"},
	}
	for _, cmd := range steps {
		want, got := do(t, real, cmd...), fake.Command(2, cmd...)
		require.True(t, resp.Equal(want, got), "%.40q: server %s, luatest %s", cmd, want, got)
	}
}

// listpackOf builds a listpack of strings as listpack.c does (no integer
// encodings: the test uses none).
func listpackOf(items ...string) []byte {
	b := make([]byte, 6)
	for _, it := range items {
		n := len(it)
		var e []byte
		if n < 64 {
			e = append([]byte{0x80 | byte(n)}, it...)
		} else {
			e = append([]byte{0xe0 | byte(n>>8), byte(n)}, it...)
		}
		l := len(e)
		if l <= 127 {
			e = append(e, byte(l))
		} else {
			e = append(e, byte(l>>7), byte(l&127)|128)
		}
		b = append(b, e...)
	}
	b = append(b, 0xff)
	binary.LittleEndian.PutUint32(b, uint32(len(b)))
	binary.LittleEndian.PutUint16(b[4:], uint16(len(items)))
	return b
}

// TestRestoreEmptyLZFString restores a string LZF-compressed to length 0
// (one literal byte that does not fit): lzf_decompress fails with 0, the
// length the server wanted, so both load an empty string.
func TestRestoreEmptyLZFString(t *testing.T) {
	srv := redistest.Start(t)
	r := luatest.Start(t)
	payload := string(footer([]byte{0x00, 0xc3, 0x01, 0x00, 0x00}))
	require.Equal(t, "OK", srv.Do(t, "RESTORE", "k", "0", payload))
	require.Equal(t, "", srv.Do(t, "GET", "k"))
	require.Equal(t, "1", srv.Do(t, "EXISTS", "k"))
	got := r.Command(2, "RESTORE", "k", "0", payload)
	require.Equal(t, resp.OK, got)
	require.Equal(t, resp.BulkReply(""), r.Command(2, "GET", "k"))
}
