package gen

import (
	"cmp"
	"fmt"
	"math"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/yuin/gopher-lua/ast"

	"github.com/luagen/luagen/internal/replycode"
)

// Reply-shape analysis: what each return of a script's main chunk can send
// to the caller, checked against the header's ---@return, ---@error and
// ---@status lines. The conversion rules are Redis 7.0's, from
// src/script_lua.c, and were checked with redis-cli EVAL on
// redis-server 7.0.15:
//
// Lua → Redis (luaReplyToRedisReply):
//   - a number becomes an integer reply, truncated toward zero
//     (return 3.7 → 3, return -3.7 → -3; 1e20 and 1/0 → -9223372036854775808);
//   - true becomes the integer 1; false and nil become a nil reply;
//   - a table with a string field err becomes an error reply (err wins over
//     ok: {err='x', ok='y'} → error x; {1, 2, err='E x'} → error E x); one
//     with a string field ok a status reply; {err=5} is not an error but an
//     empty array;
//   - any other table becomes an array of its elements 1, 2, ... up to the
//     first nil: {1, nil, 3} → [1]; a false element is sent as a nil
//     element and does not end it: {1, false, 3} → [1, nil, 3];
//   - only the first of several return values is sent (return 1, 2 → 1);
//   - an error message is sent as it is: error_reply('ERR NOSCRIPT x') is
//     "-ERR NOSCRIPT x" on the wire, {err='NOSCRIPT No matching script.
//     Please use EVAL.'} is byte for byte the server's own NOSCRIPT.
//
// TestRedisReplyConversions pins these on redis-server.
//
// Redis → Lua (redisProtocolToLuaType, for redis.call and redis.pcall):
// an integer reply becomes a number, a bulk string a string, a nil bulk or
// nil array false, a status reply {ok=...}, an array a table; an error
// reply is raised by redis.call and returned as {err=...} by redis.pcall.
//
// The analysis is flow-insensitive and stays silent where it cannot follow
// a value (see the package doc): every alternative it reports is one the
// script can really produce, or one that Redis converts the same way
// whatever the branch.

// vkind is what a Lua value is, as far as its reply goes.
type vkind uint8

const (
	vUnknown   vkind = iota // anything: the analysis cannot follow it
	vInt                    // an integral number (lit: its value, when known)
	vFrac                   // a number that is certainly not integral (lit: its text)
	vMaybeFrac              // a number that may not be integral: x * 1.5, a / b
	vNum                    // a number (tonumber, math.*): integral for all the analysis knows
	vStr                    // a string (lit: its text, or a prefix of it)
	vTrue
	vFalse
	vNil
	vArray  // a table sent as an array
	vErr    // a table sent as an error reply: redis.error_reply, {err=...}
	vStatus // a table sent as a status reply: redis.status_reply, {ok=...}
)

// lval is one value an expression can have.
type lval struct {
	kind   vkind
	lit    string // see vkind; the message of vErr and vStatus
	known  bool   // lit is the whole value
	prefix bool   // lit is the start of a string built with ..
	what   string // how to name it in a message: "3.7", "a GET reply", ...
	data   bool   // a false that depends on data (a GET of a missing key): never reported
	// reached through a local assigned more than once: the value may be
	// overwritten before the return (the analysis does not follow the
	// order of statements), so it is never reported, only counted
	reassigned bool
	line       int // the line that made it
	// inexact marks a number (vMaybeFrac) that Redis may not send as the
	// integer the script means: beyond 2^53, where a Lua number (a
	// double) stops holding every integer, beyond int64 or NaN (sent as
	// -9223372036854775808), or the caller's number through tonumber.
	inexact bool

	// Numbers (see numbers.go): a bounded number lies in lo..hi and may
	// carry fbits bits of fraction; args are the ---@arg positions (bit
	// i for ARGV[i+1]) whose caller's numbers it is computed from; text is
	// set when one of them is the caller's text (a string ---@arg), and
	// quotient for the result of a division.
	ranged   bool
	lo, hi   float64
	fbits    int
	args     uint64
	text     bool
	quotient bool
	// argv is n for the string ARGV[n] (0: not an ARGV element; -1: one
	// whose index the analysis does not know).
	argv int

	// vArray: elems are its positional elements when the constructor is
	// in sight; more is set when a last element expands to values the
	// analysis cannot count; each is the shape of every element of a
	// command's array reply; with neither, nothing is known of them.
	elems []lset
	more  bool
	each  lset
	// vArray with each: the reply is a flat list of field, value, ...
	// pairs (HGETALL, ZRANGE ... WITHSCORES), so its length is even
	pairs bool
	// how to avoid this value, when a message about it has a better hint
	// than the general one
	hint string
}

// lset is every value an expression may have.
type lset []lval

// scalarKey is what tells two values without elements apart.
type scalarKey struct {
	kind                                     vkind
	lit, what, hint                          string
	known, prefix, data, reassigned, inexact bool
	ranged, text, quotient, more, pairs      bool
	line, fbits, argv                        int
	lo, hi                                   float64
	args                                     uint64
}

// dedupe drops repeats of a value that has no elements: a parameter's
// values are those of every call, and helpers that call each other twice
// (f2(x) = f1(x) + f1(x)) would otherwise double them at each level. Past
// eight values, values that differ only in the line that made them and
// how a message names them count as repeats too (a local assigned 2,000
// times, n = n + 1, would otherwise make every use of it cost 2,000
// evaluations); a message then names the first.
func dedupe(vs lset) lset {
	if len(vs) < 2 {
		return vs
	}
	loose := len(vs) > 8
	seen := make(map[scalarKey]bool, len(vs))
	out := vs[:0:0]
	for _, v := range vs {
		if v.elems != nil || v.each != nil {
			out = append(out, v)
			continue
		}
		k := scalarKey{v.kind, v.lit, v.what, v.hint, v.known, v.prefix, v.data, v.reassigned, v.inexact,
			v.ranged, v.text, v.quotient, v.more, v.pairs, v.line, v.fbits, v.argv, v.lo, v.hi, v.args}
		if loose {
			k.line, k.what = 0, ""
		}
		if !seen[k] {
			seen[k] = true
			out = append(out, v)
		}
	}
	return out
}

// commandReply is the Lua shape of a command's reply, for the commands
// scripts call most. A command that is not listed is unknown.
type commandReply uint8

const (
	replyInt         commandReply = iota + 1 // integer reply → number
	replyStrOrFalse                          // bulk string or nil → string or false
	replyStr                                 // bulk string → string
	replyArray                               // array of bulk strings → table of strings
	replyArrayOrNils                         // array of bulk strings or nils → strings and false
	replyPairs                               // flat array field, value, ... of bulk strings
	replyInts                                // array of integers → table of numbers
	replyStatus                              // status reply → {ok=...}
)

