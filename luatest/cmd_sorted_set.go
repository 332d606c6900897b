// Commands from https://redis.io/commands/?group=sorted-set

package luatest

import (
	"math"
	"slices"
	"strings"

	"github.com/luagen/luagen/luatest/resp"
)

var zsetCommands = []*command{
	{name: "zadd", fn: cmdZadd},
	{name: "zincrby", fn: cmdZincrby},
	{name: "zscore", fn: cmdZscore},
	{name: "zmscore", fn: cmdZmscore},
	{name: "zrem", fn: cmdZrem},
	{name: "zcard", fn: cmdZcard},
	{name: "zcount", fn: cmdZcount},
	{name: "zrank", fn: cmdZrank},
	{name: "zrevrank", fn: cmdZrank},
	{name: "zrange", fn: cmdZrange},
	{name: "zrevrange", fn: cmdZrange},
	{name: "zrangebyscore", fn: cmdZrange},
	{name: "zrevrangebyscore", fn: cmdZrange},
	{name: "zremrangebyscore", fn: cmdZremrange},
	{name: "zremrangebyrank", fn: cmdZremrange},
	{name: "zpopmin", fn: cmdZpop},
	{name: "zpopmax", fn: cmdZpop},
	{name: "zrangebylex", fn: cmdZrange},
	{name: "zrevrangebylex", fn: cmdZrange},
	{name: "zrangestore", fn: cmdZrange},
	{name: "zlexcount", fn: cmdZlexcount},
	{name: "zremrangebylex", fn: cmdZremrange},
	{name: "zunion", fn: cmdZsetAlgebra},
	{name: "zinter", fn: cmdZsetAlgebra},
	{name: "zdiff", fn: cmdZsetAlgebra},
	{name: "zunionstore", fn: cmdZsetAlgebra},
	{name: "zinterstore", fn: cmdZsetAlgebra},
	{name: "zdiffstore", fn: cmdZsetAlgebra},
	{name: "zintercard", fn: cmdZintercard},
	{name: "zrandmember", fn: cmdZrandmember},
	{name: "zmpop", fn: cmdZmpop},
}

func (c *cmdCtx) zset(key string) (*entry, bool) { return c.r.lookupType(key, typeZSet) }

// ZADD key [NX | XX] [GT | LT] [CH] [INCR] score member [score member ...]
// — https://redis.io/commands/zadd/ (zaddGenericCommand in t_zset.c).
func cmdZadd(c *cmdCtx, args []string) resp.Reply {
	var nx, xx, gt, lt, ch, incr bool
	i := 1
scan:
	for ; i < len(args); i++ {
		switch strings.ToUpper(args[i]) {
		case "NX":
			nx = true
		case "XX":
			xx = true
		case "GT":
			gt = true
		case "LT":
			lt = true
		case "CH":
			ch = true
		case "INCR":
			incr = true
		default:
			break scan
		}
	}
	pairs := args[i:]
	if len(pairs) == 0 || len(pairs)%2 != 0 {
		return errSyntax
	}
	if nx && xx {
		return resp.ErrorReply("ERR XX and NX options at the same time are not compatible")
	}
	if (gt && nx) || (lt && nx) || (gt && lt) {
		return resp.ErrorReply("ERR GT, LT, and/or NX options at the same time are not compatible")
	}
	if incr && len(pairs) > 2 {
		return resp.ErrorReply("ERR INCR option supports a single increment-element pair")
	}
	scores := make([]float64, len(pairs)/2)
	for j := range scores {
		f, ok := parseFloat(pairs[2*j])
		if !ok {
			return errNotFloat
		}
		scores[j] = f
	}
	e, wrong := c.zset(args[0])
	if wrong {
		return errWrongType
	}
	if e == nil {
		if xx {
			if incr {
				return resp.NilReply
			}
			return resp.IntReply(0)
		}
		e = &entry{kind: typeZSet, zset: newZSet()}
		c.r.db[args[0]] = e
	}
	var added, changed int64
	var last float64
	aborted := false
	for j, score := range scores {
		m := pairs[2*j+1]
		cur, exists := e.zset.scores[m]
		switch {
		case exists && nx, !exists && xx:
			aborted = true
			continue
		}
		if exists {
			newScore := score
			if incr {
				newScore = cur + score
				if math.IsNaN(newScore) {
					c.r.dropIfEmpty(args[0], e)
					return resp.ErrorReply("ERR resulting score is not a number (NaN)")
				}
			}
			if (lt && newScore >= cur) || (gt && newScore <= cur) {
				aborted = true
				continue
			}
			last = newScore
			if newScore != cur {
				e.zset.set(m, newScore)
				changed++
			}
		} else {
			e.zset.set(m, score)
			last = score
			added++
		}
	}
	c.r.dropIfEmpty(args[0], e)
	if incr {
		if aborted {
			return resp.NilReply
		}
		return c.double(last)
	}
	if ch {
		return resp.IntReply(added + changed)
	}
	return resp.IntReply(added)
}

