// Commands from https://redis.io/commands/?group=string

package luatest

import (
	"math"
	"math/big"
	"strconv"
	"strings"

	"github.com/luagen/luagen/luatest/resp"
)

var stringCommands = []*command{
	{name: "get", fn: cmdGet},
	{name: "set", fn: cmdSet},
	{name: "setnx", fn: cmdSetnx},
	{name: "setex", fn: cmdSetex},
	{name: "psetex", fn: cmdSetex},
	{name: "getset", fn: cmdGetset},
	{name: "getdel", fn: cmdGetdel},
	{name: "getex", fn: cmdGetex},
	{name: "mget", fn: cmdMget},
	{name: "mset", fn: cmdMset},
	{name: "msetnx", fn: cmdMset},
	{name: "incr", fn: cmdIncr},
	{name: "decr", fn: cmdIncr},
	{name: "incrby", fn: cmdIncr},
	{name: "decrby", fn: cmdIncr},
	{name: "incrbyfloat", fn: cmdIncrbyfloat},
	{name: "append", fn: cmdAppend},
	{name: "strlen", fn: cmdStrlen},
	{name: "getrange", fn: cmdGetrange},
	{name: "substr", fn: cmdGetrange},
	{name: "setrange", fn: cmdSetrange},
	{name: "lcs", fn: cmdLcs},
}

// getString returns key's string value; wrong is true for another type.
func (c *cmdCtx) getString(key string) (v string, found, wrong bool) {
	e, wrong := c.r.lookupType(key, typeString)
	if e == nil {
		return "", false, wrong
	}
	return e.str, true, false
}

// GET key — https://redis.io/commands/get/
func cmdGet(c *cmdCtx, args []string) resp.Reply {
	v, ok, wrong := c.getString(args[0])
	switch {
	case wrong:
		return errWrongType
	case !ok:
		return resp.NilReply
	}
	return resp.BulkReply(v)
}

// expireOpts are the expiry options SET and GETEX share
// (parseExtendedStringArgumentsOrReply in t_string.c).
type expireOpts struct {
	unit    string // "EX", "PX", "EXAT", "PXAT" or ""
	value   string
	keepTTL bool
	persist bool
}

// SET key value [NX | XX] [GET] [EX s | PX ms | EXAT ts | PXAT ts-ms | KEEPTTL]
// — https://redis.io/commands/set/
func cmdSet(c *cmdCtx, args []string) resp.Reply {
	key, val := args[0], args[1]
	var nx, xx, get bool
	var ex expireOpts
	for i := 2; i < len(args); i++ {
		opt := strings.ToUpper(args[i])
		hasNext := i+1 < len(args)
		switch {
		case opt == "NX" && !xx:
			nx = true
		case opt == "XX" && !nx:
			xx = true
		case opt == "GET":
			get = true
		case opt == "KEEPTTL" && ex.unit == "":
			ex.keepTTL = true
		case (opt == "EX" || opt == "PX" || opt == "EXAT" || opt == "PXAT") && !ex.keepTTL &&
			(ex.unit == "" || ex.unit == opt) && hasNext:
			ex.unit, ex.value = opt, args[i+1]
			i++
		default:
			return errSyntax
		}
	}
	var at int64
	if ex.unit != "" {
		var errReply *resp.Reply
		if at, errReply = c.expireAt(ex); errReply != nil {
			return *errReply
		}
	}
	var old resp.Reply
	if get {
		if old = cmdGet(c, args[:1]); old.IsError() {
			return old
		}
	}
	found := c.r.lookup(key) != nil
	if (nx && found) || (xx && !found) {
		if get {
			return old
		}
		return resp.NilReply
	}
	c.r.setString(key, val, ex.keepTTL)
	if ex.unit != "" {
		c.r.db[key].expireAt = at
	}
	if get {
		return old
	}
	return resp.OK
}

