package luatest

import (
	"fmt"
	"math"
	"math/big"
	"strconv"
	"strings"
	"time"

	rediscmd "github.com/luagen/luagen/internal/commands"
	"github.com/luagen/luagen/luatest/resp"
)

// command is one command luatest implements: its name and the function
// that runs it. Arity, flags and key positions come from the server's own
// table (internal/commands, generated from redis-server 7.0.15's COMMAND
// reply), so they are written once; keys overrides the key specs for the
// few commands whose keys the server describes as "unknown" (SORT's STORE).
type command struct {
	name string                       // lower case, as COMMAND INFO names it
	keys func(args []string) []string // nil: the key specs of the table
	fn   func(c *cmdCtx, args []string) resp.Reply
}

// cmdCtx is what a command function sees of its caller.
type cmdCtx struct {
	r     *Redis
	proto int     // 2 or 3: the caller's protocol; inside a script, redis.setresp's
	name  string  // the command name, lower case
	argv0 string  // the command name as the caller wrote it
	run   *runCtx // the running script, nil outside one
}

var commandTable = map[string]*command{}

func register(cmds ...*command) {
	for _, c := range cmds {
		if _, ok := rediscmd.Lookup(c.name); !ok {
			panic("luatest: command " + c.name + " is not in the server's command table")
		}
		commandTable[c.name] = c
	}
}

func init() {
	register(genericCommands...)
	register(stringCommands...)
	register(hashCommands...)
	register(listCommands...)
	register(setCommands...)
	register(zsetCommands...)
	register(pubsubCommands...)
	register(serverCommands...)
	register(bitmapCommands...)
	register(streamCommands...)
	register(geoCommands...)
	register(hllCommands...)
	register(adminCommands...)
	register(blockingCommands...)
	register(scriptingCommands...)
	register(dumpCommands...)
	for _, name := range rediscmd.Names() {
		info, _ := rediscmd.Lookup(name)
		if info.Subcommands || strings.Contains(name, "|") {
			continue
		}
		rc := resolved{info: info, impl: commandTable[name]}
		resolvedByName[name] = rc
		resolvedByName[strings.ToUpper(name)] = rc
	}
}

// resolvedByName is resolve's answer for every command without
// subcommands, under its lower and upper case names: scripts spell command
// names one of these ways, and the lookup then costs no lower-casing.
var resolvedByName = map[string]resolved{}

// resolved is a command line resolved against the server's table: info is
// the server's entry (a subcommand's for container commands), impl luatest's
// implementation of the top-level command (nil when luatest lacks it).
type resolved struct {
	info *rediscmd.Info
	impl *command
}

// resolve looks argv up as the server's lookupCommand does; ok is false
// for a command (or subcommand) the server does not know.
func resolve(argv []string) (resolved, bool) {
	if len(argv) > 0 {
		if rc, ok := resolvedByName[argv[0]]; ok {
			return rc, true
		}
	}
	info, ok := rediscmd.LookupArgs(argv)
	if !ok {
		return resolved{}, false
	}
	return resolved{info: info, impl: commandTable[strings.ToLower(argv[0])]}, true
}

// keysOf returns the keys among argv (argv[0] is the command name).
func (rc resolved) keysOf(argv []string) []string {
	if rc.impl != nil && rc.impl.keys != nil {
		return rc.impl.keys(argv[1:])
	}
	if keys, ok := rangeKeys(rc.info, argv); ok {
		return keys
	}
	return rc.info.Keys(argv)
}

// rangeKeys is Info.Keys without allocating for the commonest key spec:
// one spec naming a fixed position up to an offset from it or from the end,
// every argument (GET, HSET, DEL, MSET's is not: it steps by 2). It
// returns a part of argv, capped so an append cannot write into argv; ok
// is false for any other spec, which Info.Keys handles.
func rangeKeys(info *rediscmd.Info, argv []string) (keys []string, ok bool) {
	if len(info.Specs) != 1 {
		return nil, false
	}
	sp := &info.Specs[0]
	if sp.NotKey || sp.Unknown || sp.Keyword != "" || sp.KeyNum || sp.Index < 1 ||
		max(sp.KeyStep, 1) != 1 || sp.LastKey < 0 && sp.Limit > 1 {
		return nil, false
	}
	n := len(argv)
	end := sp.Index + sp.LastKey
	if sp.LastKey < 0 {
		end = n + sp.LastKey
	}
	end = min(end, n-1)
	if end < sp.Index {
		return nil, true
	}
	return argv[sp.Index : end+1 : end+1], true
}