// commandReplies lists reply shapes from the Redis 7.0 command docs
// (https://redis.io/commands), for calls whose shape does not depend on
// options; SET (NX/XX/GET change it), ZADD (INCR), LPOP/SPOP (count) are
// looked at with their arguments in callReply, and so are ZRANGE,
// ZREVRANGE, ZRANGEBYSCORE, ZREVRANGEBYSCORE (WITHSCORES makes their reply
// member, score pairs) and HRANDFIELD (count, WITHVALUES).
//
// The element shapes of array replies were checked with redis-cli EVAL on
// redis-server 7.0.15: HMGET, MGET and ZMSCORE send values only, with nil
// elements for missing fields, keys or members; HGETALL, ZRANGE ...
// WITHSCORES and HRANDFIELD ... WITHVALUES send field, value pairs; TIME
// sends two bulk strings; SMISMEMBER sends integers.
// TestRedisArrayReplyElements pins these.
var commandReplies = map[string]commandReply{
	"incr": replyInt, "decr": replyInt, "incrby": replyInt, "decrby": replyInt,
	"del": replyInt, "unlink": replyInt, "exists": replyInt, "touch": replyInt,
	"expire": replyInt, "pexpire": replyInt, "expireat": replyInt, "pexpireat": replyInt,
	"expiretime": replyInt, "pexpiretime": replyInt, "ttl": replyInt, "pttl": replyInt,
	"persist": replyInt, "setnx": replyInt, "msetnx": replyInt, "renamenx": replyInt,
	"append": replyInt, "strlen": replyInt, "setrange": replyInt, "getbit": replyInt,
	"setbit": replyInt, "bitcount": replyInt, "publish": replyInt, "spublish": replyInt,
	"pfadd": replyInt, "pfcount": replyInt, "copy": replyInt,
	"hset": replyInt, "hsetnx": replyInt, "hdel": replyInt, "hlen": replyInt,
	"hexists": replyInt, "hincrby": replyInt, "hstrlen": replyInt,
	"llen": replyInt, "lpush": replyInt, "rpush": replyInt, "lpushx": replyInt,
	"rpushx": replyInt, "lrem": replyInt, "linsert": replyInt,
	"sadd": replyInt, "srem": replyInt, "scard": replyInt, "sismember": replyInt,
	"smove": replyInt, "sinterstore": replyInt, "sunionstore": replyInt, "sdiffstore": replyInt,
	"zcard": replyInt, "zcount": replyInt, "zlexcount": replyInt, "zrem": replyInt,
	"zremrangebyscore": replyInt, "zremrangebyrank": replyInt, "zremrangebylex": replyInt,
	"zunionstore": replyInt, "zinterstore": replyInt, "zdiffstore": replyInt,
	"xlen": replyInt, "xack": replyInt, "xdel": replyInt, "dbsize": replyInt,

	"get": replyStrOrFalse, "getdel": replyStrOrFalse, "getex": replyStrOrFalse,
	"getset": replyStrOrFalse, "hget": replyStrOrFalse, "lindex": replyStrOrFalse,
	"zscore": replyStrOrFalse, "rpoplpush": replyStrOrFalse, "lmove": replyStrOrFalse,
	"zrank": replyStrOrFalse, "zrevrank": replyStrOrFalse, // integer or nil: see callReply

	"incrbyfloat": replyStr, "hincrbyfloat": replyStr, "getrange": replyStr,
	"zincrby": replyStr,

	"hkeys": replyArray, "hvals": replyArray, "smembers": replyArray,
	"lrange": replyArray, "zrangebylex": replyArray, "zrevrangebylex": replyArray,
	"sinter": replyArray, "sunion": replyArray, "sdiff": replyArray, "keys": replyArray,
	"time": replyArray, // seconds and microseconds, as bulk strings

	"mget": replyArrayOrNils, "hmget": replyArrayOrNils, "zmscore": replyArrayOrNils,

	"hgetall": replyPairs,

	"smismember": replyInts,

	"mset": replyStatus, "rename": replyStatus, "ltrim": replyStatus, "lset": replyStatus,
	"hmset": replyStatus, "setex": replyStatus, "psetex": replyStatus, "type": replyStatus,
	"ping": replyStatus, "flushdb": replyStatus, "flushall": replyStatus,
}

// reservedCodes are error codes that clients and luagen's runtime read
// as the server's own: a script that sends one is taken for something
// else (the runtime marks a returned one so that it reaches the caller as
// sent, but other clients of the script would still misread it). One list
// with the runtime's marking: internal/replycode.
var reservedCodes = replycode.Reserved

// resp3Fields are the table fields Redis 7 reads as RESP3 replies
// ({double=3.7} is a double, {map={...}} a map, ...), after err and ok.
var resp3Fields = map[string]bool{"double": true, "big_number": true, "map": true, "set": true, "verbatim_string": true}

var (
	reReturnExpr  = regexp.MustCompile(`\breturn\b\s*()`)
	reErrorReply  = regexp.MustCompile(`\berror_reply\b`)
	reErrField    = regexp.MustCompile(`\berr\s*=[^=]`)
	reStatusReply = regexp.MustCompile(`\bstatus_reply\b`)
)

// shaper evaluates the shapes of one script's values; it reads the
// bindings the linter resolved while walking.
type shaper struct {
	l *linter
	// converted are the ---@arg positions (0-based) the script turns
	// into numbers; defBound is the bound assumed for an int64 without an
	// ---@arg range (see argBound).
	converted map[int]bool
	defBound  float64
	fnMemo    map[*ast.FunctionExpr]lset
	fnBusy    map[*ast.FunctionExpr]bool
	memo      map[*binding]lset
	busy      map[*binding]bool
	depth     int  // bindings being evaluated
	cycled    bool // a binding was reached again while being evaluated
	// self marks a binding reached again from one of its own values (x = x
	// * 1000): see selfUpdate.
	self  map[*binding]bool
	steps int // evaluation steps left; at 0 every value is unknown
	// exprMemo holds the values of expressions evaluated outside any
	// local's evaluation (see eval).
	exprMemo map[ast.Expr]lset
	// busyAt is the depth at which each local being evaluated started;
	// hit the least such depth a cycle reached back to (see binding).
	busyAt map[*binding]int
	hit    int
}

// shaperSteps bounds the work on one script: locals that feed each other
// in loops are evaluated again for every path, so a contrived script could
// otherwise take exponential time. Real scripts use a few thousand.
const shaperSteps = 200000

// global reports whether e is the global variable name: the walk resolved
// every local it saw, so an identifier with no binding is a global.
func (sh *shaper) global(e ast.Expr, name string) bool {
	id, ok := e.(*ast.IdentExpr)
	if !ok {
		return false
	}
	if b := sh.l.resolved[id]; b != nil {
		// local m = math; m.floor(x): a local assigned once from the
		// global stands for it.
		init, ok := sh.l.globalAlias(b).(*ast.IdentExpr)
		return ok && init.Value == name
	}
	return id.Value == name
}

// callee is the function e calls, with a local assigned once from a
// global function or a library's field (local tn = tonumber, local floor
// = math.floor) replaced by what it was assigned, so that the number
// checks see through it.
func (sh *shaper) callee(e *ast.FuncCallExpr) *ast.FuncCallExpr {
	id, ok := e.Func.(*ast.IdentExpr)
	if !ok {
		return e
	}
	b := sh.l.resolved[id]
	if b == nil {
		return e
	}
	if init := sh.l.globalAlias(b); init != nil {
		c := *e
		c.Func = init
		return &c
	}
	return e
}

func one(v lval) lset { return lset{v} }

func unknown(line int) lset { return one(lval{kind: vUnknown, line: line}) }

func boolean(line int, what string) lset {
	return lset{{kind: vTrue, what: what, line: line}, {kind: vFalse, what: what, line: line}}
}

// eval returns every value e can have (its first value, for a call).
// Outside the evaluation of a local, an expression's values do not depend
// on where it is reached from, so they are kept: a product of 1,000
// factors is a number site at every level, and would otherwise be
// evaluated again at each.
func (sh *shaper) eval(e ast.Expr) lset {
	if sh.depth > 0 {
		return sh.evalExpr(e)
	}
	if v, ok := sh.exprMemo[e]; ok {
		return v
	}
	v := sh.evalExpr(e)
	if sh.exprMemo == nil {
		sh.exprMemo = map[ast.Expr]lset{}
	}
	sh.exprMemo[e] = v
	return v
}