// expireAt turns an EX/PX/EXAT/PXAT option into an absolute Unix ms time
// (getExpireMillisecondsOrReply): the value must be a positive integer and
// must not overflow when converted to milliseconds.
func (c *cmdCtx) expireAt(ex expireOpts) (int64, *resp.Reply) {
	n, ok := parseInt(ex.value)
	if !ok {
		return 0, &errNotInt
	}
	seconds := ex.unit == "EX" || ex.unit == "EXAT"
	if n <= 0 || (seconds && n > math.MaxInt64/1000) {
		e := c.errExpireTime()
		return 0, &e
	}
	if seconds {
		n *= 1000
	}
	if ex.unit == "EX" || ex.unit == "PX" {
		if n > math.MaxInt64-c.nowMs() {
			e := c.errExpireTime()
			return 0, &e
		}
		n += c.nowMs()
	}
	return n, nil
}

// SETNX key value — https://redis.io/commands/setnx/
func cmdSetnx(c *cmdCtx, args []string) resp.Reply {
	if c.r.lookup(args[0]) != nil {
		return resp.IntReply(0)
	}
	c.r.setString(args[0], args[1], false)
	return resp.IntReply(1)
}

// SETEX key seconds value — https://redis.io/commands/setex/
// PSETEX key milliseconds value — https://redis.io/commands/psetex/
func cmdSetex(c *cmdCtx, args []string) resp.Reply {
	unit := "EX"
	if c.name == "psetex" {
		unit = "PX"
	}
	at, errReply := c.expireAt(expireOpts{unit: unit, value: args[1]})
	if errReply != nil {
		return *errReply
	}
	c.r.setString(args[0], args[2], false)
	c.r.db[args[0]].expireAt = at
	return resp.OK
}

// GETSET key value — https://redis.io/commands/getset/
func cmdGetset(c *cmdCtx, args []string) resp.Reply {
	old := cmdGet(c, args[:1])
	if old.IsError() {
		return old
	}
	c.r.setString(args[0], args[1], false)
	return old
}

// GETDEL key — https://redis.io/commands/getdel/
func cmdGetdel(c *cmdCtx, args []string) resp.Reply {
	old := cmdGet(c, args[:1])
	if old.Kind == resp.Bulk {
		c.r.del(args[0])
	}
	return old
}

// GETEX key [EX s | PX ms | EXAT ts | PXAT ts-ms | PERSIST]
// — https://redis.io/commands/getex/
func cmdGetex(c *cmdCtx, args []string) resp.Reply {
	var ex expireOpts
	for i := 1; i < len(args); i++ {
		opt := strings.ToUpper(args[i])
		switch {
		case opt == "PERSIST" && ex.unit == "":
			ex.persist = true
		case (opt == "EX" || opt == "PX" || opt == "EXAT" || opt == "PXAT") && !ex.persist &&
			(ex.unit == "" || ex.unit == opt) && i+1 < len(args):
			ex.unit, ex.value = opt, args[i+1]
			i++
		default:
			return errSyntax
		}
	}
	// The key comes before the expire time's value (getexCommand): a
	// missing key answers nil whatever EX's argument.
	e, wrong := c.r.lookupType(args[0], typeString)
	if wrong {
		return errWrongType
	}
	if e == nil {
		return resp.NilReply
	}
	var at int64
	if ex.unit != "" {
		var errReply *resp.Reply
		if at, errReply = c.expireAt(ex); errReply != nil {
			return *errReply
		}
	}
	switch {
	case ex.persist:
		e.expireAt = 0
	case ex.unit != "":
		if at <= c.nowMs() {
			// An expire time in the past deletes the key (GETEX, t_string.c).
			c.r.del(args[0])
		} else {
			e.expireAt = at
		}
	}
	return resp.BulkReply(e.str)
}

// MGET key [key ...] — https://redis.io/commands/mget/
func cmdMget(c *cmdCtx, args []string) resp.Reply {
	out := make([]resp.Reply, len(args))
	for i, k := range args {
		if v, ok, _ := c.getString(k); ok {
			out[i] = resp.BulkReply(v)
		}
	}
	return resp.ArrayReply(out...)
}

// MSET key value [key value ...] — https://redis.io/commands/mset/
// MSETNX key value [key value ...] — https://redis.io/commands/msetnx/
func cmdMset(c *cmdCtx, args []string) resp.Reply {
	if len(args)%2 != 0 {
		return errArity(c.name)
	}
	if c.name == "msetnx" {
		for i := 0; i < len(args); i += 2 {
			if c.r.lookup(args[i]) != nil {
				return resp.IntReply(0)
			}
		}
	}
	for i := 0; i < len(args); i += 2 {
		c.r.setString(args[i], args[i+1], false)
	}
	if c.name == "msetnx" {
		return resp.IntReply(1)
	}
	return resp.OK
}

