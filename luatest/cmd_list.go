// Commands from https://redis.io/commands/?group=list

package luatest

import (
	"math"
	"slices"
	"strings"

	"github.com/luagen/luagen/luatest/resp"
)

var listCommands = []*command{
	{name: "lpush", fn: cmdPush},
	{name: "rpush", fn: cmdPush},
	{name: "lpushx", fn: cmdPush},
	{name: "rpushx", fn: cmdPush},
	{name: "lpop", fn: cmdPop},
	{name: "rpop", fn: cmdPop},
	{name: "llen", fn: cmdLlen},
	{name: "lrange", fn: cmdLrange},
	{name: "lindex", fn: cmdLindex},
	{name: "lset", fn: cmdLset},
	{name: "lrem", fn: cmdLrem},
	{name: "ltrim", fn: cmdLtrim},
	{name: "linsert", fn: cmdLinsert},
	{name: "rpoplpush", fn: cmdLmove},
	{name: "lmove", fn: cmdLmove},
	{name: "lpos", fn: cmdLpos},
	{name: "lmpop", fn: cmdLmpop},
}

// LPUSH key element [element ...] — https://redis.io/commands/lpush/ and
// RPUSH, LPUSHX, RPUSHX (the X forms do nothing when the key is missing).
func cmdPush(c *cmdCtx, args []string) resp.Reply {
	e, wrong := c.r.lookupType(args[0], typeList)
	if wrong {
		return errWrongType
	}
	if e == nil {
		if strings.HasSuffix(c.name, "x") {
			return resp.IntReply(0)
		}
		e = &entry{kind: typeList}
		c.r.db[args[0]] = e
	}
	for _, v := range args[1:] {
		e.listPush(c.name[0] == 'l', v)
	}
	return resp.IntReply(int64(len(e.list)))
}

// LPOP key [count] — https://redis.io/commands/lpop/ and RPOP.
func cmdPop(c *cmdCtx, args []string) resp.Reply {
	if len(args) > 2 {
		return errArity(c.name)
	}
	count, hasCount := int64(1), len(args) == 2
	if hasCount {
		n, ok := parseInt(args[1])
		if !ok || n < 0 {
			return errPositive
		}
		count = n
	}
	e, wrong := c.r.lookupType(args[0], typeList)
	if wrong {
		return errWrongType
	}
	if e == nil {
		if hasCount {
			return nullArray
		}
		return resp.NilReply
	}
	if hasCount && count == 0 {
		return resp.ArrayReply()
	}
	n := int(min(count, int64(len(e.list))))
	popped := e.listPop(c.name == "lpop", n)
	c.r.dropIfEmpty(args[0], e)
	if !hasCount {
		return resp.BulkReply(popped[0])
	}
	return resp.BulkArray(popped)
}

// LLEN key — https://redis.io/commands/llen/
func cmdLlen(c *cmdCtx, args []string) resp.Reply {
	e, wrong := c.r.lookupType(args[0], typeList)
	if wrong {
		return errWrongType
	}
	if e == nil {
		return resp.IntReply(0)
	}
	return resp.IntReply(int64(len(e.list)))
}

// rangeIndexes clamps start and stop (negative counts from the end) to a
// sequence of length n; ok is false for an empty range.
func rangeIndexes(start, stop int64, n int) (int, int, bool) {
	ln := int64(n)
	if start < 0 {
		start += ln
	}
	if stop < 0 {
		stop += ln
	}
	if start < 0 {
		start = 0
	}
	if start > stop || start >= ln {
		return 0, 0, false
	}
	if stop >= ln {
		stop = ln - 1
	}
	return int(start), int(stop), true
}

// LRANGE key start stop — https://redis.io/commands/lrange/
func cmdLrange(c *cmdCtx, args []string) resp.Reply {
	start, ok1 := parseInt(args[1])
	stop, ok2 := parseInt(args[2])
	if !ok1 || !ok2 {
		return errNotInt
	}
	e, wrong := c.r.lookupType(args[0], typeList)
	if wrong {
		return errWrongType
	}
	if e == nil {
		return resp.ArrayReply()
	}
	s, t, ok := rangeIndexes(start, stop, len(e.list))
	if !ok {
		return resp.ArrayReply()
	}
	return resp.BulkArray(e.list[s : t+1])
}