func (sh *shaper) evalExpr(e ast.Expr) lset {
	line := e.Line()
	if sh.steps <= 0 {
		return unknown(line)
	}
	sh.steps--
	switch e := e.(type) {
	case *ast.NumberExpr:
		return one(number(e.Value, line))
	case *ast.StringExpr:
		return one(lval{kind: vStr, lit: e.Value, known: true, what: strconv.Quote(e.Value), line: line})
	case *ast.TrueExpr:
		return one(lval{kind: vTrue, what: "true", line: line})
	case *ast.FalseExpr:
		return one(lval{kind: vFalse, what: "false", line: line})
	case *ast.NilExpr:
		return one(lval{kind: vNil, what: "nil", line: line})
	case *ast.UnaryMinusOpExpr:
		if n, ok := e.Expr.(*ast.NumberExpr); ok {
			return one(number("-"+n.Value, line))
		}
		return sh.arith("-", one(lval{kind: vInt, lit: "0", known: true}), sh.eval(e.Expr), line)
	case *ast.ArithmeticOpExpr:
		rhs := sh.eval(e.Rhs)
		out := sh.arith(e.Operator, sh.eval(e.Lhs), rhs, line)
		if e.Operator == "/" || e.Operator == "%" {
			if hint := sh.zeroDivisor(e, e.Rhs, rhs, line); hint != "" {
				what := map[string]string{"/": "a division (/)", "%": "a remainder (%)"}[e.Operator]
				return one(lval{kind: vMaybeFrac, inexact: true, what: what + " by a caller's number that may be 0", line: line, hint: hint})
			}
		}
		return out
	case *ast.UnaryLenOpExpr:
		return one(lval{kind: vInt, what: "a length (#)", line: line})
	case *ast.StringConcatOpExpr:
		v := lval{kind: vStr, what: "a string built with ..", line: line}
		l := sh.eval(e.Lhs)
		if len(l) == 1 && l[0].kind == vStr && (l[0].known || l[0].prefix) {
			v.lit, v.prefix = l[0].lit, true
		}
		v.args = sh.textArgs(l) | sh.textArgs(sh.eval(e.Rhs))
		return one(v)
	case *ast.RelationalOpExpr:
		return boolean(line, "a comparison ("+e.Operator+")")
	case *ast.UnaryNotOpExpr:
		return boolean(line, "a not expression")
	case *ast.LogicalOpExpr:
		return sh.logical(e)
	case *ast.IdentExpr:
		b := sh.l.resolved[e]
		if b == nil {
			return unknown(line) // a global
		}
		var out lset
		for _, v := range sh.binding(b) {
			if v.kind == vArray { // a table in a variable may be changed before it is sent
				v = lval{kind: vUnknown, line: v.line}
			}
			out = append(out, v)
		}
		return out
	case *ast.AttrGetExpr:
		if k, ok := e.Key.(*ast.StringExpr); ok && k.Value == "huge" && sh.global(e.Object, "math") {
			return one(lval{kind: vMaybeFrac, inexact: true, what: "math.huge (inf)", line: line})
		}
		if (sh.global(e.Object, "KEYS") || sh.global(e.Object, "ARGV")) && e.Key != nil {
			argv := sh.global(e.Object, "ARGV")
			if n, ok := literalIndex(e.Key); ok {
				v := lval{kind: vStr, what: fmt.Sprintf("%s[%d]", e.Object.(*ast.IdentExpr).Value, n), line: line}
				if argv {
					v.argv = n
				}
				return one(v)
			}
			if argv {
				// ARGV[i]: the elements i can be, when the analysis knows
				// them (a helper's parameter that its calls pass literals).
				var out lset
				for _, k := range sh.eval(e.Key) {
					n, err := strconv.Atoi(k.lit)
					if k.kind != vInt || !k.known || err != nil {
						return one(lval{kind: vStr, what: "ARGV[...]", argv: -1, line: line})
					}
					out = append(out, lval{kind: vStr, what: fmt.Sprintf("ARGV[%d]", n), argv: n, line: line})
				}
				return out
			}
		}
	case *ast.TableExpr:
		return one(sh.table(e))
	case *ast.FuncCallExpr:
		return sh.call(e)
	}
	return unknown(line)
}

// maxExact is 2^53: every integer below it is a Lua 5.1 number (a double)
// exactly, and from it on a literal may already have been rounded
// (9007199254740993 is read as ...992).
const maxExact = 1 << 53

// number reads a number literal as Redis would send it.
func number(text string, line int) lval {
	f, ok := luaNumber(strings.TrimPrefix(text, "-"))
	if strings.HasPrefix(text, "-") {
		f = -f
	}
	switch {
	case !ok:
		return lval{kind: vNum, line: line}
	case math.IsNaN(f) || math.IsInf(f, 0) || math.Abs(f) >= maxExact:
		return lval{kind: vMaybeFrac, inexact: true, what: text, line: line}
	case f != math.Trunc(f):
		v := lval{kind: vFrac, lit: text, known: true, what: text, line: line, ranged: true, lo: f, hi: f, fbits: fracBits(f, text)}
		if v.fbits >= 53 {
			v.hint = fmt.Sprintf("multiply by an integer and divide last (x * 7 / 10 rather than x * 0.7): %s has no exact binary form, so a product meant to be whole may land just below it", text)
		}
		return v
	}
	n := strconv.FormatInt(int64(f), 10)
	return lval{kind: vInt, lit: n, known: true, what: n, line: line, ranged: true, lo: f, hi: f}
}

// arith is the value of an arithmetic operation. Lua arithmetic yields a
// number or raises an error, so the result is always a number; what is
// left to know is whether it is integral.
func (sh *shaper) arith(op string, a, b lset, line int) lset {
	what := map[string]string{"/": "a division (/)", "^": "a power (^)", "%": "a remainder (%)",
		"*": "a product (*)", "+": "a sum (+)", "-": "a difference (-)"}[op]
	if len(a) == 1 && len(b) == 1 && isNumLit(a[0]) && isNumLit(b[0]) {
		x, _ := luaNumber(a[0].lit)
		y, _ := luaNumber(b[0].lit)
		var r float64
		switch op {
		case "+":
			r = x + y
		case "-":
			r = x - y
		case "*":
			r = x * y
		case "/":
			r = x / y
		case "%":
			r = x - math.Floor(x/y)*y
		case "^":
			r = math.Pow(x, y)
		}
		text := strconv.FormatFloat(r, 'g', -1, 64)
		if math.IsNaN(r) || math.IsInf(r, 0) {
			return one(lval{kind: vMaybeFrac, inexact: true, what: text + " (" + what + " of literals)", line: line})
		}
		v := number(text, line)
		if v.kind == vFrac || v.inexact {
			v.what = text + " (" + what + " of literals)"
		}
		return one(v)
	}
	a, b = sh.coerce(a, line), sh.coerce(b, line)
	sa, sb := sh.numbers(a, line), sh.numbers(b, line)
	if v, ok := rangedArith(op, sa, sb, what, line); ok {
		return one(v)
	}
	args, text := sa.args|sb.args, sa.text || sb.text
	allInt, frac, inexact := true, false, op == "^"
	for _, v := range append(slices.Clone(a), b...) {
		switch v.kind {
		case vInt:
		case vFrac, vMaybeFrac:
			frac, allInt = true, false
			inexact = inexact || v.inexact
		default:
			allInt = false
		}
	}
	switch {
	case inexact:
		return one(lval{kind: vMaybeFrac, inexact: true, what: what, line: line, args: args, text: text, hint: cmp.Or(sa.hint, sb.hint)})
	case op == "/" || frac:
		return one(lval{kind: vMaybeFrac, what: what, line: line})
	case allInt && op != "^":
		return one(lval{kind: vInt, what: what, line: line})
	}
	return one(lval{kind: vNum, what: what, line: line})
}

// coerce turns the caller's strings among vs into the numbers Lua's
// arithmetic makes of them ("10" + 1 is 11).
func (sh *shaper) coerce(vs lset, line int) lset {
	out := make(lset, 0, len(vs))
	for _, v := range vs {
		if v.kind == vStr && v.argv != 0 {
			v = sh.argNumber(v.argv, line)
		}
		out = append(out, v)
	}
	return out
}

func isNumLit(v lval) bool { return (v.kind == vInt || v.kind == vFrac) && v.known }