// errNotImplemented answers a command the server has and luatest lacks:
// loudly, never as if it had run.
func errNotImplemented(name string) resp.Reply {
	return resp.ErrorReply(fmt.Sprintf("ERR luatest: the Redis command '%s' is not implemented by luatest (see luatest/README.md)", strings.ToUpper(name)))
}

// Error replies, worded as Redis 7.0 words them (server.c shared objects
// and the command sources).
var (
	errWrongType     = resp.ErrorReply("WRONGTYPE Operation against a key holding the wrong kind of value")
	errNotInt        = resp.ErrorReply("ERR value is not an integer or out of range")
	errNotFloat      = resp.ErrorReply("ERR value is not a valid float")
	errSyntax        = resp.ErrorReply("ERR syntax error")
	errOverflow      = resp.ErrorReply("ERR increment or decrement would overflow")
	errNoSuchKey     = resp.ErrorReply("ERR no such key")
	errIndexRange    = resp.ErrorReply("ERR index out of range")
	errMinMaxFloat   = resp.ErrorReply("ERR min or max is not a float")
	errHashNotInt    = resp.ErrorReply("ERR hash value is not an integer")
	errHashNotFloat  = resp.ErrorReply("ERR hash value is not a float")
	errPositive      = resp.ErrorReply("ERR value is out of range, must be positive")
	errNaNOrInfinity = resp.ErrorReply("ERR increment would produce NaN or Infinity")
)

// parseRangeLong is getRangeLongFromObjectOrReply: an integer between lo
// and hi, else msg — for a value that is no integer too — or, when msg is
// empty, the server's generic texts.
func parseRangeLong(s string, lo, hi int64, msg string) (int64, *resp.Reply) {
	n, ok := parseInt(s)
	if !ok {
		if msg != "" {
			return 0, errReply("ERR " + msg)
		}
		return 0, &errNotInt
	}
	if n < lo || n > hi {
		if msg == "" {
			return 0, errReply(fmt.Sprintf("ERR value is out of range, value must between %d and %d", lo, hi))
		}
		return 0, errReply("ERR " + msg)
	}
	return n, nil
}

// parsePositiveLong is getPositiveLongFromObjectOrReply with no message of
// its caller: "value is out of range, must be positive" for a negative
// number and for a value that is no integer alike.
func parsePositiveLong(s string) (int64, *resp.Reply) {
	return parseRangeLong(s, 0, math.MaxInt64, "value is out of range, must be positive")
}

// errReply is an error reply for the parse helpers that return
// *resp.Reply, nil meaning the arguments parsed.
func errReply(msg string) *resp.Reply {
	r := resp.ErrorReply(msg)
	return &r
}

func errArity(name string) resp.Reply {
	return resp.ErrorReply(fmt.Sprintf("ERR wrong number of arguments for '%s' command", name))
}

func (c *cmdCtx) errExpireTime() resp.Reply {
	return resp.ErrorReply(fmt.Sprintf("ERR invalid expire time in '%s' command", c.name))
}

// parseInt is Redis' string2ll: an optional '-', no '+', no spaces, no
// leading zeros, within int64.
func parseInt(s string) (int64, bool) {
	if s == "" || len(s) > 20 {
		return 0, false
	}
	if s == "0" {
		return 0, true
	}
	d := s
	if d[0] == '-' {
		d = d[1:]
	}
	if d == "" || d[0] < '1' || d[0] > '9' {
		return 0, false
	}
	for i := 0; i < len(d); i++ {
		if d[i] < '0' || d[i] > '9' {
			return 0, false
		}
	}
	n, err := strconv.ParseInt(s, 10, 64)
	return n, err == nil
}

// parseFloat is Redis' string-to-double check (getDoubleFromObject): C
// strtod over the whole string, no leading space, NaN refused. Like strtod
// it takes "inf", "infinity" in any case, hex ("0x1p3", "0x10") and ".5".
func parseFloat(s string) (float64, bool) {
	if s == "" || isSpace(s[0]) || strings.ContainsRune(s, '_') {
		return 0, false
	}
	body := strings.TrimLeft(s, "+-")
	if len(s)-len(body) > 1 {
		return 0, false
	}
	switch strings.ToLower(body) {
	case "inf", "infinity":
		if s[0] == '-' {
			return math.Inf(-1), true
		}
		return math.Inf(1), true
	case "nan":
		return 0, false
	}
	lb := strings.ToLower(body)
	if strings.HasPrefix(lb, "0x") && !strings.Contains(lb, "p") {
		s += "p0"
	}
	f, err := strconv.ParseFloat(s, 64)
	if err != nil {
		if ne, ok := err.(*strconv.NumError); ok && ne.Err == strconv.ErrRange {
			return f, true // strtod answers ±HUGE_VAL (or 0) and Redis takes it
		}
		return 0, false
	}
	return f, !math.IsNaN(f)
}

