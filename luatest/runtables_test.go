package luatest_test

import (
	"strconv"
	"testing"

	"github.com/luagen/luagen/luatest"
	"github.com/luagen/luagen/luatest/resp"
	"github.com/luagen/luagen/redistest"
)

// TestKeysAndArgvAreNewEachRun tries to break the reuse of an EVAL run's
// KEYS and ARGV tables by the next run: after scripts that change their
// KEYS or ARGV in every way a script can (values, holes, extra keys,
// metatables, table.insert, rawset, a walk with next), the next run — with
// as many, fewer or more keys and arguments — must find tables as new as a
// real redis-server gives it. Each pair runs on one luatest and one server,
// and every reply must be the server's.
func TestKeysAndArgvAreNewEachRun(t *testing.T) {
	srv := redistest.Start(t)
	real := dial(t, srv.Addr, 2)
	fake := luatest.New(luatest.WithKeysCheck(luatest.KeysUnchecked))
	defer fake.Close()

	// inspect describes both tables as the next run sees them.
	const inspect = `
local function show(t)
  local out = {#t, tostring(getmetatable(t)), tostring(rawget(t, 'x')), tostring(t[99])}
  for i = 1, #t do out[#out+1] = t[i] end
  local n = 0
  for k in pairs(t) do n = n + 1 end
  out[#out+1] = n
  return table.concat(out, ' ')
end
return {show(KEYS), show(ARGV)}`
	changes := []string{
		`return 1`, // untouched: the tables are reused
		`KEYS[1] = 'changed'; ARGV[2] = 'changed'; return 1`,
		`KEYS[2] = nil; ARGV[1] = nil; return 1`,
		`KEYS.x = 1; ARGV.x = 'y'; return 1`,
		`KEYS.x = 1; KEYS.x = nil; return 1`,
		`setmetatable(KEYS, {__index = function() return 'meta' end}); setmetatable(ARGV, {}); return 1`,
		`table.insert(KEYS, 'more'); table.insert(ARGV, 1, 'first'); return 1`,
		`rawset(KEYS, 7, 'seven'); rawset(ARGV, 'x', 'raw'); return 1`,
		`local n = 0; for k in pairs(KEYS) do n = n + 1 end; for k in pairs(ARGV) do n = n + 1 end; return n`,
		`table.remove(KEYS); table.remove(ARGV, 1); return 1`,
	}
	eval := func(body string, keys, args []string) []string {
		cmd := append([]string{"EVAL", body, strconv.Itoa(len(keys))}, keys...)
		return append(cmd, args...)
	}
	sizes := [][2][]string{
		{{"k1", "k2"}, {"a1", "a2", "a3"}},
		{{"k1"}, {"a1"}},
		{{}, {}},
		{{"k1", "k2", "k3"}, {"a1", "a2", "a3", "a4"}},
	}
	for i, change := range changes {
		for j, first := range sizes {
			for k, next := range sizes {
				for _, cmd := range [][]string{eval(change, first[0], first[1]), eval(inspect, next[0], next[1])} {
					want := do(t, real, cmd...)
					got := fake.Command(2, cmd...)
					if !resp.Equal(want, got) {
						t.Fatalf("change %d (%s), sizes %d then %d: %q:\nserver:  %s\nluatest: %s", i, change, j, k, cmd[1], want, got)
					}
				}
			}
		}
	}
}