// logical evaluates "a and b" and "a or b": Lua returns an operand, so
// the values are those of a that end the evaluation and those of b.
func (sh *shaper) logical(e *ast.LogicalOpExpr) lset {
	a := sh.eval(e.Lhs)
	var out lset
	goOn := false
	for _, v := range a {
		falsy := v.kind == vFalse || v.kind == vNil
		maybe := v.kind == vUnknown
		if e.Operator == "or" {
			if !falsy {
				out = append(out, v)
			}
			goOn = goOn || falsy || maybe
		} else {
			if falsy || maybe {
				out = append(out, v)
			}
			goOn = goOn || !falsy
		}
	}
	if goOn {
		out = append(out, sh.eval(e.Rhs)...)
	}
	return out
}

// binding is the union of every value assigned to b. A parameter, a loop
// variable, a local declared without a value or from a multi-value call
// is unknown.
func (sh *shaper) binding(b *binding) lset {
	if v, ok := sh.memo[b]; ok {
		return v
	}
	if b.argvElem && len(b.values) == 0 {
		return one(lval{kind: vStr, what: "an element of ARGV", argv: -1})
	}
	if f := b.forLoop; f != nil && !b.reassigned {
		return sh.forVar(b, f)
	}
	var loopBase lset
	if f := b.forLoop; f != nil {
		// for i = 1, n do i = i * 1000 ... end: what the loop gives it, and
		// what the body assigns (once an iteration).
		loopBase = sh.forVar(b, f)
	}
	if c := b.multi; c != nil && !b.reassigned && b.multiIndex > 0 && b.init == nil {
		// local ok, v = pcall(f, n): a later value of a call.
		if sh.busy[b] {
			return nil
		}
		sh.busy[b] = true
		sh.depth++
		out := sh.laterValue(c, b.multiIndex)
		sh.depth--
		sh.busy[b] = false
		sh.memo[b] = out
		return out
	}
	init := b.init
	if init == nil && b.multi != nil {
		init = b.multi // local a, b = f(...): a is the call's first value
	}
	if b.fixed != nil && init != nil && !b.reassigned && !b.bare {
		// local x = f(...): the call's first value (eval gives it).
		if _, ok := init.(*ast.FuncCallExpr); ok && b.param == nil {
			if sh.busy[b] {
				return nil
			}
			sh.busy[b] = true
			sh.depth++
			out := slices.Clone(sh.eval(init))
			sh.depth--
			sh.busy[b] = false
			for i := range out {
				if out[i].kind == vNil || out[i].kind == vFalse {
					// local id = storeJob(...); if not id then return -5 end:
					// the analysis does not follow that guard, so a nil or
					// false the call may give is data, as a GET's is.
					out[i].data = true
				}
			}
			sh.memo[b] = out
			return out
		}
	}
	if b.fixed != nil && b.forLoop == nil && len(b.later) == 0 {
		return unknown(0)
	}
	values := b.values
	if b.param != nil {
		passed, ok := sh.l.paramArgs(b)
		if !ok {
			return unknown(0)
		}
		values = append(passed, values...)
	}
	if sh.busy[b] {
		sh.cycled = true
		if sh.self != nil {
			sh.self[b] = true
		}
		if d := sh.busyAt[b]; d < sh.hit {
			sh.hit = d
		}
		return nil // a cycle adds nothing new
	}
	sh.busy[b] = true
	if sh.busyAt == nil {
		sh.busyAt = map[*binding]int{}
	}
	sh.busyAt[b] = sh.depth
	sh.depth++
	outer := sh.cycled
	sh.cycled = false
	var out lset
	if sh.self == nil {
		sh.self = map[*binding]bool{}
	}
	out = append(out, loopBase...)
	for _, lv := range b.later {
		for _, v := range sh.laterValue(lv.call, lv.index) {
			v.reassigned = true
			out = append(out, v)
		}
	}
	var once []ast.Expr // self-updates that run at most once: see below
	recursive := false  // a call passes the parameter b what it computed from b
	nPassed := len(values) - len(b.values)
	for i, e := range values {
		sh.self[b] = false
		hit := sh.hit
		sh.hit = math.MaxInt
		vs := sh.eval(e)
		// Back to a local evaluated above b, through another: b is on
		// that cycle (local t = x; x = t * 1000 reached from t).
		through := sh.hit < sh.busyAt[b] && !sh.self[b]
		sh.hit = min(hit, sh.hit)
		if i < nPassed && (sh.self[b] || through) {
			recursive = true
		}
		if sh.self[b] && b.runsOnce[e] {
			once = append(once, e)
			continue
		}
		if sh.self[b] || through {
			// x = x * 1000 in a loop, or local t = x; x = t * 1000: a
			// value computed from itself, again and again.
			vs = sh.selfUpdate(b, e, vs)
			if _, arith := e.(*ast.ArithmeticOpExpr); !arith && through && !b.runsOnce[e] {
				// acc = t in a closure, t computed from acc elsewhere: the
				// loop goes through arithmetic the analysis saw once.
				for _, v := range vs {
					if v.args != 0 && (v.kind == vInt || v.kind == vFrac || v.kind == vMaybeFrac || v.kind == vNum) {
						vs = append(vs, lval{kind: vMaybeFrac, inexact: true, line: e.Line(), args: v.args, text: v.text,
							what: fmt.Sprintf("%s, which is computed again and again from itself (through %s)", b.name, exprName(e))})
						break
					}
				}
			}
		}
		for _, v := range vs {
			v.reassigned = v.reassigned || len(values) > 1
			out = append(out, v)
		}
	}
	if len(once) > 8 || recursive && len(once) > 0 {
		// Too many to apply in every order: taken as updates that repeat.
		for _, e := range once {
			delete(sh.memo, b)
			sh.self[b] = false
			for _, v := range sh.selfUpdate(b, e, sh.eval(e)) {
				v.reassigned = true
				out = append(out, v)
			}
		}
		once = nil
	}
	if len(once) > 0 {
		// x = x * 1000 in the function that declares x and in no loop of
		// it (if unit == 's' then ttl = ttl * 1000 end) runs at most once a
		// call: k such updates apply at most k times, in any order, to
		// what x holds otherwise.
		cur := dedupe(out)
		for range once {
			sh.memo[b] = cur
			next := slices.Clone(cur)
			for _, e := range once {
				for _, v := range sh.eval(e) {
					v.reassigned = true
					next = append(next, v)
				}
			}
			cur = dedupe(next)
		}
		delete(sh.memo, b)
		out = cur
	}
	if len(values) == 0 && len(b.later) == 0 && b.forLoop == nil {
		out = unknown(0)
	}
	out = dedupe(out)
	sh.depth--
	if !sh.cycled || sh.depth == 0 {
		// A result computed inside a cycle may miss the values that
		// reach it through a binding still being evaluated; the
		// outermost one has seen them all.
		sh.memo[b] = out
	}
	sh.cycled = sh.cycled || outer
	sh.busy[b] = false
	return out
}

