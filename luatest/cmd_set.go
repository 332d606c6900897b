// Commands from https://redis.io/commands/?group=set

package luatest

import (
	"github.com/luagen/luagen/luatest/resp"
)

var setCommands = []*command{
	{name: "sadd", fn: cmdSadd},
	{name: "srem", fn: cmdSrem},
	{name: "smembers", fn: cmdSmembers},
	{name: "sismember", fn: cmdSismember},
	{name: "smismember", fn: cmdSmismember},
	{name: "scard", fn: cmdScard},
	{name: "sinter", fn: cmdSetAlgebra},
	{name: "sunion", fn: cmdSetAlgebra},
	{name: "sdiff", fn: cmdSetAlgebra},
	{name: "sinterstore", fn: cmdSetAlgebra},
	{name: "sunionstore", fn: cmdSetAlgebra},
	{name: "sdiffstore", fn: cmdSetAlgebra},
	{name: "smove", fn: cmdSmove},
	{name: "spop", fn: cmdSpop},
	{name: "srandmember", fn: cmdSpop},
	{name: "sintercard", fn: cmdSintercard},
}

// SADD key member [member ...] — https://redis.io/commands/sadd/
func cmdSadd(c *cmdCtx, args []string) resp.Reply {
	e, wrong := c.r.lookupType(args[0], typeSet)
	if wrong {
		return errWrongType
	}
	if e == nil {
		e = &entry{kind: typeSet, set: map[string]struct{}{}}
		c.r.db[args[0]] = e
	}
	var n int64
	for _, m := range args[1:] {
		if _, ok := e.set[m]; !ok {
			e.set[m] = struct{}{}
			n++
		}
	}
	return resp.IntReply(n)
}

// SREM key member [member ...] — https://redis.io/commands/srem/
func cmdSrem(c *cmdCtx, args []string) resp.Reply {
	e, wrong := c.r.lookupType(args[0], typeSet)
	if wrong {
		return errWrongType
	}
	var n int64
	if e != nil {
		for _, m := range args[1:] {
			if _, ok := e.set[m]; ok {
				delete(e.set, m)
				n++
			}
		}
		c.r.dropIfEmpty(args[0], e)
	}
	return resp.IntReply(n)
}

// SMEMBERS key — https://redis.io/commands/smembers/ (a set in RESP3).
func cmdSmembers(c *cmdCtx, args []string) resp.Reply {
	e, wrong := c.r.lookupType(args[0], typeSet)
	if wrong {
		return errWrongType
	}
	if e == nil {
		return c.setReply(nil)
	}
	return c.setReply(setMembers(e.set))
}

// SISMEMBER key member — https://redis.io/commands/sismember/
func cmdSismember(c *cmdCtx, args []string) resp.Reply {
	e, wrong := c.r.lookupType(args[0], typeSet)
	if wrong {
		return errWrongType
	}
	if e != nil {
		if _, ok := e.set[args[1]]; ok {
			return resp.IntReply(1)
		}
	}
	return resp.IntReply(0)
}

// SMISMEMBER key member [member ...] — https://redis.io/commands/smismember/
func cmdSmismember(c *cmdCtx, args []string) resp.Reply {
	e, wrong := c.r.lookupType(args[0], typeSet)
	if wrong {
		return errWrongType
	}
	out := make([]resp.Reply, len(args)-1)
	for i, m := range args[1:] {
		out[i] = resp.IntReply(0)
		if e != nil {
			if _, ok := e.set[m]; ok {
				out[i] = resp.IntReply(1)
			}
		}
	}
	return resp.ArrayReply(out...)
}

// SCARD key — https://redis.io/commands/scard/
func cmdScard(c *cmdCtx, args []string) resp.Reply {
	e, wrong := c.r.lookupType(args[0], typeSet)
	if wrong {
		return errWrongType
	}
	if e == nil {
		return resp.IntReply(0)
	}
	return resp.IntReply(int64(len(e.set)))
}

