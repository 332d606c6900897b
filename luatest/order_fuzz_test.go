package luatest_test

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/luagen/luagen/luatest"
	"github.com/luagen/luagen/luatest/resp"
	"github.com/luagen/luagen/redistest"
)

// FuzzTableOrder turns its input into a random history of one table —
// a constructor or {}, then rounds of deletions and insertions of string,
// number and boolean keys, each round ending in a traversal (pairs, next,
// cmsgpack.pack, cjson.encode of the keys) — and requires the server's
// traversal orders. The stores of a round are interleaved in any order:
// deletions (before the first traversal too), integer and other keys,
// integers descending, nil stores on absent keys, multiple assignments
// and rawset, since luatest sees each store as it happens (README, "Table
// iteration order"). The seeds run with every `go test`.
func FuzzTableOrder(f *testing.F) {
	for _, seed := range []string{
		"\x00\x05\x01\x02\x03\x04\x05\x06\x07\x08\x09",
		"\x01\x09\x10\x21\x32\x43\x54\x65\x76\x87\x98\xa9\xba\xcb\xdc\xed\xfe",
		"\x01\x03\x07\x11\x13\x17\x19\x1d\x1f\x25\x29\x2b\x2f\x35\x3b\x3d\x43",
		"\x00\x09\x00\x00\x00\x00\x00\x00\x00\x00\x00\x09\x01\x01\x01\x01\x01\x01\x01\x01\x01",
		"\x00\x09\x05\x15\x25\x35\x45\x55\x65\x75\x85\x09\x04\x14\x24\x34\x44\x54\x64\x74\x84\x09\x03\x13",
		"\x01\x0b\x02\x12\x22\x32\x42\x52\x62\x72\x82\x92\xa2\xb2\x09\x06\x16\x26\x36\x46\x56\x66\x76\x86",
		"the quick brown fox jumps over the lazy dog; pack my box with five dozen liquor jugs",
	} {
		f.Add([]byte(seed))
	}
	srv := redistest.Start(f)
	real := dial(f, srv.Addr, 2)
	f.Fuzz(func(t *testing.T, data []byte) {
		script := orderScript(data)
		fake := luatest.New()
		defer fake.Close()
		args := []string{"EVAL", script, "0"}
		want := do(t, real, args...)
		got := fake.Command(2, args...)
		if !resp.Equal(want, got) {
			t.Fatalf("script:\n%s\nserver:  %s\nluatest: %s", script, want, got)
		}
	})
}

// orderKeys are the keys a history draws from: strings that collide in
// small tables, long strings, positive integers (array candidates, kept
// apart), negative and fractional numbers, numbers past the array part
// and the booleans.
var (
	orderOther = func() []string {
		var ks []string
		for i := 0; i < 48; i++ {
			ks = append(ks, fmt.Sprintf("'k%d'", i))
		}
		for _, s := range []string{"a", "b", "c", "ab", "ba", "", " ", "id", "name", "x", "y"} {
			ks = append(ks, fmt.Sprintf("'%s'", s))
		}
		ks = append(ks, "string.rep('long', 20)", "string.rep('z', 33)",
			"-1", "-2", "-7", "-100", "0", "0.5", "1.5", "-0.25", "3.75", "1e9", "2^31", "2^53", "-2^31", "1e300", "0.1",
			"true", "false")
		return ks
	}()
	orderInts = func() []int {
		var ns []int
		for i := 1; i <= 40; i++ {
			ns = append(ns, i)
		}
		return append(ns, 48, 63, 64, 65, 100, 128, 1000)
	}()
)

