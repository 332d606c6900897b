package luatest_test

import (
	"fmt"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"

	rediscmd "github.com/luagen/luagen/internal/commands"
	"github.com/luagen/luagen/luatest"
	"github.com/luagen/luagen/luatest/resp"
	"github.com/luagen/luagen/redistest"
	"github.com/stretchr/testify/require"
)

// TestCommandTableSweep is a differential test generated from the server's
// own command table: it reads COMMAND INFO and COMMAND DOCS from a real
// redis-server and, for every command and subcommand (scripts' noscript
// refusals included), builds calls that a script makes through
// redis.pcall — too few and too many arguments, and, from the argument
// specs of COMMAND DOCS, an unknown token where a token or a oneof is
// expected, a non-integer, a non-float, a negative or overflowing number,
// a token without its value, a block cut short, two exclusive options of a
// oneof together — and runs each on an empty keyspace and again with every
// key of the call present with its command group's type. luatest's reply
// must equal the server's byte for byte (error text included), so the first
// check the server makes is the one luatest makes. Calls whose successful
// reply cannot match (clocks, server internals) compare the reply's kind
// only; intrinsic divergences are listed in sweepKnown with their reason.
func TestCommandTableSweep(t *testing.T) {
	srv := redistest.Start(t)
	real2, real3 := dial(t, srv.Addr, 2), dial(t, srv.Addr, 3)
	cmds := readCommandTable(t, real3)
	fake := luatest.New(luatest.WithKeysCheck(luatest.KeysUnchecked))
	defer fake.Close()

	// A real DUMP payload, so RESTORE gets past its payload check.
	do(t, real2, "SET", "payload", "v")
	payload := do(t, real2, "DUMP", "payload").Str
	do(t, real2, "FLUSHALL")

	var calls, diverged, known, swept int
	seenKnown := map[int]int{}
	for _, c := range cmds {
		swept++
		for _, argv := range c.calls(payload) {
			keys := keysOf(argv)
			scenarios := []sweepScenario{{}}
			if len(keys) > 0 && !c.noscript {
				scenarios = append(scenarios, sweepScenario{keys, c.group}, sweepScenario{keys, wrongGroup(c.group)})
			}
			for _, sc := range scenarios {
				calls++
				want, got := runSweepCall(t, real2, fake, argv, keys, sc)
				if sweepSame(c.name, want, got) {
					continue
				}
				id := sweepID(argv, sc)
				if k := knownDivergence(argv, sc.keys != nil, want, got); k >= 0 {
					known++
					seenKnown[k]++
					continue
				}
				diverged++
				t.Errorf("%s:\nserver:  %.300s\nluatest: %.300s", id, want, got)
			}
		}
	}
	for k, d := range sweepKnown {
		t.Logf("sweepKnown[%d] matched %d calls", k, seenKnown[k])
		if seenKnown[k] == 0 && !d.mayVanish {
			t.Errorf("sweepKnown[%d] (%s) matches no divergence any more: remove it", k, d.reason)
		}
	}
	t.Logf("swept %d commands and subcommands with %d calls: %d diverge, %d known divergences", swept, calls, diverged, known)
	require.GreaterOrEqual(t, swept, 300, "COMMAND INFO of 7.0 lists over 300 commands and subcommands")
	require.GreaterOrEqual(t, calls, 2000)
}