// selfUpdate is what a value e of b that reads b itself adds when e is
// arithmetic on b (x = x * 1000): the evaluation above saw b's other
// values only once, but such an assignment runs again and again (in a
// loop, a closure, a branch taken twice), so the result has no bound the
// analysis can see. A counter, x = x + y or x = x - y with y an integer
// that is a literal or bounded within ±2^20, a number the analysis trusts
// (a count the server returns) or one it cannot see (a loop variable, a
// table field: silent, as everywhere), stays an exact
// integer: a script would need 2^33 steps to leave 2^53. Anything else
// (a product, a quotient, a sum of caller's numbers bounded only by 2^53)
// is a number that may be inexact. Other values that read b (x =
// tonumber(x)) are what they evaluate to.
func (sh *shaper) selfUpdate(b *binding, e ast.Expr, vs lset) lset {
	a, ok := e.(*ast.ArithmeticOpExpr)
	if !ok {
		return vs
	}
	reads := func(x ast.Expr) bool {
		id, ok := x.(*ast.IdentExpr)
		if !ok {
			return false
		}
		c := sh.l.resolved[id]
		if c == b {
			return true
		}
		if c == nil || !sh.l.once(c) {
			return false
		}
		// local t = x; x = t + 1: t is x.
		init, ok := c.init.(*ast.IdentExpr)
		return ok && sh.l.resolved[init] == b
	}
	line := e.Line()
	if (a.Operator == "+" || a.Operator == "-") && (reads(a.Lhs) || reads(a.Rhs) && a.Operator == "+") {
		other := a.Rhs
		if reads(a.Rhs) {
			other = a.Lhs
		}
		small := true
		for _, v := range sh.eval(other) {
			switch {
			case v.kind == vUnknown:
				// What the analysis cannot see (a loop variable, a table
				// field) it stays silent about, as everywhere.
			case v.inexact || v.fbits > 0 || v.kind != vInt && v.kind != vNum:
				small = false
			case v.kind == vInt && v.known:
				if f, err := strconv.ParseFloat(v.lit, 64); err != nil || math.Abs(f) > 1<<20 {
					small = false
				}
			case v.ranged && (v.lo < -(1<<20) || v.hi > 1<<20):
				small = false
			}
		}
		if small {
			return append(vs, lval{kind: vNum, what: b.name + ", a counter", line: line})
		}
	}
	return append(vs, lval{kind: vMaybeFrac, inexact: true, line: line,
		what: fmt.Sprintf("%s, which %s = %s %s ... updates from itself, so without a bound the analysis can see", b.name, b.name, b.name, a.Operator)})
}

// table evaluates a table constructor.
func (sh *shaper) table(e *ast.TableExpr) lval {
	line := e.Line()
	var errV, okV ast.Expr
	resp3 := false
	arr := lval{kind: vArray, what: "a table", line: line}
	for i, f := range e.Fields {
		if f.Key == nil {
			if i == len(e.Fields)-1 && expands(f.Value) {
				if c, ok := f.Value.(*ast.FuncCallExpr); ok && (sh.l.redisCall(c) != "" || sh.oneValue(c)) {
					arr.elems = append(arr.elems, sh.eval(f.Value)) // exactly one value
				} else {
					arr.more = true
				}
				continue
			}
			ev := sh.eval(f.Value)
			if n := sh.tonumberOfText(f.Value); n != "" {
				ev = append(ev, lval{kind: vNil, what: "tonumber(" + n + "), nil when " + n + " is not a number", line: f.Value.Line(),
					hint: "write tonumber(" + n + ") or 0, or check it and return an error reply"})
			}
			arr.elems = append(arr.elems, ev)
			continue
		}
		k, ok := f.Key.(*ast.StringExpr)
		switch {
		case !ok:
			return lval{kind: vUnknown, line: line} // [expr] = v may fill the array part
		case k.Value == "err":
			errV = f.Value
		case k.Value == "ok":
			okV = f.Value
		case resp3Fields[k.Value]:
			resp3 = true
		}
	}
	switch {
	case errV != nil:
		return sh.message(vErr, errV, line)
	case resp3:
		return lval{kind: vUnknown, line: line}
	case okV != nil:
		return sh.message(vStatus, okV, line)
	}
	return arr
}

// tonumberOfText returns "ARGV[n]" when e is tonumber(ARGV[n]) and the
// ---@arg behind ARGV[n] is a string or []byte: the caller may send any
// text, and tonumber returns nil for one that is not a number. Arguments
// of number types are formatted by the generated code and always convert;
// tonumber of other values (stored data, locals) is assumed to succeed.
func (sh *shaper) tonumberOfText(e ast.Expr) string {
	c, ok := e.(*ast.FuncCallExpr)
	if !ok || !sh.global(c.Func, "tonumber") || len(c.Args) != 1 {
		return ""
	}
	a, ok := c.Args[0].(*ast.AttrGetExpr)
	if !ok || !sh.global(a.Object, "ARGV") || a.Key == nil {
		return ""
	}
	n, ok := literalIndex(a.Key)
	args := sh.l.s.Args
	if !ok || n < 1 || n > len(args) || args[n-1].Variadic {
		return ""
	}
	if t := args[n-1].Type; t.Shape != ShapeScalar || (t.Elem != String && t.Elem != Bytes) {
		return ""
	}
	return fmt.Sprintf("ARGV[%d]", n)
}

// expands reports whether e, last in a list, may give several values.
func expands(e ast.Expr) bool {
	switch e := e.(type) {
	case *ast.FuncCallExpr:
		return !e.AdjustRet
	case *ast.Comma3Expr:
		return true
	}
	return false
}

// message is an error or status reply whose text is e. Redis sends the
// table as an error or status only when the field is a string; the
// analysis keeps the message when it is a literal (or starts with one).
func (sh *shaper) message(kind vkind, e ast.Expr, line int) lval {
	v := lval{kind: kind, line: line, what: "an error reply"}
	if kind == vStatus {
		v.what = "a status reply"
	}
	if m := sh.eval(e); len(m) == 1 && m[0].kind == vStr {
		v.lit, v.known, v.prefix = m[0].lit, m[0].known, m[0].prefix
		if v.known {
			v.what += " " + strconv.Quote(v.lit)
		}
	}
	return v
}