// SINTER, SUNION, SDIFF key [key ...] — https://redis.io/commands/sinter/
// and friends; the *STORE forms write the result to their first argument
// (deleting it when the result is empty) and answer its size.
func cmdSetAlgebra(c *cmdCtx, args []string) resp.Reply {
	op := c.name[1:4] // "int", "uni", "dif"
	store := len(c.name) > 6
	var dst string
	if store {
		dst, args = args[0], args[1:]
	}
	sets := make([]map[string]struct{}, len(args))
	for i, k := range args {
		e, wrong := c.r.lookupType(k, typeSet)
		if wrong {
			return errWrongType
		}
		if e != nil {
			sets[i] = e.set
		}
	}
	out := map[string]struct{}{}
	switch op {
	case "int":
		for m := range sets[0] {
			in := true
			for _, s := range sets[1:] {
				if _, ok := s[m]; !ok {
					in = false
					break
				}
			}
			if in {
				out[m] = struct{}{}
			}
		}
	case "uni":
		for _, s := range sets {
			for m := range s {
				out[m] = struct{}{}
			}
		}
	default:
		for m := range sets[0] {
			in := false
			for _, s := range sets[1:] {
				if _, ok := s[m]; ok {
					in = true
					break
				}
			}
			if !in {
				out[m] = struct{}{}
			}
		}
	}
	if !store {
		return c.setReply(setMembers(out))
	}
	c.r.del(dst)
	if len(out) > 0 {
		c.r.db[dst] = &entry{kind: typeSet, set: out}
	}
	return resp.IntReply(int64(len(out)))
}

// SMOVE source destination member — https://redis.io/commands/smove/
func cmdSmove(c *cmdCtx, args []string) resp.Reply {
	src, wrong := c.r.lookupType(args[0], typeSet)
	if wrong {
		return errWrongType
	}
	dst, wrong := c.r.lookupType(args[1], typeSet)
	if wrong {
		return errWrongType
	}
	if src == nil {
		return resp.IntReply(0)
	}
	if _, ok := src.set[args[2]]; !ok {
		return resp.IntReply(0)
	}
	if args[0] == args[1] {
		return resp.IntReply(1)
	}
	delete(src.set, args[2])
	c.r.dropIfEmpty(args[0], src)
	if dst == nil {
		dst = &entry{kind: typeSet, set: map[string]struct{}{}}
		c.r.db[args[1]] = dst
	}
	dst.set[args[2]] = struct{}{}
	return resp.IntReply(1)
}

// SPOP key [count] — https://redis.io/commands/spop/ and SRANDMEMBER key
// [count]. Redis picks members at random; luatest picks them in the order
// SMEMBERS answers (see the README), so tests stay deterministic.
func cmdSpop(c *cmdCtx, args []string) resp.Reply {
	if len(args) > 2 {
		if c.name == "spop" {
			return errSyntax
		}
		return errSyntax
	}
	hasCount := len(args) == 2
	var count int64 = 1
	if hasCount {
		var n int64
		if c.name == "spop" {
			var bad *resp.Reply
			if n, bad = parsePositiveLong(args[1]); bad != nil {
				return *bad
			}
		} else {
			var ok bool
			if n, ok = parseInt(args[1]); !ok {
				return errNotInt
			}
		}
		count = n
	}
	e, wrong := c.r.lookupType(args[0], typeSet)
	if wrong {
		return errWrongType
	}
	if e == nil {
		if hasCount {
			return c.emptySetOrArray()
		}
		return resp.NilReply
	}
	members := setMembers(e.set)
	if !hasCount {
		if c.name == "spop" {
			delete(e.set, members[0])
			c.r.dropIfEmpty(args[0], e)
		}
		return resp.BulkReply(members[0])
	}
	picked := pickMembers(members, count) // SRANDMEMBER's negative count repeats members
	if c.name == "spop" {
		for _, m := range picked {
			delete(e.set, m)
		}
		c.r.dropIfEmpty(args[0], e)
		return c.setReply(picked)
	}
	return resp.BulkArray(picked)
}

func (c *cmdCtx) emptySetOrArray() resp.Reply {
	if c.name == "spop" {
		return c.setReply(nil)
	}
	return resp.ArrayReply()
}

// SINTERCARD numkeys key [key ...] [LIMIT limit] —
// https://redis.io/commands/sintercard/
func cmdSintercard(c *cmdCtx, args []string) resp.Reply {
	keys, limit, bad := parseInterCard(c, args, "ERR numkeys should be greater than 0")
	if bad != nil {
		return *bad
	}
	sets := make([]map[string]struct{}, len(keys))
	empty := false
	for i, k := range keys {
		e, wrong := c.r.lookupType(k, typeSet)
		if wrong {
			return errWrongType
		}
		if e == nil {
			empty = true
			continue
		}
		sets[i] = e.set
	}
	if empty {
		return resp.IntReply(0)
	}
	var n int64
outer:
	for m := range sets[0] {
		for _, s := range sets[1:] {
			if _, ok := s[m]; !ok {
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