// sweepKnown lists the divergences that are intrinsic, each with its
// reason and a rule as narrow as the reason: the calls it covers and the
// replies it expects from each side.
var sweepKnown = []struct {
	reason    string
	mayVanish bool // it depends on the server's hash seed: some runs match no call
	match     func(argv []string, seeded bool, want, got resp.Reply) bool
}{
	{
		reason: "COMMAND, COMMAND INFO, COMMAND LIST and COMMAND DOCS without names list every command in the order of the server's command dictionary, which depends on the hash seed it draws at start; luatest lists them by name, with no flags, ACL categories or key specs, and no docs (README, rule 12)",
		match: func(argv []string, _ bool, want, got resp.Reply) bool {
			return argv[0] == "COMMAND" && (len(argv) == 1 || len(argv) == 2 && strings.Contains(" INFO LIST DOCS ", " "+argv[1]+" ")) &&
				want.Kind == resp.Array && got.Kind == want.Kind
		},
	},
	{
		reason: "MIGRATE to a refused port on a reachable host connects (non-blocking) and fails on the write; luatest reaches no other server and answers the error of an unreachable target",
		match: func(argv []string, seeded bool, want, got resp.Reply) bool {
			return argv[0] == "MIGRATE" && seeded &&
				want.Str == "IOERR error or timeout writing to target instance" && got.Str == "IOERR error or timeout connecting to the client"
		},
	},
	{
		reason:    "a cursor the sweep makes up (not 0) is a bucket of the server's hash table, masked to its size, and a hash value to luatest (README rule 11); which elements come after it depends on the hash seed the server draws at start",
		mayVanish: true,
		match: func(argv []string, seeded bool, want, got resp.Reply) bool {
			cursor := argv[1]
			if argv[0] != "SCAN" {
				cursor = argv[2]
			}
			return strings.HasSuffix(argv[0], "SCAN") && seeded && cursor != "0" &&
				len(want.Elems) == 2 && len(got.Elems) == 2
		},
	},
	{
		reason:    "a SCAN of a hashtable with COUNT below its size answers a cursor that depends on where the server's hash seed (drawn at start) puts the elements; luatest's cursors are its own (README rule 11): the elements must agree",
		mayVanish: true,
		match: func(argv []string, _ bool, want, got resp.Reply) bool {
			return strings.HasSuffix(argv[0], "SCAN") && len(want.Elems) == 2 && len(got.Elems) == 2 &&
				want.Elems[0].Str != got.Elems[0].Str && resp.Equal(want.Elems[1], got.Elems[1])
		},
	},
	{
		reason: "XADD * takes its ID's time from the clock: the server's, luatest's virtual one",
		match: func(argv []string, _ bool, want, got resp.Reply) bool {
			return argv[0] == "XADD" && slices.Contains(argv, "*") && want.Kind == resp.Bulk && got.Kind == resp.Bulk &&
				strings.HasSuffix(want.Str, "-0") && strings.HasSuffix(got.Str, "-0")
		},
	},
}

func knownDivergence(argv []string, seeded bool, want, got resp.Reply) int {
	for k, d := range sweepKnown {
		if d.match(argv, seeded, want, got) {
			return k
		}
	}
	return -1
}

// sweepVolatile names the commands whose successful replies depend on the
// server's clock, memory or history, which luatest only imitates; their
// calls compare the reply's kind unless either side answers an error.
var sweepVolatile = map[string]bool{
	"time": true, "lastsave": true, "info": true, "lolwut": true,
	"memory|usage": true, "memory|stats": true, "memory|doctor": true, "memory|malloc-stats": true,
	"object|idletime": true, "slowlog|get": true, "slowlog|len": true,
}

func sweepSame(name string, want, got resp.Reply) bool {
	if resp.Equal(want, got) {
		return true
	}
	return sweepVolatile[name] && want.Kind != resp.Error && want.Kind == got.Kind
}

// sweepScenario is the keyspace a call runs on: keys holding a value of
// the type group's commands work on, or nothing.
type sweepScenario struct {
	keys  []string
	group string
}

// wrongGroup is a group whose type differs from group's, for the
// scenario where every key holds the wrong type.
func wrongGroup(group string) string {
	switch group {
	case "list":
		return "hash"
	case "hash", "set", "sorted-set", "geo", "stream":
		return "list"
	}
	return "list" // strings, bitmaps, HyperLogLogs, generic commands
}

func sweepID(argv []string, sc sweepScenario) string {
	q := make([]string, len(argv))
	for i, a := range argv {
		if len(a) > 24 {
			a = a[:24] + "…"
		}
		q[i] = strconv.Quote(a)
	}
	id := strings.Join(q, " ")
	if sc.keys != nil {
		id += " [keys hold a " + sc.group + " value]"
	}
	return id
}

// sweepScript calls ARGV as a command and returns its reply or its error.
const sweepScript = "return redis.pcall(unpack(ARGV))"