// LINDEX key index — https://redis.io/commands/lindex/ (the key is looked
// up before the index is parsed).
func cmdLindex(c *cmdCtx, args []string) resp.Reply {
	e, wrong := c.r.lookupType(args[0], typeList)
	if wrong {
		return errWrongType
	}
	if e == nil {
		return resp.NilReply
	}
	idx, ok := parseInt(args[1])
	if !ok {
		return errNotInt
	}
	if idx < 0 {
		idx += int64(len(e.list))
	}
	if idx < 0 || idx >= int64(len(e.list)) {
		return resp.NilReply
	}
	return resp.BulkReply(e.list[idx])
}

// LSET key index element — https://redis.io/commands/lset/ (the key is
// looked up before the index is parsed).
func cmdLset(c *cmdCtx, args []string) resp.Reply {
	e, wrong := c.r.lookupType(args[0], typeList)
	if wrong {
		return errWrongType
	}
	if e == nil {
		return errNoSuchKey
	}
	idx, ok := parseInt(args[1])
	if !ok {
		return errNotInt
	}
	if idx < 0 {
		idx += int64(len(e.list))
	}
	if idx < 0 || idx >= int64(len(e.list)) {
		return errIndexRange
	}
	e.listSet(int(idx), args[2])
	return resp.OK
}

// LREM key count element — https://redis.io/commands/lrem/ (count > 0 from
// the head, < 0 from the tail, 0 all).
func cmdLrem(c *cmdCtx, args []string) resp.Reply {
	count, ok := parseInt(args[1])
	if !ok {
		return errNotInt
	}
	e, wrong := c.r.lookupType(args[0], typeList)
	if wrong {
		return errWrongType
	}
	if e == nil {
		return resp.IntReply(0)
	}
	var removed int64
	limit := count
	if limit < 0 {
		limit = -limit
	}
	keep := make([]bool, len(e.list))
	for i := range keep {
		keep[i] = true
	}
	for n := 0; n < len(e.list); n++ {
		i := n
		if count < 0 {
			i = len(e.list) - 1 - n
		}
		if e.list[i] == args[2] && (limit == 0 || removed < limit) {
			keep[i] = false
			removed++
		}
	}
	e.listKeep(func(i int) bool { return keep[i] })
	c.r.dropIfEmpty(args[0], e)
	return resp.IntReply(removed)
}

// LTRIM key start stop — https://redis.io/commands/ltrim/
func cmdLtrim(c *cmdCtx, args []string) resp.Reply {
	start, ok1 := parseInt(args[1])
	stop, ok2 := parseInt(args[2])
	if !ok1 || !ok2 {
		return errNotInt
	}
	e, wrong := c.r.lookupType(args[0], typeList)
	if wrong {
		return errWrongType
	}
	if e == nil {
		return resp.OK
	}
	s, t, ok := rangeIndexes(start, stop, len(e.list))
	e.listKeep(func(i int) bool { return ok && i >= s && i <= t })
	c.r.dropIfEmpty(args[0], e)
	return resp.OK
}

// LINSERT key BEFORE|AFTER pivot element — https://redis.io/commands/linsert/
func cmdLinsert(c *cmdCtx, args []string) resp.Reply {
	var after bool
	switch strings.ToUpper(args[1]) {
	case "BEFORE":
	case "AFTER":
		after = true
	default:
		return errSyntax
	}
	e, wrong := c.r.lookupType(args[0], typeList)
	if wrong {
		return errWrongType
	}
	if e == nil {
		return resp.IntReply(0)
	}
	i := slices.Index(e.list, args[2])
	if i < 0 {
		return resp.IntReply(-1)
	}
	e.listInsert(i, after, args[3])
	return resp.IntReply(int64(len(e.list)))
}