// ZINCRBY key increment member — https://redis.io/commands/zincrby/
func cmdZincrby(c *cmdCtx, args []string) resp.Reply {
	return cmdZadd(&cmdCtx{r: c.r, proto: c.proto, name: "zadd"}, []string{args[0], "INCR", args[1], args[2]})
}

// ZSCORE key member — https://redis.io/commands/zscore/ (a double in RESP3).
func cmdZscore(c *cmdCtx, args []string) resp.Reply {
	e, wrong := c.zset(args[0])
	if wrong {
		return errWrongType
	}
	if e != nil {
		if s, ok := e.zset.scores[args[1]]; ok {
			return c.double(s)
		}
	}
	return resp.NilReply
}

// ZMSCORE key member [member ...] — https://redis.io/commands/zmscore/
func cmdZmscore(c *cmdCtx, args []string) resp.Reply {
	e, wrong := c.zset(args[0])
	if wrong {
		return errWrongType
	}
	out := make([]resp.Reply, len(args)-1)
	if e != nil {
		for i, m := range args[1:] {
			if s, ok := e.zset.scores[m]; ok {
				out[i] = c.double(s)
			}
		}
	}
	return resp.ArrayReply(out...)
}

// ZREM key member [member ...] — https://redis.io/commands/zrem/
func cmdZrem(c *cmdCtx, args []string) resp.Reply {
	e, wrong := c.zset(args[0])
	if wrong {
		return errWrongType
	}
	var n int64
	if e != nil {
		for _, m := range args[1:] {
			if e.zset.del(m) {
				n++
			}
		}
		c.r.dropIfEmpty(args[0], e)
	}
	return resp.IntReply(n)
}

// ZCARD key — https://redis.io/commands/zcard/
func cmdZcard(c *cmdCtx, args []string) resp.Reply {
	e, wrong := c.zset(args[0])
	if wrong {
		return errWrongType
	}
	if e == nil {
		return resp.IntReply(0)
	}
	return resp.IntReply(int64(e.zset.len()))
}

// scoreBound is one end of a score range: "1.5", "(1.5" (exclusive),
// "-inf", "+inf" (zslParseRange).
type scoreBound struct {
	v    float64
	excl bool
}

func parseScoreBound(s string) (scoreBound, bool) {
	var b scoreBound
	if strings.HasPrefix(s, "(") {
		b.excl, s = true, s[1:]
	}
	f, ok := parseFloat(s)
	if !ok {
		return b, false
	}
	b.v = f
	return b, true
}

func (b scoreBound) belowOrAt(f float64) bool { // b <= f as a minimum
	if b.excl {
		return b.v < f
	}
	return b.v <= f
}

func (b scoreBound) aboveOrAt(f float64) bool { // b >= f as a maximum
	if b.excl {
		return b.v > f
	}
	return b.v >= f
}

// ZCOUNT key min max — https://redis.io/commands/zcount/
func cmdZcount(c *cmdCtx, args []string) resp.Reply {
	lo, ok1 := parseScoreBound(args[1])
	hi, ok2 := parseScoreBound(args[2])
	if !ok1 || !ok2 {
		return errMinMaxFloat
	}
	e, wrong := c.zset(args[0])
	if wrong {
		return errWrongType
	}
	var n int64
	if e != nil {
		for _, s := range e.zset.scores {
			if lo.belowOrAt(s) && hi.aboveOrAt(s) {
				n++
			}
		}
	}
	return resp.IntReply(n)
}