// orderScript builds a table history from data; the script returns every
// traversal's keys.
func orderScript(data []byte) string {
	in := &fuzzInput{data: data}
	var b strings.Builder
	b.WriteString("local out = {}\n")
	b.WriteString("local function walk(t) local s = {} for k in pairs(t) do s[#s+1] = tostring(k) end out[#out+1] = table.concat(s, ',') end\n")
	b.WriteString("local function step(t) local s, k = {}, next(t) while k ~= nil do s[#s+1] = tostring(k) k = next(t, k) end out[#out+1] = table.concat(s, ' ') end\n")
	b.WriteString("local none local function key(k) return k end\n")
	b.WriteString("local function keys(t) local s = {} for k in pairs(t) do s[#s+1] = type(k) == 'string' and k or tostring(k) end return s end\n")
	present := map[string]bool{}
	var live []string         // present keys, in a stable order for picking
	first := map[string]int{} // the order keys were first inserted in
	add := func(k string) {
		if !present[k] {
			present[k] = true
			live = append(live, k)
		}
		if _, ok := first[k]; !ok {
			first[k] = len(first)
		}
	}
	if in.next()%2 == 0 {
		b.WriteString("local t = {}\n")
	} else {
		// A constructor: positional values, keyed fields, nil fields.
		var fields []string
		npos := 0
		for n := in.next() % 24; n > 0; n-- {
			switch c := in.next(); c % 4 {
			case 0:
				npos++
				fields = append(fields, fmt.Sprintf("'v%d'", npos))
			case 1, 2:
				k := orderOther[c/4%len(orderOther)]
				fields = append(fields, "["+k+"]=1")
				add(k)
			case 3:
				// A nil field, its key constant or computed (its value
				// then nil at run time only).
				k := orderOther[c/4%len(orderOther)]
				if !present[k] {
					if c/4%2 == 0 {
						fields = append(fields, "["+k+"]=nil")
					} else {
						fields = append(fields, "[key("+k+")]=none")
					}
					if _, ok := first[k]; !ok {
						first[k] = len(first) // it has a node
					}
				}
			}
		}
		for i := 1; i <= npos; i++ {
			add(fmt.Sprint(i))
		}
		b.WriteString("local t = {" + strings.Join(fields, ", ") + "}\n")
	}
	// A key of either kind, by the byte c: positive integers (array
	// candidates) or the others.
	pick := func(c int) string {
		if c%3 == 0 {
			return fmt.Sprint(orderInts[(c/3)%len(orderInts)])
		}
		return orderOther[c%len(orderOther)]
	}
	// A string key set again after it had no value may have been marked
	// dead by the server's garbage collector, which the script does not
	// control (README): only numbers and booleans come back.
	settable := func(k string) bool {
		_, seen := first[k]
		return !present[k] && !(seen && (k[0] == '\'' || strings.HasPrefix(k, "string.")))
	}
	for round := 0; round < 12 && in.i < len(in.data); round++ {
		// The stores of a round come in the order drawn: deletions,
		// insertions of any kind of key, nil stores on keys the table
		// lacks, multiple assignments and rawset, interleaved.
		for n := in.next() % 16; n > 0; n-- {
			c := in.next()
			switch c % 8 {
			case 0, 1:
				if len(live) == 0 {
					continue
				}
				k := live[(c/8)%len(live)]
				fmt.Fprintf(&b, "t[%s] = nil\n", k)
				delete(present, k)
				live = slices.DeleteFunc(live, func(s string) bool { return s == k })
			case 2:
				// A nil store on a key the table lacks gives it a node.
				if k := pick(in.next()); !present[k] {
					fmt.Fprintf(&b, "t[%s] = nil\n", k)
					if _, ok := first[k]; !ok {
						first[k] = len(first)
					}
				}
			case 3:
				// A multiple assignment stores from its last target.
				k1, k2 := pick(in.next()), pick(in.next())
				if k1 != k2 && settable(k1) && settable(k2) {
					fmt.Fprintf(&b, "t[%s], t[%s] = 1, 2\n", k1, k2)
					add(k2)
					add(k1)
				}
			case 4:
				if k := pick(in.next()); settable(k) {
					fmt.Fprintf(&b, "rawset(t, %s, 1)\n", k)
					add(k)
				}
			default:
				if k := pick(c / 8); settable(k) {
					fmt.Fprintf(&b, "t[%s] = 1\n", k)
					add(k)
				}
			}
		}
		switch in.next() % 4 {
		case 0:
			b.WriteString("walk(t)\n")
		case 1:
			b.WriteString("step(t)\n")
		case 2:
			b.WriteString("out[#out+1] = cmsgpack.pack(t)\n")
		case 3:
			b.WriteString("out[#out+1] = cjson.encode(keys(t))\n")
		}
	}
	b.WriteString("walk(t)\nreturn out\n")
	return b.String()
}