// call evaluates a function call's first value.
func (sh *shaper) call(e *ast.FuncCallExpr) lset {
	line := e.Line()
	e = sh.callee(e)
	if fn := sh.l.redisCall(e); fn != "" {
		return sh.callReply(fn, e.Args, line)
	}
	if e.Receiver != nil {
		switch e.Method {
		case "upper", "lower", "rep", "sub", "reverse", "format":
			return one(lval{kind: vStr, what: "a string", line: line})
		}
		return sh.opaque(e, line)
	}
	if a, ok := e.Func.(*ast.AttrGetExpr); ok {
		k, _ := a.Key.(*ast.StringExpr)
		if k == nil {
			return sh.opaque(e, line)
		}
		if sh.global(a.Object, "bit") {
			// Lua BitOp works on 32-bit integers: what it gives is one.
			return one(lval{kind: vInt, ranged: true, lo: math.MinInt32, hi: math.MaxInt32, what: "bit." + k.Value, line: line})
		}
		switch {
		case sh.global(a.Object, "redis") && k.Value == "error_reply" && len(e.Args) == 1:
			return one(sh.message(vErr, e.Args[0], line))
		case sh.global(a.Object, "redis") && k.Value == "status_reply" && len(e.Args) == 1:
			return one(sh.message(vStatus, e.Args[0], line))
		case sh.global(a.Object, "math") && k.Value != "huge" && k.Value != "pi":
			return sh.mathCall(k.Value, e.Args, line)
		case sh.global(a.Object, "string") && slices.Contains([]string{"format", "rep", "sub", "upper", "lower", "reverse", "char"}, k.Value):
			// Text made from the caller's: tonumber of it is the caller's
			// number reshaped, which no ---@arg type bounds.
			var args uint64
			for _, x := range e.Args {
				args |= sh.textArgs(sh.eval(x))
			}
			return one(lval{kind: vStr, what: "a string", line: line, args: args})
		case sh.global(a.Object, "table") && k.Value == "concat",
			sh.global(a.Object, "cjson") && k.Value == "encode",
			sh.global(a.Object, "cmsgpack") && k.Value == "pack":
			return one(lval{kind: vStr, what: "a string", line: line})
		}
		for _, lib := range []string{"redis", "string", "table", "cjson", "cmsgpack", "struct", "os", "coroutine"} {
			if sh.global(a.Object, lib) {
				return unknown(line)
			}
		}
		return sh.opaque(e, line) // M.scale(x), a function in a table
	}
	switch {
	case sh.global(e.Func, "tonumber"):
		// nil when the text is not a number; assumed checked, since
		// scripts convert what they validated or stored themselves. The
		// caller's own text, ARGV[n], is the number its ---@arg type
		// bounds (see argNumber).
		if len(e.Args) == 1 {
			if a, ok := e.Args[0].(*ast.StringExpr); ok {
				if v := number(strings.TrimSpace(a.Value), line); v.kind != vNum {
					v.what = "tonumber('" + a.Value + "')"
					return one(v)
				}
				return one(lval{kind: vNum, what: "tonumber(...)", line: line})
			}
			var out lset
			for _, v := range sh.eval(e.Args[0]) {
				switch v.kind {
				case vStr:
					switch {
					case v.argv != 0:
						v = sh.argNumber(v.argv, line)
					case v.args != 0:
						v = lval{kind: vMaybeFrac, inexact: true, text: true, args: v.args, what: "tonumber of text made from the caller's (ARGV[1] .. '000', ARGV[1]:sub(...))", line: line,
							hint: "convert the caller's number itself (tonumber(ARGV[n])) and compute with it, so that its ---@arg type bounds it"}
					default:
						v = lval{kind: vNum, what: "tonumber(...)", line: line}
					}
				case vInt, vFrac, vMaybeFrac, vNum:
				default:
					v = lval{kind: vNum, what: "tonumber(...)", line: line}
				}
				out = append(out, v)
			}
			return out
		}
		if len(e.Args) == 2 {
			if n, ok := e.Args[1].(*ast.NumberExpr); ok && strings.TrimSpace(n.Value) == "10" {
				return sh.eval(&ast.FuncCallExpr{Func: e.Func, Args: e.Args[:1]})
			}
			// The caller's text read in another base: its ---@arg type
			// bounds the decimal number the method sends, not this one
			// (an int64 1000 sent as "1000" is 4096 in base 16).
			var out lset
			for _, v := range sh.eval(e.Args[0]) {
				if v.kind == vStr && v.argv != 0 {
					a := sh.argNumber(v.argv, line)
					what := "tonumber(ARGV[...], base)"
					if v.argv > 0 {
						what = fmt.Sprintf("tonumber(ARGV[%d], base)", v.argv)
					}
					out = append(out, lval{kind: vMaybeFrac, inexact: true, what: what, line: line, args: a.args, text: true,
						hint: "read the caller's number with tonumber(x) (base 10), the number its ---@arg type bounds, or keep it within ±2^53 yourself"})
				}
			}
			if out != nil {
				return out
			}
		}
		return one(lval{kind: vNum, what: "tonumber(...)", line: line})
	case sh.global(e.Func, "tostring"):
		return one(lval{kind: vStr, what: "tostring(...)", line: line})
	}
	if id, ok := e.Func.(*ast.IdentExpr); ok {
		if b := sh.l.resolved[id]; b != nil && !sh.l.escaped[b] {
			if fe := localFunc(b); fe != nil {
				return sh.fnResult(fe, line)
			}
		}
		if b := sh.l.resolved[id]; b == nil && (id.Value == "type" || id.Value == "select" && len(e.Args) > 0 && isWord(e.Args[0], "#")) {
			return unknown(line) // type(x) is text, select('#', ...) a count
		}
	}
	return sh.opaque(e, line)
}

// opaque is what a call the analysis cannot see into gives: unknown, as
// everywhere, unless it is given the caller's numbers (a function in a
// table, a method, one reassigned or passed through pcall, select(2,
// ...)): then a number nothing bounds, which is reported where it may go
// wrong, so that the generated method's check is not trusted for what
// such a call makes of it.
func (sh *shaper) opaque(e *ast.FuncCallExpr, line int) lset {
	var args uint64
	text := false
	exprs := e.Args
	if e.Receiver != nil {
		exprs = append([]ast.Expr{e.Receiver}, exprs...)
	}
	for _, x := range exprs {
		if _, ok := x.(*ast.FunctionExpr); ok {
			continue
		}
		for _, v := range sh.eval(x) {
			switch v.kind {
			case vInt, vFrac, vMaybeFrac, vNum:
				args |= v.args
				text = text || v.text
			}
		}
	}
	if args == 0 {
		return unknown(line)
	}
	return one(lval{kind: vMaybeFrac, inexact: true, what: "what a call the analysis cannot follow makes of the caller's number", line: line, args: args, text: text,
		hint: "compute with the caller's number in the script itself or in a local function called directly, which the analysis follows"})
}

// fnResult is every first value a local function's returns can give:
// the analysis follows helpers the script only calls (their parameters
// take what the calls pass; see paramArgs), whatever the call.
// laterValue is the i-th value (from 0) of the call c, for i > 0: the
// i-th expression of the returns of a local function called directly,
// else what an opaque call makes of the caller's numbers (see opaque).
func (sh *shaper) laterValue(c *ast.FuncCallExpr, i int) lset {
	return sh.laterValueAt(c, i, 0)
}

// laterValueAt is laterValue through depth tail calls; the 0-th value of
// a call is eval's.
func (sh *shaper) laterValueAt(c *ast.FuncCallExpr, i, depth int) lset {
	if i == 0 {
		return sh.eval(c)
	}
	line := c.Line()
	if id, ok := c.Func.(*ast.IdentExpr); ok {
		if b := sh.l.resolved[id]; b != nil && !sh.l.escaped[b] {
			if fe := localFunc(b); fe != nil {
				var out lset
				eachReturn(fe.Stmts, func(st *ast.ReturnStmt) {
					switch n := len(st.Exprs); {
					case i < n-1 || i == n-1 && !multi(st.Exprs[i]):
						out = append(out, sh.eval(st.Exprs[i])...)
					case n > 0 && multi(st.Exprs[n-1]):
						// return g(x): the tail call's value at the same place.
						if c, ok := st.Exprs[n-1].(*ast.FuncCallExpr); ok && depth < 8 {
							out = append(out, sh.laterValueAt(c, i-(n-1), depth+1)...)
						} else {
							out = append(out, lval{kind: vUnknown, line: st.Line()})
						}
					default:
						out = append(out, lval{kind: vNil, what: "a missing return value (nil)", line: st.Line(), data: true})
					}
				})
				if out == nil {
					return unknown(line)
				}
				return out
			}
		}
	}
	if sh.l.redisCall(c) != "" {
		return unknown(line)
	}
	return sh.opaque(c, line)
}

func (sh *shaper) fnResult(fe *ast.FunctionExpr, line int) lset {
	if v, ok := sh.fnMemo[fe]; ok {
		return v
	}
	if sh.fnBusy[fe] {
		return nil // a recursion adds nothing new
	}
	sh.fnBusy[fe] = true
	var out lset
	eachReturn(fe.Stmts, func(st *ast.ReturnStmt) {
		if len(st.Exprs) == 0 {
			out = append(out, lval{kind: vNil, what: "an empty return (nil)", line: st.Line()})
		} else {
			out = append(out, sh.eval(st.Exprs[0])...)
		}
	})
	if !(len(fe.Stmts) > 0 && isReturn(fe.Stmts[len(fe.Stmts)-1])) {
		// Counted, never reported: the analysis does not tell a block
		// that always returns (if ... else return) from one that may end.
		out = append(out, lval{kind: vNil, what: "a function's end (nil)", line: line, reassigned: true})
	}
	sh.fnBusy[fe] = false
	sh.fnMemo[fe] = out
	return out
}

func isReturn(st ast.Stmt) bool {
	_, ok := st.(*ast.ReturnStmt)
	return ok
}