// runSweepCall runs argv through EVAL on both servers, on an emptied
// keyspace where the keys of sc (if any) hold a value of its group's
// type, and returns both replies.
func runSweepCall(t *testing.T, real *resp.Conn, fake *luatest.Redis, argv, keys []string, sc sweepScenario) (want, got resp.Reply) {
	t.Helper()
	both := func(args ...string) {
		w, g := do(t, real, args...), fake.Command(2, args...)
		require.True(t, resp.Equal(w, g), "%q:\nserver:  %s\nluatest: %s", args, w, g)
	}
	both("FLUSHALL")
	seen := map[string]bool{}
	for _, k := range sc.keys {
		if seen[k] {
			continue
		}
		seen[k] = true
		for _, s := range seedFor(sc.group, k) {
			both(s...)
		}
	}
	eval := append([]string{"EVAL", sweepScript, strconv.Itoa(len(keys))}, keys...)
	eval = append(eval, argv...)
	return do(t, real, eval...), fake.Command(2, eval...)
}

// seedFor returns the commands that make key hold a one-element value of
// the type a command of group works on.
func seedFor(group, key string) [][]string {
	switch group {
	case "list":
		return [][]string{{"RPUSH", key, "e"}}
	case "hash":
		return [][]string{{"HSET", key, "f", "1"}}
	case "set":
		return [][]string{{"SADD", key, "m"}}
	case "sorted-set":
		return [][]string{{"ZADD", key, "1", "m"}}
	case "geo":
		return [][]string{{"GEOADD", key, "13.361389", "38.115556", "m"}}
	case "hyperloglog":
		return [][]string{{"PFADD", key, "e"}}
	case "stream":
		return [][]string{{"XADD", key, "1-1", "f", "v"}, {"XGROUP", "CREATE", key, "g", "0"}}
	}
	return [][]string{{"SET", key, "1"}}
}

// keysOf returns argv's keys as the server's key specs find them.
func keysOf(argv []string) []string {
	info, ok := rediscmd.LookupArgs(argv)
	if !ok {
		return nil
	}
	return info.Keys(argv)
}

// sweepCmd is one command or subcommand of the server's table.
type sweepCmd struct {
	name      string   // "object|encoding"
	argv0     []string // "OBJECT", "ENCODING"
	arity     int
	noscript  bool
	container bool
	group     string
	args      []*docArg
}

// docArg is one argument of COMMAND DOCS.
type docArg struct {
	Name, Type, Token       string
	Optional, Multiple, Tok bool // Tok: multiple_token
	Args                    []*docArg
}

// readCommandTable reads COMMAND INFO (arity, flags, subcommands) and
// COMMAND DOCS (group, arguments) over RESP3, sorted by name.
func readCommandTable(t *testing.T, c *resp.Conn) []*sweepCmd {
	t.Helper()
	docs := map[string]resp.Reply{}
	var walkDocs func(r resp.Reply)
	walkDocs = func(r resp.Reply) {
		for i := 0; i+1 < len(r.Elems); i += 2 {
			docs[r.Elems[i].Str] = r.Elems[i+1]
			if sub, ok := field(r.Elems[i+1], "subcommands"); ok {
				walkDocs(sub)
			}
		}
	}
	walkDocs(do(t, c, "COMMAND", "DOCS"))

	var out []*sweepCmd
	var walkInfo func(r resp.Reply, parent string)
	walkInfo = func(r resp.Reply, parent string) {
		for _, e := range r.Elems {
			name := e.Elems[0].Str
			sc := &sweepCmd{name: name, arity: int(e.Elems[1].Int), container: len(e.Elems[9].Elems) > 0}
			for _, f := range e.Elems[2].Elems {
				sc.noscript = sc.noscript || f.Str == "noscript"
			}
			sc.argv0 = []string{strings.ToUpper(name)}
			if parent != "" {
				sc.argv0 = strings.Split(strings.ToUpper(name), "|")
			}
			d := docs[name]
			if g, ok := field(d, "group"); ok {
				sc.group = g.Str
			}
			if a, ok := field(d, "arguments"); ok {
				sc.args = parseDocArgs(a)
			}
			// The shared table luatest resolves commands with must agree.
			info, ok := rediscmd.Lookup(name)
			require.True(t, ok, name)
			require.Equal(t, sc.arity, info.Arity, name)
			require.Equal(t, sc.noscript, info.Has(rediscmd.NoScript), name)
			out = append(out, sc)
			walkInfo(e.Elems[9], name)
		}
	}
	walkInfo(do(t, c, "COMMAND", "INFO"), "")
	sort.Slice(out, func(i, j int) bool { return out[i].name < out[j].name })
	return out
}

