package luatest_test

import (
	"fmt"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	corpus "github.com/luagen/luagen/internal/luacorpus"
	"github.com/luagen/luagen/luatest"
	"github.com/luagen/luagen/luatest/resp"
	"github.com/luagen/luagen/redistest"
	"github.com/stretchr/testify/require"
)

// TestDifferential runs every corpus case (testdata/corpus/*.txt) on
// luatest and on a real redis-server, each case on an empty keyspace, and
// requires the same reply for every seeding command, the same script
// reply, and the same keyspace afterwards (types, values, TTLs within a
// tolerance). Cases marked with a deviation compare by its documented rule.
func TestDifferential(t *testing.T) {
	cases := loadCorpus(t)
	require.GreaterOrEqual(t, len(cases), 150, "the corpus must keep at least 150 cases")
	srv := redistest.Start(t)
	real2, real3 := dial(t, srv.Addr, 2), dial(t, srv.Addr, 3)
	for _, tc := range cases {
		t.Run(tc.Name, func(t *testing.T) {
			fake := luatest.New(luatest.WithKeysCheck(luatest.KeysUnchecked))
			defer fake.Close()
			do(t, real2, "FLUSHALL")
			do(t, real2, "FUNCTION", "FLUSH")
			runDifferentialCase(t, tc, fake, real2, real3)
		})
	}
}

func loadCorpus(t testing.TB) []corpus.Case {
	t.Helper()
	cases, err := corpus.Load("testdata/corpus", luatest.SplitArgs)
	require.NoError(t, err)
	return cases
}

func dial(t testing.TB, addr string, proto int) *resp.Conn {
	t.Helper()
	c, err := resp.Dial(addr, proto, 10*time.Second)
	require.NoError(t, err)
	t.Cleanup(func() { c.Close() })
	return c
}

func do(t testing.TB, c *resp.Conn, args ...string) resp.Reply {
	t.Helper()
	require.NoError(t, c.SetDeadline(time.Now().Add(10*time.Second)))
	r, err := c.Do(args...)
	require.NoError(t, err, "%v", args)
	return r
}

func runDifferentialCase(t *testing.T, tc corpus.Case, fake *luatest.Redis, real2, real3 *resp.Conn) {
	t.Helper()
	proto, real := 2, real2
	if tc.RESP3 {
		proto, real = 3, real3
	}
	for _, cmd := range tc.Init {
		want := do(t, real, cmd...)
		got := fake.Command(proto, cmd...)
		if !resp.Equal(want, got) {
			t.Fatalf("%s: init %q:\nserver:  %s\nluatest: %s", tc.File, cmd, want, got)
		}
	}
	if tc.Library {
		runLibraryCase(t, tc, fake, real, proto)
	} else {
		args := append([]string{"EVAL", tc.Script, strconv.Itoa(len(tc.Keys))}, tc.Keys...)
		args = append(args, tc.Args...)
		want := do(t, real, args...)
		got := fake.Command(proto, args...)
		if !sameReply(tc.Deviation, want, got) {
			t.Fatalf("%s: reply differs (deviation %q):\nserver:  %s\nluatest: %s", tc.File, tc.Deviation, want, got)
		}
	}
	wantKS, gotKS := dumpKeyspace(t, func(a ...string) resp.Reply { return do(t, real2, a...) }),
		dumpKeyspace(t, func(a ...string) resp.Reply { return fake.Command(2, a...) })
	if msg := diffKeyspace(wantKS, gotKS); msg != "" {
		t.Fatalf("%s: keyspace differs after the script:\n%s", tc.File, msg)
	}
}

// runLibraryCase loads a library case's body with FUNCTION LOAD and runs
// its calls, comparing every reply.
func runLibraryCase(t *testing.T, tc corpus.Case, fake *luatest.Redis, real *resp.Conn, proto int) {
	t.Helper()
	cmds := append([][]string{{"FUNCTION", "LOAD", tc.Script}}, tc.Calls...)
	for _, cmd := range cmds {
		want := do(t, real, cmd...)
		got := fake.Command(proto, cmd...)
		// A deviation describes the error replies of a case, not its loads.
		if !resp.Equal(want, got) && (want.Kind != resp.Error || !sameReply(tc.Deviation, want, got)) {
			t.Fatalf("%s: %.60q differs (deviation %q):\nserver:  %s\nluatest: %s", tc.File, cmd, tc.Deviation, want, got)
		}
	}
}