// callReply is what redis.call or redis.pcall returns to Lua for a
// command the analysis knows.
func (sh *shaper) callReply(fn string, args []ast.Expr, line int) lset {
	name, _, _ := commandOf(args)
	var out lset
	if fn == "redis.pcall" {
		out = append(out, lval{kind: vErr, what: "a redis.pcall error", line: line})
	}
	what := "a " + strings.ToUpper(name) + " reply"
	str := lval{kind: vStr, what: what, line: line}
	fls := lval{kind: vFalse, what: what + " (false for a nil reply)", line: line, data: true}
	literalArgs := func() bool {
		for _, a := range args {
			if _, ok := a.(*ast.StringExpr); !ok {
				if _, ok := a.(*ast.NumberExpr); !ok && !sh.isKeysOrArgv(a) {
					return false
				}
			}
		}
		return !expands(args[len(args)-1]) || len(args) == 0
	}
	// withOption is the reply of a command that sends pairs when word is
	// among its arguments from index from on, and single strings when not.
	withOption := func(word string, from int) lset {
		switch sh.optionWord(args, word, from) {
		case optYes:
			return append(out, lval{kind: vArray, what: what + " " + strings.ToUpper(word), line: line, each: one(elem(str)), pairs: true})
		case optNo:
			return append(out, lval{kind: vArray, what: what, line: line, each: one(elem(str))})
		}
		return unknown(line)
	}
	switch {
	case name == "set" && len(args) == 3 && literalArgs():
		return append(out, lval{kind: vStatus, lit: "OK", known: true, what: "a SET reply (status OK)", line: line})
	case (name == "zrank" || name == "zrevrank") && len(args) == 3:
		return append(out, lval{kind: vInt, what: what, line: line}, fls)
	case (name == "lpop" || name == "rpop" || name == "spop") && len(args) == 2:
		return append(out, str, fls)
	case name == "zrank" || name == "zrevrank":
		return unknown(line)
	case name == "zrange" || name == "zrevrange" || name == "zrangebyscore" || name == "zrevrangebyscore":
		return withOption("withscores", 4)
	case name == "hrandfield" && len(args) == 2:
		return append(out, str, fls)
	case name == "hrandfield":
		return withOption("withvalues", 3)
	}
	switch commandReplies[name] {
	case replyInt:
		out = append(out, lval{kind: vInt, what: what, line: line})
	case replyStrOrFalse:
		out = append(out, str, fls)
	case replyStr:
		out = append(out, str)
	case replyArray:
		out = append(out, lval{kind: vArray, what: what, line: line, each: one(elem(str))})
	case replyArrayOrNils:
		out = append(out, lval{kind: vArray, what: what, line: line, each: lset{elem(str), fls}})
	case replyPairs:
		out = append(out, lval{kind: vArray, what: what, line: line, each: one(elem(str)), pairs: true})
	case replyInts:
		out = append(out, lval{kind: vArray, what: what, line: line, each: one(elem(lval{kind: vInt, what: what, line: line}))})
	case replyStatus:
		out = append(out, lval{kind: vStatus, what: what + " (a status)", line: line})
	default:
		return unknown(line)
	}
	return out
}

// elem names v as an element of the reply it is part of.
func elem(v lval) lval {
	v.what = "an element of " + v.what
	return v
}

// option is whether a command call carries an option word.
type option uint8

const (
	optUnsure option = iota // an argument the analysis cannot read may be the word
	optYes
	optNo
)

// optionWord reports whether the literal word (case does not matter) is
// among the arguments of a call from index from on (args[0] is the
// command name). An argument the analysis cannot read there (ARGV[n], a
// variable, a call), or one that expands to several anywhere, may be the
// word: then the answer is optUnsure, unless the word is written out.
func (sh *shaper) optionWord(args []ast.Expr, word string, from int) option {
	res := optNo
	for i, a := range args {
		switch a := a.(type) {
		case *ast.StringExpr:
			if i >= from && strings.EqualFold(a.Value, word) {
				return optYes
			}
		case *ast.NumberExpr:
		default:
			if i >= from || i == len(args)-1 && expands(a) {
				res = optUnsure
			}
		}
	}
	return res
}

// isKeysOrArgv reports whether e is KEYS[n] or ARGV[n]: a string, never a
// word that changes a command's reply.
func (sh *shaper) isKeysOrArgv(e ast.Expr) bool {
	a, ok := e.(*ast.AttrGetExpr)
	return ok && (sh.global(a.Object, "KEYS") || sh.global(a.Object, "ARGV"))
}

// --- walking the script ---

// replySite is a return of the main chunk, or a place that builds an
// error or status reply.
type replySite struct {
	ret  *ast.ReturnStmt
	pos  Pos
	expr ast.Expr // the error message of an error_reply / {err=...} site
	kind vkind
}

// numSite is an expression the number checks evaluate: one that turns the
// caller's text into a number (tonumber, arithmetic, math.*, a numeric
// string.format specifier), so that the conversion is recorded, or, with
// text set, a value written as text (how names the conversion).
type numSite struct {
	expr   ast.Expr
	pos    Pos
	text   bool
	coerce bool // the value is converted as string.format('%d') does
	how    string
	// conv is the string.format conversion that writes the number ('d',
	// 'g', 'f', ...; 0 for tostring's %.14g) and prec its precision (-1:
	// the default).
	conv byte
	prec int
}

var (
	reConcat   = regexp.MustCompile(`\.\.`)
	reToString = regexp.MustCompile(`\btostring\b`)
	reFormat   = regexp.MustCompile(`\bformat\b`)
	reEncode   = regexp.MustCompile(`\bencode\b`)
	reConcatFn = regexp.MustCompile(`\bconcat\b`)
	// reSpec matches a string.format specifier, capturing its conversion.
	reSpec = regexp.MustCompile(`%[-+ #0]*[0-9]*(\.[0-9]*)?([a-zA-Z%])`)
)

// formatSites records the number sites of string.format(format, args...):
// each conversion's argument, in order.
func (w *replyWalk) formatSites(format string, args []ast.Expr, p Pos) {
	i := 0
	for _, m := range reSpec.FindAllStringSubmatch(format, -1) {
		if m[2] == "%" {
			continue
		}
		if i >= len(args) {
			break
		}
		prec := -1
		if m[1] != "" {
			prec, _ = strconv.Atoi(m[1][1:]) // "." alone is 0
		}
		switch c := m[2][0]; c {
		case 's':
			w.numSites = append(w.numSites, numSite{expr: args[i], pos: p, text: true, how: "string.format's %s"})
		case 'q':
		case 'd', 'i', 'u', 'c', 'o', 'x', 'X', 'e', 'E', 'f', 'g', 'G':
			w.numSites = append(w.numSites, numSite{expr: args[i], coerce: true, pos: p, text: true, how: "string.format's %" + string(c), conv: c, prec: prec})
		default:
			w.numSites = append(w.numSites, numSite{expr: args[i], coerce: true})
		}
		i++
	}
}