// INCR key, DECR key, INCRBY key increment, DECRBY key decrement
// — https://redis.io/commands/incr/ and friends. The value keeps its TTL.
func cmdIncr(c *cmdCtx, args []string) resp.Reply {
	var by int64 = 1
	switch c.name {
	case "decr":
		by = -1
	case "incrby", "decrby":
		n, ok := parseInt(args[1])
		if !ok {
			return errNotInt
		}
		if c.name == "decrby" {
			if n == math.MinInt64 {
				return resp.ErrorReply("ERR decrement would overflow")
			}
			n = -n
		}
		by = n
	}
	v, found, wrong := c.getString(args[0])
	if wrong {
		return errWrongType
	}
	var cur int64
	if found {
		var ok bool
		if cur, ok = parseInt(v); !ok {
			return errNotInt
		}
	}
	if (by < 0 && cur < 0 && by < math.MinInt64-cur) || (by > 0 && cur > 0 && by > math.MaxInt64-cur) {
		return errOverflow
	}
	cur += by
	c.r.setString(args[0], strconv.FormatInt(cur, 10), true)
	return resp.IntReply(cur)
}

// INCRBYFLOAT key increment — https://redis.io/commands/incrbyfloat/
// Computed in long double precision and printed with "%.17Lf" (trailing
// zeros removed), as Redis does on x86-64.
func cmdIncrbyfloat(c *cmdCtx, args []string) resp.Reply {
	v, found, wrong := c.getString(args[0])
	if wrong {
		return errWrongType
	}
	cur := new(big.Float).SetPrec(64)
	if found {
		var ok bool
		if cur, ok = parseLongDouble(v); !ok {
			return errNotFloat
		}
	}
	by, ok := parseLongDouble(args[1])
	if !ok {
		return errNotFloat
	}
	sum, ok := addLongDouble(cur, by)
	if !ok {
		return errNaNOrInfinity
	}
	s := formatLongDouble(sum)
	c.r.setString(args[0], s, true)
	c.r.db[args[0]].noInt = true
	return resp.BulkReply(s)
}

// APPEND key value — https://redis.io/commands/append/
func cmdAppend(c *cmdCtx, args []string) resp.Reply {
	v, found, wrong := c.getString(args[0])
	if wrong {
		return errWrongType
	}
	v += args[1]
	c.r.setString(args[0], v, true)
	c.r.db[args[0]].raw = found // appended in place: the server's "raw" encoding
	return resp.IntReply(int64(len(v)))
}

// STRLEN key — https://redis.io/commands/strlen/
func cmdStrlen(c *cmdCtx, args []string) resp.Reply {
	v, _, wrong := c.getString(args[0])
	if wrong {
		return errWrongType
	}
	return resp.IntReply(int64(len(v)))
}

// GETRANGE key start end — https://redis.io/commands/getrange/
func cmdGetrange(c *cmdCtx, args []string) resp.Reply {
	start, ok1 := parseInt(args[1])
	end, ok2 := parseInt(args[2])
	if !ok1 || !ok2 {
		return errNotInt
	}
	v, _, wrong := c.getString(args[0])
	if wrong {
		return errWrongType
	}
	n := int64(len(v))
	// getrangeCommand: negative start and end both below zero, or start
	// past end, answer "".
	if start < 0 && end < 0 && start > end {
		return resp.BulkReply("")
	}
	if start < 0 {
		start += n
	}
	if end < 0 {
		end += n
	}
	start, end = max(start, 0), max(end, 0)
	if end >= n {
		end = n - 1
	}
	if start > end || n == 0 {
		return resp.BulkReply("")
	}
	return resp.BulkReply(v[start : end+1])
}