// ZRANK key member — https://redis.io/commands/zrank/ and ZREVRANK.
func cmdZrank(c *cmdCtx, args []string) resp.Reply {
	e, wrong := c.zset(args[0])
	if wrong {
		return errWrongType
	}
	if e == nil {
		return resp.NilReply
	}
	r := e.zset.rank(args[1])
	if r < 0 {
		return resp.NilReply
	}
	if c.name == "zrevrank" {
		r = e.zset.len() - 1 - r
	}
	return resp.IntReply(int64(r))
}

// lexBound is one end of a lex range: "[a", "(a", "-", "+" (zslParseLexRange).
type lexBound struct {
	v          string
	excl       bool
	minf, pinf bool
}

func parseLexBound(s string) (lexBound, bool) {
	switch {
	case s == "-":
		return lexBound{minf: true}, true
	case s == "+":
		return lexBound{pinf: true}, true
	case strings.HasPrefix(s, "["):
		return lexBound{v: s[1:]}, true
	case strings.HasPrefix(s, "("):
		return lexBound{v: s[1:], excl: true}, true
	}
	return lexBound{}, false
}

func (b lexBound) minOK(m string) bool { // m is within b as a minimum
	switch {
	case b.minf:
		return true
	case b.pinf:
		return false
	case b.excl:
		return m > b.v
	}
	return m >= b.v
}

func (b lexBound) maxOK(m string) bool { // m is within b as a maximum
	switch {
	case b.pinf:
		return true
	case b.minf:
		return false
	case b.excl:
		return m < b.v
	}
	return m <= b.v
}

var errLexRange = resp.ErrorReply("ERR min or max not valid string range item")

// ZRANGE key start stop [BYSCORE | BYLEX] [REV] [LIMIT offset count]
// [WITHSCORES] — https://redis.io/commands/zrange/, the older ZREVRANGE,
// ZRANGEBYSCORE, ZREVRANGEBYSCORE, ZRANGEBYLEX, ZREVRANGEBYLEX it subsumes,
// and ZRANGESTORE dst src min max ... (zrangeGenericCommand).
func cmdZrange(c *cmdCtx, args []string) resp.Reply {
	var dst string
	if c.name == "zrangestore" {
		dst, args = args[0], args[1:]
	}
	// direction and range type start "auto" for ZRANGE and fixed for the
	// older commands; an option that sets one twice is a syntax error.
	auto := c.name == "zrange" || c.name == "zrangestore"
	byScore, byLex := strings.HasSuffix(c.name, "byscore"), strings.HasSuffix(c.name, "bylex")
	rev := strings.HasPrefix(c.name, "zrev")
	typeSet, dirSet := !auto, !auto
	var withScores bool
	var offset, count int64 = 0, -1
	limit := false
	for i := 3; i < len(args); i++ {
		switch opt := strings.ToUpper(args[i]); {
		case opt == "WITHSCORES" && dst == "":
			withScores = true
		case opt == "LIMIT" && i+2 < len(args):
			o, ok1 := parseInt(args[i+1])
			n, ok2 := parseInt(args[i+2])
			if !ok1 || !ok2 {
				return errNotInt
			}
			offset, count = o, n
			limit = n != -1 // the server checks the count only: LIMIT o -1 passes for ranks
			i += 2
		case opt == "REV" && !dirSet:
			rev, dirSet = true, true
		case opt == "BYSCORE" && !typeSet:
			byScore, typeSet = true, true
		case opt == "BYLEX" && !typeSet:
			byLex, typeSet = true, true
		default:
			return errSyntax
		}
	}
	if withScores && byLex {
		return resp.ErrorReply("ERR syntax error, WITHSCORES not supported in combination with BYLEX")
	}
	if limit && !byScore && !byLex {
		return resp.ErrorReply("ERR syntax error, LIMIT is only supported in combination with either BYSCORE or BYLEX")
	}
	minArg, maxArg := args[1], args[2]
	if rev && (byScore || byLex) {
		minArg, maxArg = maxArg, minArg
	}
	var in func(e *entry, m string) bool
	switch {
	case byScore:
		lo, ok1 := parseScoreBound(minArg)
		hi, ok2 := parseScoreBound(maxArg)
		if !ok1 || !ok2 {
			return errMinMaxFloat
		}
		in = func(e *entry, m string) bool { s := e.zset.scores[m]; return lo.belowOrAt(s) && hi.aboveOrAt(s) }
	case byLex:
		lo, ok1 := parseLexBound(minArg)
		hi, ok2 := parseLexBound(maxArg)
		if !ok1 || !ok2 {
			return errLexRange
		}
		in = func(e *entry, m string) bool { return lo.minOK(m) && hi.maxOK(m) }
	}
	var start, stop int64
	if in == nil {
		var ok1, ok2 bool
		start, ok1 = parseInt(args[1])
		stop, ok2 = parseInt(args[2])
		if !ok1 || !ok2 {
			return errNotInt
		}
	}
	e, wrong := c.zset(args[0])
	if wrong {
		return errWrongType
	}
	var members []string
	if e != nil {
		all := e.zset.members()
		at := func(j int) string {
			if rev {
				return all[len(all)-1-j]
			}
			return all[j]
		}
		if in != nil {
			for j := range all {
				if m := at(j); in(e, m) {
					members = append(members, m)
				}
			}
			if offset < 0 || offset >= int64(len(members)) {
				members = nil
			} else {
				members = members[offset:]
				if count >= 0 && count < int64(len(members)) {
					members = members[:count]
				}
			}
		} else if s, t, ok := rangeIndexes(start, stop, len(all)); ok {
			for j := s; j <= t; j++ {
				members = append(members, at(j))
			}
		}
	}
	if c.name == "zrangestore" {
		out := newZSet()
		for _, m := range members {
			out.set(m, e.zset.scores[m])
		}
		return resp.IntReply(int64(c.storeZSet(dst, out)))
	}
	return c.zrangeReply(e, members, withScores)
}

