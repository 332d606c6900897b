package luatest

import (
	"math"
	"strconv"
	"strings"
	"testing"

	rediscmd "github.com/luagen/luagen/internal/commands"
	"github.com/stretchr/testify/require"
	lua "github.com/yuin/gopher-lua"
)

// TestRangeKeysMatchesKeySpecs proves redis.call's allocation-free key
// extraction (rangeKeys) gives what the key specs give (Info.Keys) for
// every command of the server's table it accepts, at every argument count
// up to 9, and that it accepts the single-key commands scripts call most.
func TestRangeKeysMatchesKeySpecs(t *testing.T) {
	accepted := map[string]bool{}
	for _, name := range rediscmd.Names() {
		info, _ := rediscmd.Lookup(name)
		for n := 1; n <= 9; n++ {
			argv := []string{name}
			for i := 1; i < n; i++ {
				argv = append(argv, "a"+strconv.Itoa(i))
			}
			keys, ok := rangeKeys(info, argv)
			if !ok {
				continue
			}
			accepted[name] = true
			require.Equal(t, info.Keys(argv), keys, "%s with %d arguments", name, n)
			if len(keys) > 0 {
				// Capped: appending to the keys must not write into argv.
				require.Equal(t, len(keys), cap(keys), name)
			}
		}
	}
	for _, name := range []string{"get", "set", "hget", "hset", "decrby", "hincrby", "del", "exists", "expire", "zadd", "rpush"} {
		require.True(t, accepted[name], name)
	}
	for _, name := range []string{"mset", "eval", "sort", "xread", "zunionstore", "migrate"} {
		require.False(t, accepted[name], "%s has a spec rangeKeys must leave to Info.Keys", name)
	}
}

// TestResolveByExactName proves the lower and upper case fast path of
// resolve answers what the server's lookup answers, and that other
// spellings and container commands still resolve.
func TestResolveByExactName(t *testing.T) {
	for _, argv := range [][]string{
		{"get", "k"}, {"GET", "k"}, {"GeT", "k"}, {"hincrby", "h", "f", "1"}, {"HINCRBY", "h", "f", "1"},
		{"object", "encoding", "k"}, {"OBJECT", "ENCODING", "k"}, {"client", "id"},
	} {
		rc, ok := resolve(argv)
		require.True(t, ok, argv[0])
		info, _ := rediscmd.LookupArgs(argv)
		require.Same(t, info, rc.info, argv[0])
		require.Same(t, commandTable[strings.ToLower(argv[0])], rc.impl, argv[0])
	}
	_, ok := resolve([]string{"nosuchcommand"})
	require.False(t, ok)
	_, ok = resolve([]string{"OBJECT", "nosuchsub"})
	require.False(t, ok)
}

// TestAppendNumber proves the concatenation fast path formats numbers as
// numberToString ("%.14g") does, around the integer shortcut's edges.
func TestAppendNumber(t *testing.T) {
	for _, f := range []float64{0, math.Copysign(0, -1), 1, -1, 7, 1e13, 99999999999999, -99999999999999,
		1e14, -1e14, 1e15, 123456789012345, 0.5, -2.25, 1e-7, 1.5e300, math.Inf(1), math.Inf(-1), math.NaN(),
		math.MaxInt64, math.MinInt64, 4503599627370497} {
		require.Equal(t, numberToString(f), string(appendNumber([]byte("x"), f)[1:]), "%v", f)
	}
}

// TestStringsTableReusing proves KEYS and ARGV hold the run's own strings
// whatever the previous run passed (equal, different, fewer, more, long),
// and that an equal short string reuses the previous run's Lua value.
func TestStringsTableReusing(t *testing.T) {
	L := lua.NewState()
	defer L.Close()
	var last []lua.LValue
	long := strings.Repeat("x", maxReusedLen+1)
	runs := [][]string{
		{"a", "b", "c"},
		{"a", "B", "c", "d"},
		{"a"},
		{},
		{"a", long, "c", "d", "e"},
		{"a", long, "c", "d", "e"},
	}
	for _, ss := range runs {
		tb := stringsTableReusing(L, nil, ss, &last)
		require.Equal(t, len(ss), tb.Len(), "%q", ss)
		for i, s := range ss {
			require.Equal(t, lua.LString(s), tb.RawGetInt(i+1), "%q", ss)
		}
		require.Equal(t, lua.LNil, tb.RawGetInt(len(ss)+1))
	}
	require.LessOrEqual(t, len(last), maxReused)

	// The same short strings again cost the table and its array only; new
	// ones a copy of the caller's bytes and a Lua string each on top.
	same := []string{"k1", "k2", "k3"}
	stringsTableReusing(L, nil, same, &last)
	require.Equal(t, 2.0, testing.AllocsPerRun(10, func() { stringsTableReusing(L, nil, same, &last) }))
	lists, n := [2][]string{{"k1", "x", "y"}, {"k1", "z", "w"}}, 0
	require.Equal(t, 6.0, testing.AllocsPerRun(10, func() {
		n++
		stringsTableReusing(L, nil, lists[n%2], &last)
	}))
}
