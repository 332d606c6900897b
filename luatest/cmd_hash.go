// Commands from https://redis.io/commands/?group=hash

package luatest

import (
	"math"
	"math/big"
	"strconv"
	"strings"

	"github.com/luagen/luagen/luatest/resp"
)

var hashCommands = []*command{
	{name: "hset", fn: cmdHset},
	{name: "hmset", fn: cmdHset},
	{name: "hsetnx", fn: cmdHsetnx},
	{name: "hget", fn: cmdHget},
	{name: "hmget", fn: cmdHmget},
	{name: "hdel", fn: cmdHdel},
	{name: "hexists", fn: cmdHexists},
	{name: "hlen", fn: cmdHlen},
	{name: "hstrlen", fn: cmdHstrlen},
	{name: "hgetall", fn: cmdHgetall},
	{name: "hkeys", fn: cmdHgetall},
	{name: "hvals", fn: cmdHgetall},
	{name: "hincrby", fn: cmdHincrby},
	{name: "hincrbyfloat", fn: cmdHincrbyfloat},
	{name: "hrandfield", fn: cmdHrandfield},
}

// hashForWrite returns key's hash, creating an empty one (not yet stored)
// when the key is missing; wrong is true for another type.
func (c *cmdCtx) hashForWrite(key string) (e *entry, wrong bool) {
	e, wrong = c.r.lookupType(key, typeHash)
	if wrong {
		return nil, true
	}
	if e == nil {
		e = &entry{kind: typeHash, hash: newHash()}
		c.r.db[key] = e
	}
	return e, false
}

// HSET key field value [field value ...] — https://redis.io/commands/hset/
// (answers the number of new fields). HMSET answers OK.
func cmdHset(c *cmdCtx, args []string) resp.Reply {
	if len(args)%2 != 1 {
		return errArity(c.name)
	}
	e, wrong := c.hashForWrite(args[0])
	if wrong {
		return errWrongType
	}
	e.tryHashConversion(args[1:])
	var n int64
	for i := 1; i < len(args); i += 2 {
		if e.hash.set(args[i], args[i+1]) {
			n++
		}
	}
	if c.name == "hmset" {
		return resp.OK
	}
	return resp.IntReply(n)
}

// HSETNX key field value — https://redis.io/commands/hsetnx/
func cmdHsetnx(c *cmdCtx, args []string) resp.Reply {
	e, wrong := c.hashForWrite(args[0])
	if wrong {
		return errWrongType
	}
	if _, ok := e.hash.get(args[1]); ok {
		return resp.IntReply(0)
	}
	e.tryHashConversion(args[1:])
	e.hash.set(args[1], args[2])
	return resp.IntReply(1)
}

// HGET key field — https://redis.io/commands/hget/
func cmdHget(c *cmdCtx, args []string) resp.Reply {
	e, wrong := c.r.lookupType(args[0], typeHash)
	if wrong {
		return errWrongType
	}
	if e != nil {
		if v, ok := e.hash.get(args[1]); ok {
			return resp.BulkReply(v)
		}
	}
	return resp.NilReply
}

// HMGET key field [field ...] — https://redis.io/commands/hmget/
func cmdHmget(c *cmdCtx, args []string) resp.Reply {
	e, wrong := c.r.lookupType(args[0], typeHash)
	if wrong {
		return errWrongType
	}
	out := make([]resp.Reply, len(args)-1)
	if e != nil {
		for i, f := range args[1:] {
			if v, ok := e.hash.get(f); ok {
				out[i] = resp.BulkReply(v)
			}
		}
	}
	return resp.ArrayReply(out...)
}

// HDEL key field [field ...] — https://redis.io/commands/hdel/
func cmdHdel(c *cmdCtx, args []string) resp.Reply {
	e, wrong := c.r.lookupType(args[0], typeHash)
	if wrong {
		return errWrongType
	}
	var n int64
	if e != nil {
		for _, f := range args[1:] {
			if e.hash.del(f) {
				n++
			}
		}
		c.r.dropIfEmpty(args[0], e)
	}
	return resp.IntReply(n)
}

// HEXISTS key field — https://redis.io/commands/hexists/
func cmdHexists(c *cmdCtx, args []string) resp.Reply {
	e, wrong := c.r.lookupType(args[0], typeHash)
	if wrong {
		return errWrongType
	}
	if e != nil {
		if _, ok := e.hash.get(args[1]); ok {
			return resp.IntReply(1)
		}
	}
	return resp.IntReply(0)
}

// HLEN key — https://redis.io/commands/hlen/
func cmdHlen(c *cmdCtx, args []string) resp.Reply {
	e, wrong := c.r.lookupType(args[0], typeHash)
	if wrong {
		return errWrongType
	}
	if e == nil {
		return resp.IntReply(0)
	}
	return resp.IntReply(int64(e.hash.len()))
}