// storeZSet replaces dst with z (deleting dst when z is empty) and returns
// z's size.
func (c *cmdCtx) storeZSet(dst string, z *zsetValue) int {
	delete(c.r.db, dst)
	if z.len() > 0 {
		c.r.db[dst] = &entry{kind: typeZSet, zset: z}
	}
	return z.len()
}

// zrangeReply answers members, with their scores when asked: flat in
// RESP2, [member, score] pairs in RESP3.
func (c *cmdCtx) zrangeReply(e *entry, members []string, withScores bool) resp.Reply {
	if !withScores {
		return resp.BulkArray(members)
	}
	out := []resp.Reply{}
	for _, m := range members {
		if c.proto == 3 {
			out = append(out, resp.ArrayReply(resp.BulkReply(m), c.double(e.zset.scores[m])))
		} else {
			out = append(out, resp.BulkReply(m), c.double(e.zset.scores[m]))
		}
	}
	return resp.ArrayReply(out...)
}

// ZREMRANGEBYSCORE key min max — https://redis.io/commands/zremrangebyscore/,
// ZREMRANGEBYRANK key start stop and ZREMRANGEBYLEX key min max.
func cmdZremrange(c *cmdCtx, args []string) resp.Reply {
	var inRange func(e *entry) []string
	if c.name == "zremrangebylex" {
		lo, ok1 := parseLexBound(args[1])
		hi, ok2 := parseLexBound(args[2])
		if !ok1 || !ok2 {
			return errLexRange
		}
		inRange = func(e *entry) (out []string) {
			for _, m := range e.zset.members() {
				if lo.minOK(m) && hi.maxOK(m) {
					out = append(out, m)
				}
			}
			return out
		}
	} else if c.name == "zremrangebyscore" {
		lo, ok1 := parseScoreBound(args[1])
		hi, ok2 := parseScoreBound(args[2])
		if !ok1 || !ok2 {
			return errMinMaxFloat
		}
		inRange = func(e *entry) (out []string) {
			for _, m := range e.zset.members() {
				if s := e.zset.scores[m]; lo.belowOrAt(s) && hi.aboveOrAt(s) {
					out = append(out, m)
				}
			}
			return out
		}
	} else {
		start, ok1 := parseInt(args[1])
		stop, ok2 := parseInt(args[2])
		if !ok1 || !ok2 {
			return errNotInt
		}
		inRange = func(e *entry) []string {
			all := e.zset.members()
			s, t, ok := rangeIndexes(start, stop, len(all))
			if !ok {
				return nil
			}
			return append([]string(nil), all[s:t+1]...)
		}
	}
	e, wrong := c.zset(args[0])
	if wrong {
		return errWrongType
	}
	if e == nil {
		return resp.IntReply(0)
	}
	del := inRange(e)
	for _, m := range del {
		e.zset.del(m)
	}
	c.r.dropIfEmpty(args[0], e)
	return resp.IntReply(int64(len(del)))
}