func field(m resp.Reply, name string) (resp.Reply, bool) {
	for i := 0; i+1 < len(m.Elems); i += 2 {
		if m.Elems[i].Str == name {
			return m.Elems[i+1], true
		}
	}
	return resp.Reply{}, false
}

func parseDocArgs(r resp.Reply) []*docArg {
	var out []*docArg
	for _, m := range r.Elems {
		a := &docArg{}
		for i := 0; i+1 < len(m.Elems); i += 2 {
			v := m.Elems[i+1]
			switch m.Elems[i].Str {
			case "name":
				a.Name = v.Str
			case "type":
				a.Type = v.Str
			case "token":
				a.Token = v.Str
			case "flags":
				for _, f := range v.Elems {
					a.Optional = a.Optional || f.Str == "optional"
					a.Multiple = a.Multiple || f.Str == "multiple"
					a.Tok = a.Tok || f.Str == "multiple_token"
				}
			case "arguments":
				a.Args = parseDocArgs(v)
			}
		}
		out = append(out, a)
	}
	return out
}

// calls returns the generated argument vectors of c, deduplicated, in a
// fixed order.
func (c *sweepCmd) calls(payload string) [][]string {
	g := &argGen{cmd: c.name, payload: payload}
	var out [][]string
	seen := map[string]bool{}
	add := func(argv []string) {
		k := strings.Join(argv, "\x00")
		if !seen[k] {
			seen[k] = true
			out = append(out, argv)
		}
	}
	base := g.argv(c, nil, nil)
	add(base)
	// Arity: one argument short, and one too many for a fixed arity.
	n := c.arity
	if n < 0 {
		n = -n
	}
	add(fit(base, n-1))
	if c.arity > 0 {
		add(append(fit(base, n), "extra"))
	}
	if c.container {
		add(append(slicesClone(c.argv0), "NOSUCHSUBCOMMAND"))
	}
	if c.noscript {
		return out // the refusal comes before any argument is read
	}
	for _, site := range sites(c.args, nil) {
		for _, m := range mutations(site.arg) {
			add(g.argv(c, site.path, m))
		}
	}
	return out
}

// fit cuts argv to n arguments or pads it with "x".
func fit(argv []string, n int) []string {
	out := slicesClone(argv)
	if n < len(out) {
		return out[:n]
	}
	for len(out) < n {
		out = append(out, "x")
	}
	return out
}

func slicesClone(s []string) []string { return append([]string(nil), s...) }

// site is one argument of the docs' tree: path indexes the arguments from
// the top level down (through oneof alternatives and block members).
type site struct {
	path []int
	arg  *docArg
}

func sites(args []*docArg, prefix []int) []site {
	var out []site
	for i, a := range args {
		p := append(slicesClone2(prefix), i)
		out = append(out, site{p, a})
		if a.Type == "oneof" || a.Type == "block" {
			out = append(out, sites(a.Args, p)...)
		}
	}
	return out
}

func slicesClone2(s []int) []int { return append([]int(nil), s...) }

// mutation renders the argument at a site wrongly: its words (token
// included) and whether the call ends there.
type mutation func(g *argGen, a *docArg) (words []string, cut bool)