func isSpace(b byte) bool {
	return b == ' ' || b == '\t' || b == '\n' || b == '\r' || b == '\v' || b == '\f'
}

// parseLongDouble parses s the way getLongDoubleFromObject does (strtold,
// no leading space, NaN refused) into a float with the 64-bit mantissa of
// an x87 long double, which INCRBYFLOAT and HINCRBYFLOAT compute with.
func parseLongDouble(s string) (*big.Float, bool) {
	f, ok := parseFloat(s)
	if !ok {
		return nil, false
	}
	if math.IsInf(f, 0) {
		return new(big.Float).SetInf(f < 0), true
	}
	lb := strings.ToLower(strings.TrimLeft(s, "+-"))
	if strings.HasPrefix(lb, "0x") {
		return new(big.Float).SetPrec(64).SetFloat64(f), true
	}
	x, _, err := big.ParseFloat(s, 10, 64, big.ToNearestEven)
	if err != nil {
		return new(big.Float).SetPrec(64).SetFloat64(f), true
	}
	return x, true
}

// formatLongDouble is ld2string with LD_STR_HUMAN: "%.17Lf" with trailing
// zeros (and a trailing '.') removed, "-0" turned into "0".
func formatLongDouble(x *big.Float) string {
	s := x.Text('f', 17)
	if strings.Contains(s, ".") {
		s = strings.TrimRight(s, "0")
		s = strings.TrimSuffix(s, ".")
	}
	if s == "-0" {
		s = "0"
	}
	return s
}

// addLongDouble adds two long doubles; ok is false when the sum is NaN or
// infinite (the caller answers "increment would produce NaN or Infinity").
func addLongDouble(a, b *big.Float) (*big.Float, bool) {
	if a.IsInf() || b.IsInf() {
		return nil, false
	}
	sum := new(big.Float).SetPrec(64).SetMode(big.ToNearestEven).Add(a, b)
	// An x87 long double overflows past ~1.19e4932.
	if sum.MantExp(nil) > 16384 {
		return nil, false
	}
	return sum, true
}

// double returns f as a RESP3 double, or for RESP2 as the bulk string Redis
// 7.0 sends ("%.17g").
func (c *cmdCtx) double(f float64) resp.Reply {
	if c.proto == 3 {
		return resp.DoubleReply(f)
	}
	return resp.BulkReply(resp.FormatDouble(f))
}

// mapReply returns kvs (key, value, ...) as a RESP3 map or a RESP2 array.
func (c *cmdCtx) mapReply(kvs []resp.Reply) resp.Reply {
	if c.proto == 3 {
		return resp.Reply{Kind: resp.Map, Elems: kvs}
	}
	return resp.Reply{Kind: resp.Array, Elems: kvs}
}

// setReply returns members as a RESP3 set or a RESP2 array.
func (c *cmdCtx) setReply(members []string) resp.Reply {
	r := resp.BulkArray(members)
	if c.proto == 3 {
		r.Kind = resp.Set
	}
	return r
}

// nullArray is the reply of commands that answer a null array in RESP2
// ("*-1") and a null in RESP3; both are a nil Reply here.
var nullArray = resp.NullArray

// now returns the virtual clock in Unix milliseconds.
func (c *cmdCtx) nowMs() int64 { return c.r.nowMs() }

// call runs a resolved command and, after a write, records the encoding
// conversions it made to the keys it names (noteEncoding), since the
// server never undoes them.
func (r *Redis) call(rc resolved, c *cmdCtx, argv []string) resp.Reply {
	start := time.Now()
	reply := rc.impl.fn(c, argv[1:])
	r.countCall(rc.info.Name, time.Since(start), reply.Kind == resp.Error)
	if rc.info.Flags&rediscmd.Write != 0 {
		// A refused command, or a blocking one that found nothing,
		// changed nothing: a wire connection blocked in it must not wake
		// itself.
		touch := r.observer != nil && reply.Kind != resp.Error && (reply.Kind != resp.Nil || !rc.info.Has(rediscmd.Blocking))
		for _, k := range rc.keysOf(argv) {
			if e := r.db[k]; e != nil {
				e.noteEncoding()
			}
			if touch {
				r.touched(r.dbIndex, k)
			}
		}
		if touch {
			switch rc.impl.name {
			case "flushdb":
				r.touched(r.dbIndex, "")
			case "flushall", "swapdb", "move", "copy":
				r.touched(-1, "") // more than the keys of this database
			}
		}
	}
	return reply
}