// SETRANGE key offset value — https://redis.io/commands/setrange/
func cmdSetrange(c *cmdCtx, args []string) resp.Reply {
	off, ok := parseInt(args[1])
	if !ok {
		return errNotInt
	}
	if off < 0 {
		return resp.ErrorReply("ERR offset is out of range")
	}
	v, found, wrong := c.getString(args[0])
	if wrong {
		return errWrongType
	}
	if args[2] == "" {
		return resp.IntReply(int64(len(v)))
	}
	if off+int64(len(args[2])) > 512*1024*1024 {
		return resp.ErrorReply("ERR string exceeds maximum allowed size (proto-max-bulk-len)")
	}
	b := []byte(v)
	if need := int(off) + len(args[2]); need > len(b) {
		b = append(b, make([]byte, need-len(b))...)
	}
	copy(b[off:], args[2])
	c.r.setString(args[0], string(b), found)
	c.r.db[args[0]].raw = true
	return resp.IntReply(int64(len(b)))
}

// LCS key1 key2 [LEN] [IDX] [MINMATCHLEN len] [WITHMATCHLEN] —
// https://redis.io/commands/lcs/ (lcsCommand in t_string.c, including the
// order in which it walks the table back and emits match ranges).
func cmdLcs(c *cmdCtx, args []string) resp.Reply {
	// The keys' types are checked before the options (lcsCommand).
	var strs [2]string
	for i, k := range args[:2] {
		e := c.r.lookup(k)
		if e != nil && e.kind != typeString {
			return resp.ErrorReply("ERR The specified keys must contain string values")
		}
		if e != nil {
			strs[i] = e.str
		}
	}
	var getLen, getIdx, withMatchLen bool
	var minMatch int64
	for i := 2; i < len(args); i++ {
		switch opt := strings.ToUpper(args[i]); {
		case opt == "IDX":
			getIdx = true
		case opt == "LEN":
			getLen = true
		case opt == "WITHMATCHLEN":
			withMatchLen = true
		case opt == "MINMATCHLEN" && i+1 < len(args):
			n, ok := parseInt(args[i+1])
			if !ok {
				return errNotInt
			}
			minMatch = max(n, 0)
			i++
		default:
			return errSyntax
		}
	}
	if getIdx && getLen {
		return resp.ErrorReply("ERR If you want both the length and indexes, please just use IDX.")
	}
	a, b := strs[0], strs[1]
	alen, blen := len(a), len(b)
	dp := make([]uint32, (alen+1)*(blen+1))
	at := func(i, j int) uint32 { return dp[i*(blen+1)+j] }
	for i := 1; i <= alen; i++ {
		for j := 1; j <= blen; j++ {
			if a[i-1] == b[j-1] {
				dp[i*(blen+1)+j] = at(i-1, j-1) + 1
			} else {
				dp[i*(blen+1)+j] = max(at(i-1, j), at(i, j-1))
			}
		}
	}
	idx := int(at(alen, blen))
	if getLen {
		return resp.IntReply(int64(idx))
	}
	result := make([]byte, idx)
	matches := []resp.Reply{}
	i, j := alen, blen
	aStart, aEnd, bStart, bEnd := alen, 0, 0, 0
	for i > 0 && j > 0 {
		emit := false
		if a[i-1] == b[j-1] {
			result[idx-1] = a[i-1]
			if aStart == alen {
				aStart, aEnd, bStart, bEnd = i-1, i-1, j-1, j-1
			} else if aStart == i && bStart == j {
				aStart--
				bStart--
			} else {
				emit = true
			}
			if aStart == 0 || bStart == 0 {
				emit = true
			}
			idx--
			i--
			j--
		} else {
			if at(i-1, j) > at(i, j-1) {
				i--
			} else {
				j--
			}
			if aStart != alen {
				emit = true
			}
		}
		if emit {
			matchLen := int64(aEnd - aStart + 1)
			if minMatch == 0 || matchLen >= minMatch {
				m := []resp.Reply{
					resp.ArrayReply(resp.IntReply(int64(aStart)), resp.IntReply(int64(aEnd))),
					resp.ArrayReply(resp.IntReply(int64(bStart)), resp.IntReply(int64(bEnd))),
				}
				if withMatchLen {
					m = append(m, resp.IntReply(matchLen))
				}
				matches = append(matches, resp.ArrayReply(m...))
			}
			aStart = alen
		}
	}
	if !getIdx {
		return resp.BulkReply(string(result))
	}
	return c.mapReply([]resp.Reply{resp.BulkReply("matches"), resp.ArrayReply(matches...),
		resp.BulkReply("len"), resp.IntReply(int64(at(alen, blen)))})
}