var luaErrorRe = regexp.MustCompile(`^(ERR user_(?:script|function):\d+:) .*( script: \w+, on @user_(?:script|function):\d+\.)$`)

// sameReply compares two replies by the rule of the case's deviation.
func sameReply(dev corpus.Deviation, want, got resp.Reply) bool {
	switch dev {
	case corpus.LuaError:
		if want.Kind != resp.Error || got.Kind != resp.Error {
			return false
		}
		w, g := luaErrorRe.FindStringSubmatch(want.Str), luaErrorRe.FindStringSubmatch(got.Str)
		if w == nil {
			// A pcall-caught runtime error: compare the position prefix only.
			return strings.SplitN(want.Str, ": ", 2)[0] == strings.SplitN(got.Str, ": ", 2)[0]
		}
		return g != nil && w[1] == g[1] && w[2] == g[2]
	}
	return resp.Equal(want, got)
}

// keyDump is one key as dumpKeyspace sees it.
type keyDump struct {
	typ, value string
	pttl       int64
}

var infoDBRe = regexp.MustCompile(`(?m)^db(\d+):keys=`)

// dumpKeyspace reads every key of every database INFO keyspace lists with
// RESP2 commands: type, value (sets sorted, since their order is
// unspecified) and PTTL. Keys of database N > 0 are named "N:key".
func dumpKeyspace(t *testing.T, do func(...string) resp.Reply) map[string]keyDump {
	t.Helper()
	out := map[string]keyDump{}
	for _, m := range infoDBRe.FindAllStringSubmatch(do("INFO", "keyspace").Str, -1) {
		require.Equal(t, "OK", do("SELECT", m[1]).Str)
		prefix := m[1] + ":"
		if m[1] == "0" {
			prefix = ""
		}
		dumpDB(do, prefix, out)
	}
	require.Equal(t, "OK", do("SELECT", "0").Str)
	return out
}

func dumpDB(do func(...string) resp.Reply, prefix string, out map[string]keyDump) {
	keys := do("KEYS", "*")
	for _, k := range keys.Elems {
		key := k.Str
		d := keyDump{typ: do("TYPE", key).Str, pttl: do("PTTL", key).Int}
		var v resp.Reply
		switch d.typ {
		case "string":
			v = do("GET", key)
		case "hash":
			v = do("HGETALL", key)
		case "list":
			v = do("LRANGE", key, "0", "-1")
		case "set":
			v = do("SMEMBERS", key)
			sort.Slice(v.Elems, func(i, j int) bool { return v.Elems[i].Str < v.Elems[j].Str })
		case "zset":
			v = do("ZRANGE", key, "0", "-1", "WITHSCORES")
		case "stream":
			v = do("XRANGE", key, "-", "+")
		}
		d.value = v.String()
		out[prefix+key] = d
	}
}

// ttlTolerance absorbs the wall-clock time the real server's TTLs lose
// while the case runs; luatest's clock does not move.
const ttlTolerance = 1500

func diffKeyspace(want, got map[string]keyDump) string {
	var b strings.Builder
	var names []string
	for k := range want {
		names = append(names, k)
	}
	for k := range got {
		if _, ok := want[k]; !ok {
			names = append(names, k)
		}
	}
	sort.Strings(names)
	for _, k := range names {
		w, okw := want[k]
		g, okg := got[k]
		switch {
		case !okw:
			fmt.Fprintf(&b, "  %q: only luatest has it: %s %s pttl=%d\n", k, g.typ, g.value, g.pttl)
		case !okg:
			fmt.Fprintf(&b, "  %q: only the server has it: %s %s pttl=%d\n", k, w.typ, w.value, w.pttl)
		case w.typ != g.typ || w.value != g.value || (w.pttl < 0) != (g.pttl < 0) || abs(w.pttl-g.pttl) > ttlTolerance:
			fmt.Fprintf(&b, "  %q: server %s %s pttl=%d, luatest %s %s pttl=%d\n", k, w.typ, w.value, w.pttl, g.typ, g.value, g.pttl)
		}
	}
	return b.String()
}

func abs(n int64) int64 {
	if n < 0 {
		return -n
	}
	return n
}