// mutations returns the wrong renderings worth trying for a.
func mutations(a *docArg) []mutation {
	var out []mutation
	withTok := func(vals ...string) mutation {
		return func(g *argGen, a *docArg) ([]string, bool) {
			if a.Token != "" {
				return append([]string{a.Token}, vals...), false
			}
			return vals, false
		}
	}
	switch a.Type {
	case "integer", "unix-time":
		for _, v := range []string{"x", "1.5", "-1", "0", "2", "9223372036854775808"} {
			out = append(out, withTok(v))
		}
	case "double":
		for _, v := range []string{"x", "nan", "-1", "inf", "-inf"} {
			out = append(out, withTok(v))
		}
	case "string":
		// Strings that are really IDs, operations, encodings, units: a
		// word none of them accepts.
		out = append(out, withTok("BADTOKEN"))
	case "pure-token":
		out = append(out, func(*argGen, *docArg) ([]string, bool) { return []string{"BADTOKEN"}, false })
	case "oneof":
		out = append(out, withTok("BADTOKEN"))
		if len(a.Args) >= 2 {
			out = append(out, func(g *argGen, a *docArg) ([]string, bool) {
				w := g.valid(a.Args[0])
				w = append(w, g.valid(a.Args[1])...)
				if a.Token != "" {
					w = append([]string{a.Token}, w...)
				}
				return w, false
			})
		}
	case "block":
		out = append(out, func(g *argGen, a *docArg) ([]string, bool) {
			var w []string
			if a.Token != "" {
				w = append(w, a.Token)
			}
			if len(a.Args) > 0 && a.Token == "" {
				w = append(w, g.valid(a.Args[0])...)
			}
			return w, true
		})
		if a.Multiple {
			out = append(out, func(g *argGen, a *docArg) ([]string, bool) {
				w := g.valid(a)
				if a.Token != "" && !a.Tok {
					return append(w, g.valid(a.Args[0])...), true
				}
				part := []string{}
				if a.Token != "" {
					part = append(part, a.Token)
				}
				return append(w, append(part, g.valid(a.Args[0])...)...), true
			})
		}
	}
	if a.Token != "" {
		// The option twice.
		out = append(out, func(g *argGen, a *docArg) ([]string, bool) { return append(g.valid(a), g.valid(a)...), false })
	}
	if a.Token != "" && a.Type != "pure-token" {
		// The token with its value missing, at the end of the call.
		out = append(out, func(_ *argGen, a *docArg) ([]string, bool) { return []string{a.Token}, true })
	}
	return out
}

// argGen renders arguments; keys are named k1, k2, ... in order.
type argGen struct {
	cmd     string
	payload string
	nkey    int
}

// argv renders c's call: required arguments valid, optional ones left out
// except those on path, whose last element is rendered by m (nil: valid).
func (g *argGen) argv(c *sweepCmd, path []int, m mutation) []string {
	g.nkey = 0
	words, _ := g.list(c.args, path, m)
	return append(slicesClone(c.argv0), words...)
}

func (g *argGen) list(args []*docArg, path []int, m mutation) ([]string, bool) {
	var out []string
	for i, a := range args {
		on := len(path) > 0 && path[0] == i
		if !on && a.Optional {
			continue
		}
		var w []string
		cut := false
		if on {
			w, cut = g.node(a, path[1:], m)
		} else {
			w = g.valid(a)
		}
		out = append(out, w...)
		if cut {
			return out, true
		}
	}
	return out, false
}

func (g *argGen) node(a *docArg, rest []int, m mutation) ([]string, bool) {
	if len(rest) == 0 {
		if m == nil {
			return g.valid(a), false
		}
		return m(g, a)
	}
	var w []string
	if a.Token != "" {
		w = append(w, a.Token)
	}
	var sub []string
	cut := false
	if a.Type == "oneof" {
		sub, cut = g.node(a.Args[rest[0]], rest[1:], m)
	} else {
		sub, cut = g.list(a.Args, rest, m)
	}
	return append(w, sub...), cut
}

// valid renders a with its token and a value the command accepts.
func (g *argGen) valid(a *docArg) []string {
	var w []string
	if a.Token != "" {
		w = append(w, a.Token)
	}
	switch a.Type {
	case "pure-token":
		return w
	case "oneof":
		return append(w, g.valid(a.Args[0])...)
	case "block":
		for _, s := range a.Args {
			if !s.Optional {
				w = append(w, g.valid(s)...)
			}
		}
		return w
	case "key":
		g.nkey++
		return append(w, "k"+strconv.Itoa(g.nkey))
	}
	return append(w, g.value(a))
}