// HSTRLEN key field — https://redis.io/commands/hstrlen/
func cmdHstrlen(c *cmdCtx, args []string) resp.Reply {
	e, wrong := c.r.lookupType(args[0], typeHash)
	if wrong {
		return errWrongType
	}
	if e == nil {
		return resp.IntReply(0)
	}
	v, _ := e.hash.get(args[1])
	return resp.IntReply(int64(len(v)))
}

// HGETALL key — https://redis.io/commands/hgetall/ (a map in RESP3),
// HKEYS and HVALS; fields in insertion order, as a listpack keeps them.
func cmdHgetall(c *cmdCtx, args []string) resp.Reply {
	e, wrong := c.r.lookupType(args[0], typeHash)
	if wrong {
		return errWrongType
	}
	var out []resp.Reply
	if e != nil {
		for _, f := range e.hash.fields {
			switch c.name {
			case "hgetall":
				out = append(out, resp.BulkReply(f), resp.BulkReply(e.hash.values[f]))
			case "hkeys":
				out = append(out, resp.BulkReply(f))
			default:
				out = append(out, resp.BulkReply(e.hash.values[f]))
			}
		}
	}
	if c.name == "hgetall" {
		return c.mapReply(out)
	}
	return resp.ArrayReply(out...)
}

// HINCRBY key field increment — https://redis.io/commands/hincrby/
func cmdHincrby(c *cmdCtx, args []string) resp.Reply {
	by, ok := parseInt(args[2])
	if !ok {
		return errNotInt
	}
	e, wrong := c.r.lookupType(args[0], typeHash)
	if wrong {
		return errWrongType
	}
	var cur int64
	if e != nil {
		if v, found := e.hash.get(args[1]); found {
			if cur, ok = parseInt(v); !ok {
				return errHashNotInt
			}
		}
	}
	if (by < 0 && cur < 0 && by < math.MinInt64-cur) || (by > 0 && cur > 0 && by > math.MaxInt64-cur) {
		return errOverflow
	}
	cur += by
	e, _ = c.hashForWrite(args[0])
	e.hash.set(args[1], strconv.FormatInt(cur, 10))
	return resp.IntReply(cur)
}

// HINCRBYFLOAT key field increment — https://redis.io/commands/hincrbyfloat/
// (long double arithmetic, as INCRBYFLOAT).
func cmdHincrbyfloat(c *cmdCtx, args []string) resp.Reply {
	by, ok := parseLongDouble(args[2])
	if !ok {
		return errNotFloat
	}
	if by.IsInf() { // checked before the key (hincrbyfloatCommand); NaN does not parse
		return resp.ErrorReply("ERR value is NaN or Infinity")
	}
	e, wrong := c.r.lookupType(args[0], typeHash)
	if wrong {
		return errWrongType
	}
	cur := new(big.Float).SetPrec(64)
	if e != nil {
		if v, found := e.hash.get(args[1]); found {
			if cur, ok = parseLongDouble(v); !ok {
				return errHashNotFloat
			}
		}
	}
	sum, ok := addLongDouble(cur, by)
	if !ok {
		return errNaNOrInfinity
	}
	s := formatLongDouble(sum)
	e, _ = c.hashForWrite(args[0])
	e.hash.set(args[1], s)
	return resp.BulkReply(s)
}

// HRANDFIELD key [count [WITHVALUES]] — https://redis.io/commands/hrandfield/.
// luatest picks fields in the hash's order instead of at random: a positive
// count answers the first count fields (all of them, as the server does
// when count reaches the size), a negative count repeats them cyclically.
func cmdHrandfield(c *cmdCtx, args []string) resp.Reply {
	if len(args) > 3 || len(args) == 3 && !strings.EqualFold(args[2], "WITHVALUES") {
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
	e, wrong := c.r.lookupType(args[0], typeHash)
	if wrong {
		return errWrongType
	}
	if len(args) == 1 {
		if e == nil {
			return resp.NilReply
		}
		return resp.BulkReply(e.hash.fields[0])
	}
	if e == nil || count == 0 {
		return resp.ArrayReply()
	}
	fields := pickMembers(e.hash.fields, count)
	if len(args) < 3 {
		return resp.BulkArray(fields)
	}
	var out []resp.Reply
	for _, f := range fields {
		if c.proto == 3 {
			out = append(out, resp.ArrayReply(resp.BulkReply(f), resp.BulkReply(e.hash.values[f])))
		} else {
			out = append(out, resp.BulkReply(f), resp.BulkReply(e.hash.values[f]))
		}
	}
	return resp.ArrayReply(out...)
}

// tryHashConversion is hashTypeTryConversion: a field or value longer than
// hash-max-listpack-value makes the hash a hashtable before it is stored,
// even when a later pair of the same command overwrites it.
func (e *entry) tryHashConversion(args []string) {
	for _, a := range args {
		if len(a) > hashMaxListpackValue {
			e.wide = true
			return
		}
	}
}