// numberSites records the number sites of e (see numSite).
func (w *replyWalk) numberSites(e ast.Expr) {
	sh := w.sh
	switch e := e.(type) {
	case *ast.ArithmeticOpExpr, *ast.UnaryMinusOpExpr:
		w.numSites = append(w.numSites, numSite{expr: e})
	case *ast.StringConcatOpExpr:
		p := w.l.loc.find(e.Line(), reConcat)
		for _, x := range []ast.Expr{e.Lhs, e.Rhs} {
			if _, ok := x.(*ast.StringConcatOpExpr); !ok {
				w.numSites = append(w.numSites, numSite{expr: x, pos: p, text: true, how: "Lua's .."})
			}
		}
	case *ast.FuncCallExpr:
		written := e // as the source writes it, for positions
		e = sh.callee(e)
		if f, ok := w.l.stringValue(e.Receiver); ok && e.Method == "format" {
			w.formatSites(f, e.Args, w.l.loc.find(e.Line(), reFormat)) // ("%d"):format(x), fmt:format(x)
		}
		if fn := w.l.redisCall(e); fn != "" && len(e.Args) > 1 {
			// Redis writes a number argument with %.17g: exact for every
			// double, but past 2^53 the double is not the integer the
			// script computed, and from 1e17 on the text has an exponent
			// (1e+17), which INCRBY and friends refuse.
			p := w.l.loc.find(e.Line(), w.l.callRe(written))
			for _, x := range e.Args[1:] {
				w.numSites = append(w.numSites, numSite{expr: x, pos: p, text: true, how: fn + "'s argument", conv: 'r'})
			}
		}
		switch a, _ := e.Func.(*ast.AttrGetExpr); {
		case sh.global(e.Func, "tonumber"):
			w.numSites = append(w.numSites, numSite{expr: e})
		case sh.global(e.Func, "tostring") && len(e.Args) == 1:
			w.numSites = append(w.numSites, numSite{expr: e.Args[0], pos: w.l.loc.find(e.Line(), reToString), text: true, how: "tostring"})
		case a != nil && sh.global(a.Object, "math"):
			w.numSites = append(w.numSites, numSite{expr: e})
		case a != nil && sh.global(a.Object, "string") && isWord(a.Key, "format") && len(e.Args) > 0:
			if f, ok := w.l.stringValue(e.Args[0]); ok {
				w.formatSites(f, e.Args[1:], w.l.loc.find(e.Line(), reFormat))
			}
		case a != nil && sh.global(a.Object, "table") && isWord(a.Key, "concat") && len(e.Args) > 0:
			// table.concat writes numbers as .. does (%.14g).
			if t, ok := e.Args[0].(*ast.TableExpr); ok {
				p := w.l.loc.find(e.Line(), reConcatFn)
				for _, f := range t.Fields {
					w.numSites = append(w.numSites, numSite{expr: f.Value, pos: p, text: true, how: "table.concat"})
				}
			}
		case a != nil && sh.global(a.Object, "cjson") && isWord(a.Key, "encode") && len(e.Args) == 1:
			p := w.l.loc.find(e.Line(), reEncode)
			xs := []ast.Expr{e.Args[0]}
			if t, ok := e.Args[0].(*ast.TableExpr); ok {
				xs = xs[:0]
				for _, f := range t.Fields {
					xs = append(xs, f.Value)
				}
			}
			for _, x := range xs {
				w.numSites = append(w.numSites, numSite{expr: x, pos: p, text: true, how: "cjson.encode"})
			}
		}
	}
}

// replyWalk holds the hooks of the walk (luaWalk) that finds the reply
// sites; the walk meets constructs in source order, and so looks each up
// in the locator in that order (see locator).
type replyWalk struct {
	l     *linter
	sh    *shaper
	depth int // functions the walk is in: 0 in the main chunk
	sites []replySite
	// numSites are the places that turn a value into a number (for the
	// generated method's checks) or a number into text (checkText).
	numSites []numSite
	raises   bool // error(...), assert or redis.call appear: errors of any code may be raised
	resp3    bool // redis.setresp appears: replies follow RESP3 rules the analysis does not model
}

// walk finds the reply sites of chunk, the main chunk.
func (w *replyWalk) walk(chunk []ast.Stmt) {
	lw := &luaWalk{stmt: w.stmt, expr: w.expr, field: w.field, open: w.open, close: w.close}
	lw.stmts(chunk)
}

func (w *replyWalk) stmt(st ast.Stmt) bool {
	if st, ok := st.(*ast.ReturnStmt); ok {
		p := w.l.loc.find(st.Line(), reReturnExpr)
		if w.depth == 0 {
			w.sites = append(w.sites, replySite{ret: st, pos: p})
		}
	}
	return true
}

func (w *replyWalk) open(owner ast.PositionHolder) {
	if _, ok := owner.(*ast.FunctionExpr); ok {
		w.depth++
	}
}

func (w *replyWalk) close(owner ast.PositionHolder) {
	if _, ok := owner.(*ast.FunctionExpr); ok {
		w.depth--
	}
}

func (w *replyWalk) expr(e ast.Expr) bool {
	sh := w.sh
	w.numberSites(e)
	c, ok := e.(*ast.FuncCallExpr)
	if !ok {
		return true
	}
	if a, ok := c.Func.(*ast.AttrGetExpr); ok && sh.global(a.Object, "redis") {
		if k, ok := a.Key.(*ast.StringExpr); ok {
			switch {
			case k.Value == "error_reply" && len(c.Args) == 1:
				w.sites = append(w.sites, replySite{pos: w.l.loc.find(c.Line(), reErrorReply), expr: c.Args[0], kind: vErr})
			case k.Value == "status_reply":
				w.l.loc.find(c.Line(), reStatusReply) // keep the count of this line's matches
			case k.Value == "setresp":
				w.resp3 = true
			}
		}
	}
	if sh.global(c.Func, "error") || sh.global(c.Func, "assert") || w.l.redisCall(c) == "redis.call" {
		w.raises = true
	}
	return true
}

// field records an {err = ...} table field as an error reply site.
func (w *replyWalk) field(f *ast.Field) {
	if k, ok := f.Key.(*ast.StringExpr); ok && k.Value == "err" {
		w.sites = append(w.sites, replySite{pos: w.l.loc.find(f.Value.Line(), reErrField), expr: f.Value, kind: vErr})
	}
}

// mayFallOff reports whether the main chunk may end without a return,
// which sends a nil reply. Only a return as the last statement is
// certain; anything else counts as falling off.
func mayFallOff(chunk []ast.Stmt) bool {
	if len(chunk) == 0 {
		return true
	}
	_, ok := chunk[len(chunk)-1].(*ast.ReturnStmt)
	return !ok
}

// oneValue reports a call of a library function that returns exactly one
// value (math.floor, tonumber, string.format, ...), so that it ends a
// table constructor as one element.
func (sh *shaper) oneValue(c *ast.FuncCallExpr) bool {
	c = sh.callee(c)
	if c.Receiver != nil {
		return false
	}
	if sh.global(c.Func, "tonumber") || sh.global(c.Func, "tostring") {
		return true
	}
	a, ok := c.Func.(*ast.AttrGetExpr)
	if !ok {
		return false
	}
	k, ok := a.Key.(*ast.StringExpr)
	if !ok {
		return false
	}
	switch {
	case sh.global(a.Object, "math"):
		return k.Value != "modf" && k.Value != "frexp"
	case sh.global(a.Object, "string"):
		return k.Value == "format" || k.Value == "rep" || k.Value == "sub" || k.Value == "upper" || k.Value == "lower" || k.Value == "reverse" || k.Value == "char"
	}
	return false
}

// textArgs are the ---@arg positions whose caller's text, or number, vs
// are made from: ARGV[n] itself, or text built from it.
func (sh *shaper) textArgs(vs lset) uint64 {
	var args uint64
	for _, v := range vs {
		switch {
		case v.kind == vStr && v.argv > 0 && v.argv <= 64:
			args |= 1 << (v.argv - 1)
		case v.kind == vStr && v.argv < 0:
			args |= ^uint64(0) >> (64 - min(len(sh.l.s.Args), 64))
		default:
			args |= v.args
		}
	}
	return args
}

// exprName is how a message names a short expression: the local's name.
func exprName(e ast.Expr) string {
	if id, ok := e.(*ast.IdentExpr); ok {
		return "local " + id.Value
	}
	return "an expression"
}

// eachReturn calls fn for each return statement of a function body ss,
// in blocks at any depth but not in functions defined inside it.
func eachReturn(ss []ast.Stmt, fn func(*ast.ReturnStmt)) {
	for _, st := range ss {
		switch st := st.(type) {
		case *ast.ReturnStmt:
			fn(st)
		case *ast.IfStmt:
			eachReturn(st.Then, fn)
			eachReturn(st.Else, fn)
		case *ast.DoBlockStmt:
			eachReturn(st.Stmts, fn)
		case *ast.WhileStmt:
			eachReturn(st.Stmts, fn)
		case *ast.RepeatStmt:
			eachReturn(st.Stmts, fn)
		case *ast.NumberForStmt:
			eachReturn(st.Stmts, fn)
		case *ast.GenericForStmt:
			eachReturn(st.Stmts, fn)
		}
	}
}