// ZPOPMIN key [count] — https://redis.io/commands/zpopmin/ and ZPOPMAX.
func cmdZpop(c *cmdCtx, args []string) resp.Reply {
	if len(args) > 2 {
		return errSyntax
	}
	count := int64(1)
	if len(args) == 2 {
		n, bad := parsePositiveLong(args[1])
		if bad != nil {
			return *bad
		}
		count = n
	}
	e, wrong := c.zset(args[0])
	if wrong {
		return errWrongType
	}
	out := []resp.Reply{}
	if e == nil {
		return resp.ArrayReply()
	}
	nested := c.proto == 3 && len(args) == 2
	for i := int64(0); i < count && e.zset.len() > 0; i++ {
		all := e.zset.members()
		m := all[0]
		if c.name == "zpopmax" {
			m = all[len(all)-1]
		}
		s := e.zset.scores[m]
		e.zset.del(m)
		if nested {
			out = append(out, resp.ArrayReply(resp.BulkReply(m), c.double(s)))
		} else {
			out = append(out, resp.BulkReply(m), c.double(s))
		}
	}
	c.r.dropIfEmpty(args[0], e)
	return resp.ArrayReply(out...)
}

// ZLEXCOUNT key min max — https://redis.io/commands/zlexcount/
func cmdZlexcount(c *cmdCtx, args []string) resp.Reply {
	lo, ok1 := parseLexBound(args[1])
	hi, ok2 := parseLexBound(args[2])
	if !ok1 || !ok2 {
		return errLexRange
	}
	e, wrong := c.zset(args[0])
	if wrong {
		return errWrongType
	}
	var n int64
	if e != nil {
		for m := range e.zset.scores {
			if lo.minOK(m) && hi.maxOK(m) {
				n++
			}
		}
	}
	return resp.IntReply(n)
}

// zsetSource reads key as a sorted set for ZUNION and friends: a set
// counts as a sorted set whose scores are all 1; a missing key is empty.
func (c *cmdCtx) zsetSource(key string) (map[string]float64, bool) {
	e := c.r.lookup(key)
	switch {
	case e == nil:
		return map[string]float64{}, true
	case e.kind == typeZSet:
		return e.zset.scores, true
	case e.kind == typeSet:
		m := make(map[string]float64, len(e.set))
		for k := range e.set {
			m[k] = 1
		}
		return m, true
	}
	return nil, false
}

// ZUNION/ZINTER numkeys key [key ...] [WEIGHTS weight ...] [AGGREGATE
// SUM|MIN|MAX] [WITHSCORES], ZDIFF numkeys key [key ...] [WITHSCORES], and
// their STORE forms with a destination first —
// https://redis.io/commands/zunion/ (zunionInterDiffGenericCommand).
func cmdZsetAlgebra(c *cmdCtx, args []string) resp.Reply {
	store := strings.HasSuffix(c.name, "store")
	var dst string
	if store {
		dst, args = args[0], args[1:]
	}
	op := c.name[1:5] // "unio", "inte", "diff"
	n, ok := parseInt(args[0])
	if !ok {
		return errNotInt
	}
	if n < 1 {
		return resp.ErrorReply("ERR at least 1 input key is needed for '" + c.name + "' command")
	}
	if n > int64(len(args)-1) {
		return errSyntax
	}
	keys := args[1 : 1+n]
	weights := make([]float64, n)
	for i := range weights {
		weights[i] = 1
	}
	// The sources are read (and type-checked) before the options.
	srcs := make([]map[string]float64, n)
	for i, k := range keys {
		m, ok := c.zsetSource(k)
		if !ok {
			return errWrongType
		}
		srcs[i] = m
	}
	agg, withScores := "SUM", false
	for i := 1 + int(n); i < len(args); i++ {
		switch opt := strings.ToUpper(args[i]); {
		case opt == "WEIGHTS" && op != "diff" && i+int(n) < len(args):
			for j := range weights {
				w, ok := parseFloat(args[i+1+j])
				if !ok {
					return resp.ErrorReply("ERR weight value is not a float")
				}
				weights[j] = w
			}
			i += int(n)
		case opt == "AGGREGATE" && op != "diff" && i+1 < len(args):
			agg = strings.ToUpper(args[i+1])
			if agg != "SUM" && agg != "MIN" && agg != "MAX" {
				return errSyntax
			}
			i++
		case opt == "WITHSCORES" && !store:
			withScores = true
		default:
			return errSyntax
		}
	}
	weigh := func(s, w float64) float64 {
		if v := s * w; !math.IsNaN(v) {
			return v
		}
		return 0
	}
	combine := func(a, b float64) float64 {
		switch agg {
		case "MIN":
			return math.Min(a, b)
		case "MAX":
			return math.Max(a, b)
		}
		if v := a + b; !math.IsNaN(v) {
			return v
		}
		return 0
	}
	out := newZSet()
	switch op {
	case "unio":
		for i, src := range srcs {
			for m, s := range src {
				v := weigh(s, weights[i])
				if cur, ok := out.scores[m]; ok {
					v = combine(cur, v)
				}
				out.set(m, v)
			}
		}
	case "inte":
	members:
		for m, s := range srcs[0] {
			v := weigh(s, weights[0])
			for i, src := range srcs[1:] {
				o, ok := src[m]
				if !ok {
					continue members
				}
				v = combine(v, weigh(o, weights[i+1]))
			}
			out.set(m, v)
		}
	default:
	diff:
		for m, s := range srcs[0] {
			for _, src := range srcs[1:] {
				if _, ok := src[m]; ok {
					continue diff
				}
			}
			out.set(m, s)
		}
	}
	if store {
		return resp.IntReply(int64(c.storeZSet(dst, out)))
	}
	return c.zrangeReply(&entry{zset: out}, out.members(), withScores)
}

