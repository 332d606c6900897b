package luatest_test

import (
	"testing"

	"github.com/luagen/luagen/luatest"
)

// BenchmarkTablePairs reports the cost of one pairs step over a table of
// 1,000 string keys (ns/step) and of one small table constructor
// (ns/table), and of assignments into a table: a new key into a fresh
// table (ns/store, three per table) and a key that already has a value
// (ns/store), inside one EVAL each.
func BenchmarkTablePairs(b *testing.B) {
	r := luatest.New()
	defer r.Close()
	run := func(b *testing.B, script string, per float64, unit string) {
		b.Helper()
		for range b.N {
			if rep := r.Command(2, "EVAL", script, "0"); rep.Str != "" || rep.Int == 0 {
				b.Fatalf("%s", rep)
			}
		}
		b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/per, unit)
	}
	b.Run("pairs", func(b *testing.B) {
		run(b, `local t = {} for i = 1, 1000 do t['key' .. i] = i end
local n = 0 for r = 1, 100 do for k, v in pairs(t) do n = n + 1 end end return n`, 100_000, "ns/step")
	})
	b.Run("constructor", func(b *testing.B) {
		run(b, `local n = 0 for i = 1, 100000 do local t = {a = i, b = i} n = n + 1 end return n`, 100_000, "ns/table")
	})
	b.Run("store-new", func(b *testing.B) {
		run(b, `local n = 0 for i = 1, 100000 do local t = {} t.a = i t[1] = i t.b = i n = n + 1 end return n`, 300_000, "ns/store")
	})
	b.Run("store-set", func(b *testing.B) {
		run(b, `local t = {a = 0} for i = 1, 300000 do t.a = i end return t.a`, 300_000, "ns/store")
	})
}