// LMOVE source destination LEFT|RIGHT LEFT|RIGHT
// — https://redis.io/commands/lmove/; RPOPLPUSH is LMOVE ... RIGHT LEFT.
func cmdLmove(c *cmdCtx, args []string) resp.Reply {
	from, to := "RIGHT", "LEFT"
	if c.name == "lmove" {
		from, to = strings.ToUpper(args[2]), strings.ToUpper(args[3])
		if (from != "LEFT" && from != "RIGHT") || (to != "LEFT" && to != "RIGHT") {
			return errSyntax
		}
	}
	src, wrong := c.r.lookupType(args[0], typeList)
	if wrong {
		return errWrongType
	}
	if src == nil {
		return resp.NilReply
	}
	if dst, wrong := c.r.lookupType(args[1], typeList); wrong {
		return errWrongType
	} else if dst == nil && args[0] != args[1] {
		c.r.db[args[1]] = &entry{kind: typeList}
	}
	v := src.listPop(from == "LEFT", 1)[0]
	c.r.db[args[1]].listPush(to == "LEFT", v)
	c.r.dropIfEmpty(args[0], src)
	return resp.BulkReply(v)
}

// LPOS key element [RANK rank] [COUNT num-matches] [MAXLEN len] —
// https://redis.io/commands/lpos/
func cmdLpos(c *cmdCtx, args []string) resp.Reply {
	rank, count, maxlen := int64(1), int64(-1), int64(0)
	for i := 2; i < len(args); i++ {
		opt := strings.ToUpper(args[i])
		if i+1 >= len(args) || (opt != "RANK" && opt != "COUNT" && opt != "MAXLEN") {
			return errSyntax
		}
		n, ok := parseInt(args[i+1])
		i++
		switch {
		case !ok && opt == "RANK":
			return errNotInt
		case !ok:
			return resp.ErrorReply("ERR " + opt + " can't be negative")
		}
		switch opt {
		case "RANK":
			if n == 0 {
				return resp.ErrorReply("ERR RANK can't be zero: use 1 to start from the first match, 2 from the second ... or use negative to start from the end of the list")
			}
			if n == math.MinInt64 {
				return resp.ErrorReply("ERR value is out of range, value must between -9223372036854775807 and 9223372036854775807")
			}
			rank = n
		case "COUNT":
			if n < 0 {
				return resp.ErrorReply("ERR COUNT can't be negative")
			}
			count = n
		default:
			if n < 0 {
				return resp.ErrorReply("ERR MAXLEN can't be negative")
			}
			maxlen = n
		}
	}
	e, wrong := c.r.lookupType(args[0], typeList)
	if wrong {
		return errWrongType
	}
	var found []resp.Reply
	if e != nil {
		skip := rank
		if skip < 0 {
			skip = -skip
		}
		want := count
		if want == -1 {
			want = 1
		}
		n := len(e.list)
		for k := 0; k < n && (maxlen == 0 || int64(k) < maxlen); k++ {
			idx := k
			if rank < 0 {
				idx = n - 1 - k
			}
			if e.list[idx] != args[1] {
				continue
			}
			if skip > 1 {
				skip--
				continue
			}
			found = append(found, resp.IntReply(int64(idx)))
			if want != 0 && int64(len(found)) == want {
				break
			}
		}
	}
	if count == -1 {
		if len(found) == 0 {
			return resp.NilReply
		}
		return found[0]
	}
	return resp.ArrayReply(found...)
}

// LMPOP numkeys key [key ...] LEFT|RIGHT [COUNT count] —
// https://redis.io/commands/lmpop/: [key, [element ...]] from the first
// non-empty list, or nil.
func cmdLmpop(c *cmdCtx, args []string) resp.Reply {
	keys, where, count, bad := parseMpop(args, []string{"LEFT", "RIGHT"})
	if bad != nil {
		return *bad
	}
	for _, k := range keys {
		e, wrong := c.r.lookupType(k, typeList)
		if wrong {
			return errWrongType
		}
		if e == nil {
			continue
		}
		n := int(min(count, int64(len(e.list))))
		popped := e.listPop(where == "LEFT", n)
		c.r.dropIfEmpty(k, e)
		return resp.ArrayReply(resp.BulkReply(k), resp.BulkArray(popped))
	}
	return nullArray
}