// ZINTERCARD numkeys key [key ...] [LIMIT limit] —
// https://redis.io/commands/zintercard/
func cmdZintercard(c *cmdCtx, args []string) resp.Reply {
	keys, limit, bad := parseInterCard(c, args, "ERR at least 1 input key is needed for 'zintercard' command")
	if bad != nil {
		return *bad
	}
	srcs := make([]map[string]float64, len(keys))
	for i, k := range keys {
		m, ok := c.zsetSource(k)
		if !ok {
			return errWrongType
		}
		srcs[i] = m
	}
	var n int64
outer:
	for m := range srcs[0] {
		for _, src := range srcs[1:] {
			if _, ok := src[m]; !ok {
				continue outer
			}
		}
		n++
		if limit > 0 && n == limit {
			break
		}
	}
	return resp.IntReply(n)
}

// parseInterCard parses "numkeys key [key ...] [LIMIT limit]" of ZINTERCARD
// and SINTERCARD; limit 0 means none.
func parseInterCard(c *cmdCtx, args []string, errNoKeys string) ([]string, int64, *resp.Reply) {
	errTooMany := errSyntax
	if c.name == "sintercard" {
		errTooMany = resp.ErrorReply("ERR Number of keys can't be greater than number of args")
	}
	fail := func(r resp.Reply) ([]string, int64, *resp.Reply) { return nil, 0, &r }
	var n int64
	if c.name == "sintercard" {
		// sinterCardCommand reads numkeys with getRangeLongFromObjectOrReply.
		var bad *resp.Reply
		if n, bad = parseRangeLong(args[0], 1, math.MaxInt64, strings.TrimPrefix(errNoKeys, "ERR ")); bad != nil {
			return nil, 0, bad
		}
	} else {
		var ok bool
		if n, ok = parseInt(args[0]); !ok {
			return fail(errNotInt)
		}
		if n < 1 {
			return fail(resp.ErrorReply(errNoKeys))
		}
	}
	if n > int64(len(args)-1) {
		return fail(errTooMany)
	}
	if c.name == "zintercard" {
		// zunionInterDiffGenericCommand checks the keys' types before it
		// reads the options; sinterCardCommand reads LIMIT first.
		for _, k := range args[1 : 1+n] {
			if _, ok := c.zsetSource(k); !ok {
				return fail(errWrongType)
			}
		}
	}
	var limit int64
	for i := 1 + int(n); i < len(args); i++ {
		if strings.EqualFold(args[i], "LIMIT") && i+1 < len(args) {
			l, bad := parseRangeLong(args[i+1], 0, math.MaxInt64, "LIMIT can't be negative")
			if bad != nil {
				return nil, 0, bad
			}
			limit = l
			i++
			continue
		}
		return fail(errSyntax)
	}
	return args[1 : 1+n], limit, nil
}

