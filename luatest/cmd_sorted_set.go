// Commands from https://redis.io/commands/?group=sorted-set

package luatest

import (
	"math"
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

// ZRANGE key start stop [BYSCORE] [REV] [LIMIT offset count] [WITHSCORES]
// — https://redis.io/commands/zrange/, and the older ZREVRANGE,
// ZRANGEBYSCORE and ZREVRANGEBYSCORE it subsumes (zrangeGenericCommand).
// BYLEX is not supported and fails loudly.
func cmdZrange(c *cmdCtx, args []string) resp.Reply {
	// direction and range type start "auto" for ZRANGE and fixed for the
	// older commands; an option that sets one twice is a syntax error.
	byScore, rev := strings.HasSuffix(c.name, "byscore"), strings.HasPrefix(c.name, "zrev")
	typeSet, dirSet := c.name != "zrange", c.name != "zrange"
	var withScores bool
	var offset, count int64 = 0, -1
	for i := 3; i < len(args); i++ {
		switch opt := strings.ToUpper(args[i]); {
		case opt == "WITHSCORES":
			withScores = true
		case opt == "LIMIT" && i+2 < len(args):
			o, ok1 := parseInt(args[i+1])
			n, ok2 := parseInt(args[i+2])
			if !ok1 || !ok2 {
				return errNotInt
			}
			offset, count = o, n
			i += 2
		case opt == "REV" && !dirSet:
			rev, dirSet = true, true
		case opt == "BYSCORE" && !typeSet:
			byScore, typeSet = true, true
		case opt == "BYLEX" && !typeSet:
			return resp.ErrorReply("ERR luatest: ZRANGE BYLEX is not supported")
		default:
			return errSyntax
		}
	}
	if count != -1 && !byScore {
		return resp.ErrorReply("ERR syntax error, LIMIT is only supported in combination with either BYSCORE or BYLEX")
	}
	var members []string
	if byScore {
		minArg, maxArg := args[1], args[2]
		if rev && c.name == "zrange" || c.name == "zrevrangebyscore" {
			minArg, maxArg = maxArg, minArg
		}
		lo, ok1 := parseScoreBound(minArg)
		hi, ok2 := parseScoreBound(maxArg)
		if !ok1 || !ok2 {
			return errMinMaxFloat
		}
		e, wrong := c.zset(args[0])
		if wrong {
			return errWrongType
		}
		if e != nil {
			all := e.zset.members()
			for j := range all {
				m := all[j]
				if rev {
					m = all[len(all)-1-j]
				}
				s := e.zset.scores[m]
				if lo.belowOrAt(s) && hi.aboveOrAt(s) {
					members = append(members, m)
				}
			}
			if offset < 0 {
				members = nil
			} else if offset >= int64(len(members)) {
				members = nil
			} else {
				members = members[offset:]
				if count >= 0 && count < int64(len(members)) {
					members = members[:count]
				}
			}
		}
		return c.zrangeReply(e, members, withScores)
	}
	start, ok1 := parseInt(args[1])
	stop, ok2 := parseInt(args[2])
	if !ok1 || !ok2 {
		return errNotInt
	}
	e, wrong := c.zset(args[0])
	if wrong {
		return errWrongType
	}
	if e != nil {
		all := e.zset.members()
		if s, t, ok := rangeIndexes(start, stop, len(all)); ok {
			for j := s; j <= t; j++ {
				if rev {
					members = append(members, all[len(all)-1-j])
				} else {
					members = append(members, all[j])
				}
			}
		}
	}
	return c.zrangeReply(e, members, withScores)
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

// ZREMRANGEBYSCORE key min max — https://redis.io/commands/zremrangebyscore/
// and ZREMRANGEBYRANK key start stop.
func cmdZremrange(c *cmdCtx, args []string) resp.Reply {
	var inRange func(e *entry) []string
	if c.name == "zremrangebyscore" {
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
		n, ok := parseInt(args[1])
		if !ok {
			return errNotInt
		}
		if n < 0 {
			return errPositive
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