// sweepValues are valid values by argument name ("command.name" first).
var sweepValues = map[string]string{
	"id": "1-1", "xread.id": "0", "xreadgroup.id": ">", "xgroup|create.id": "0", "xgroup|setid.id": "0",
	"start": "-", "end": "+", "zrange.start": "0", "zrange.stop": "-1",
	"min": "-", "max": "+", "zrangestore.min": "0", "zrangestore.max": "-1",
	"zcount.min": "0", "zcount.max": "10", "zrangebyscore.min": "0", "zrangebyscore.max": "10",
	"zrevrangebyscore.min": "0", "zrevrangebyscore.max": "10", "zremrangebyscore.min": "0", "zremrangebyscore.max": "10",
	"min-idle-time": "0", "threshold": "10", "last-id": "1-1", "max_deleted_entry_id": "0-0",
	"group": "g", "groupname": "g", "consumer": "c", "consumername": "c",
	"encoding": "u8", "operation": "AND", "subcommand": "GETREG", "section": "keyspace",
	"host": "127.0.0.1", "port": "1", "node-id": "x", "slot": "1", "start-slot": "1", "end-slot": "2",
	"pattern": "*", "type": "string", "message": "m", "channel": "ch", "shardchannel": "ch",
	"element": "e", "pivot": "e", "member": "m", "member1": "m", "member2": "m", "field": "f", "value": "v",
	"setbit.value": "1", "bitfield.value": "1",
	"longitude": "13.361389", "latitude": "38.115556", "radius": "100", "width": "100", "height": "100",
	"score": "1", "increment": "1", "timeout": "0", "milliseconds": "100", "seconds": "100", "ms": "100",
	"unix-time-seconds": "4102444800", "unix-time-milliseconds": "4102444800000",
	"ttl": "0", "frequency": "1", "numkeys": "1", "count": "1", "cursor": "0", "index": "0",
	"db": "1", "destination-db": "1", "index1": "0", "index2": "1", "version": "5",
	"stop": "-1", "rank": "1", "num-matches": "1", "len": "1", "limit": "0", "weight": "1", "bit": "1",
	"decrement": "1", "entries_added": "1", "entries_read": "1", "command-name": "get",
	"category": "string", "module-name": "x", "key": "k", "offset": "0",
	"getrange.end": "-1", "bitcount.end": "-1", "bitpos.end": "-1", "substr.end": "-1",
}

func (g *argGen) value(a *docArg) string {
	if a.Name == "serialized-value" {
		return g.payload
	}
	if v, ok := sweepValues[g.cmd+"."+a.Name]; ok {
		return v
	}
	if v, ok := sweepValues[a.Name]; ok {
		return v
	}
	switch a.Type {
	case "integer", "double", "unix-time":
		return "1"
	}
	return "v"
}

// Guard against a silently empty sweep: the generator must yield calls
// for a command with arguments.
func TestCommandTableSweepGenerates(t *testing.T) {
	c := &sweepCmd{name: "zadd", argv0: []string{"ZADD"}, arity: -4, group: "sorted-set", args: []*docArg{
		{Name: "key", Type: "key"},
		{Name: "condition", Type: "oneof", Optional: true, Args: []*docArg{{Name: "nx", Type: "pure-token", Token: "NX"}, {Name: "xx", Type: "pure-token", Token: "XX"}}},
		{Name: "score_member", Type: "block", Multiple: true, Args: []*docArg{{Name: "score", Type: "double"}, {Name: "member", Type: "string"}}},
	}}
	got := map[string]bool{}
	for _, argv := range c.calls("") {
		got[strings.Join(argv, " ")] = true
	}
	for _, want := range []string{
		"ZADD k1 1 m",          // the valid call
		"ZADD k1 1",            // arity-1, which is also the block cut short
		"ZADD k1 BADTOKEN 1 m", // unknown token where a oneof goes
		"ZADD k1 NX XX 1 m",    // exclusive options together
		"ZADD k1 x m",          // a non-float score
		"ZADD k1 1 m 1",        // a repeated block cut short
	} {
		require.True(t, got[want], "missing %q in %v", want, fmt.Sprint(got))
	}
}