// ZRANDMEMBER key [count [WITHSCORES]] — https://redis.io/commands/zrandmember/.
// luatest picks members in score order instead of at random: a positive
// count answers the first count members (all of them from the highest
// score down, as the server does when count reaches the size), a negative
// count repeats them cyclically.
func cmdZrandmember(c *cmdCtx, args []string) resp.Reply {
	if len(args) > 3 || len(args) == 3 && !strings.EqualFold(args[2], "WITHSCORES") {
		return errSyntax
	}
	var count int64
	if len(args) >= 2 {
		n, ok := parseInt(args[1])
		if !ok {
			return errNotInt
		}
		count = n
	}
	e, wrong := c.zset(args[0])
	if wrong {
		return errWrongType
	}
	if len(args) == 1 {
		if e == nil {
			return resp.NilReply
		}
		return resp.BulkReply(e.zset.members()[0])
	}
	if e == nil || count == 0 {
		return resp.ArrayReply()
	}
	all := e.zset.members()
	if count >= int64(len(all)) {
		// The whole set, which 7.0 answers from the highest score down.
		all = slices.Clone(all)
		slices.Reverse(all)
	}
	picked := pickMembers(all, count)
	return c.zrangeReply(e, picked, len(args) == 3)
}

// pickMembers is luatest's deterministic stand-in for the random picks of
// SRANDMEMBER, HRANDFIELD and ZRANDMEMBER with a count.
func pickMembers(all []string, count int64) []string {
	if count > 0 {
		return all[:min(int(count), len(all))]
	}
	out := make([]string, 0, min(-count, 1<<20))
	for i := int64(0); i < -count; i++ {
		out = append(out, all[int(i)%len(all)])
	}
	return out
}

// ZMPOP numkeys key [key ...] MIN|MAX [COUNT count] —
// https://redis.io/commands/zmpop/: [key, [[member, score], ...]] from the
// first non-empty key, or nil.
func cmdZmpop(c *cmdCtx, args []string) resp.Reply {
	keys, where, count, bad := parseMpop(args, []string{"MIN", "MAX"})
	if bad != nil {
		return *bad
	}
	for _, k := range keys {
		e, wrong := c.zset(k)
		if wrong {
			return errWrongType
		}
		if e == nil {
			continue
		}
		var out []resp.Reply
		for i := int64(0); i < count && e.zset.len() > 0; i++ {
			all := e.zset.members()
			m := all[0]
			if where == "MAX" {
				m = all[len(all)-1]
			}
			out = append(out, resp.ArrayReply(resp.BulkReply(m), c.double(e.zset.scores[m])))
			e.zset.del(m)
		}
		c.r.dropIfEmpty(k, e)
		return resp.ArrayReply(resp.BulkReply(k), resp.ArrayReply(out...))
	}
	return nullArray
}

// parseMpop parses "numkeys key [key ...] WHERE [COUNT count]" of LMPOP and
// ZMPOP (where is one of wheres, upper-cased).
func parseMpop(args []string, wheres []string) (keys []string, where string, count int64, bad *resp.Reply) {
	fail := func(r resp.Reply) ([]string, string, int64, *resp.Reply) { return nil, "", 0, &r }
	n, ok := parseInt(args[0])
	if !ok || n < 1 {
		return fail(resp.ErrorReply("ERR numkeys should be greater than 0"))
	}
	if n > int64(len(args)-2) {
		return fail(errSyntax)
	}
	keys = args[1 : 1+n]
	rest := args[1+n:]
	where = strings.ToUpper(rest[0])
	if !slices.Contains(wheres, where) {
		return fail(errSyntax)
	}
	count = 1
	countSet := false
	for i := 1; i < len(rest); i++ {
		if strings.EqualFold(rest[i], "COUNT") && i+1 < len(rest) && !countSet {
			v, ok := parseInt(rest[i+1])
			if !ok || v <= 0 {
				return fail(resp.ErrorReply("ERR count should be greater than 0"))
			}
			count, countSet = v, true
			i++
			continue
		}
		return fail(errSyntax)
	}
	return keys, where, count, nil
}
