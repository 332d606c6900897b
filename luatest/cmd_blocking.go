// Blocking commands from https://redis.io/commands/?group=list,
// https://redis.io/commands/?group=sorted-set and WAIT, as the server runs
// them for a client that may not block (a script, a MULTI, a client with
// CLIENT_DENY_BLOCKING): they answer at once, and a null when there is
// nothing to take. The wire server (package luatest/server) blocks a
// connection by running them again whenever the keyspace changes.

package luatest

import (
	"math"
	"strings"

	"github.com/luagen/luagen/luatest/resp"
)

var blockingCommands = []*command{
	{name: "blpop", fn: cmdBpop},
	{name: "brpop", fn: cmdBpop},
	{name: "blmove", fn: cmdBlmove},
	{name: "brpoplpush", fn: cmdBlmove},
	{name: "bzpopmin", fn: cmdBzpop},
	{name: "bzpopmax", fn: cmdBzpop},
	{name: "blmpop", fn: cmdBlockingMpop},
	{name: "bzmpop", fn: cmdBlockingMpop},
	{name: "wait", fn: cmdWait},
}

// parseTimeout reads a blocking command's timeout in seconds
// (getTimeoutFromObjectOrReply with UNIT_SECONDS in timeout.c): a float,
// (long long)(timeout * 1000.0) truncated toward zero (-0.0001 is 0, no
// error), and what int64 cannot hold, infinity included, turned into
// LLONG_MIN on x86-64, so refused as negative.
func parseTimeout(s string) *resp.Reply {
	t, ok := parseFloat(s)
	if !ok {
		bad := resp.ErrorReply("ERR timeout is not a float or out of range")
		return &bad
	}
	if ms := t * 1000; ms <= -1 || ms >= math.MaxInt64 || ms < math.MinInt64 {
		bad := resp.ErrorReply("ERR timeout is negative")
		return &bad
	}
	return nil
}

// BLPOP key [key ...] timeout — https://redis.io/commands/blpop/ and
// BRPOP (blockingPopGenericCommand in t_list.c): the first key that exists
// decides (WRONGTYPE when it is not a list); [key, element], or a null
// array when every key is missing.
func cmdBpop(c *cmdCtx, args []string) resp.Reply {
	if bad := parseTimeout(args[len(args)-1]); bad != nil {
		return *bad
	}
	for _, k := range args[:len(args)-1] {
		e, wrong := c.r.lookupType(k, typeList)
		if wrong {
			return errWrongType
		}
		if e == nil {
			continue
		}
		v := e.listPop(c.name == "blpop", 1)[0]
		c.r.dropIfEmpty(k, e)
		return resp.ArrayReply(resp.BulkReply(k), resp.BulkReply(v))
	}
	return nullArray
}

// BLMOVE source destination LEFT|RIGHT LEFT|RIGHT timeout —
// https://redis.io/commands/blmove/ and BRPOPLPUSH source destination
// timeout (blmoveGenericCommand): the directions, then the timeout, then
// LMOVE; a missing source answers a null bulk string when the client may
// not block.
func cmdBlmove(c *cmdCtx, args []string) resp.Reply {
	timeout, inner := args[2], &cmdCtx{r: c.r, proto: c.proto, name: "rpoplpush", argv0: c.argv0, run: c.run}
	if c.name == "blmove" {
		for _, w := range args[2:4] {
			if w := strings.ToUpper(w); w != "LEFT" && w != "RIGHT" {
				return errSyntax
			}
		}
		timeout, inner.name = args[4], "lmove"
	}
	if bad := parseTimeout(timeout); bad != nil {
		return *bad
	}
	return cmdLmove(inner, args[:len(args)-1])
}

// BZPOPMIN key [key ...] timeout — https://redis.io/commands/bzpopmin/ and
// BZPOPMAX (blockingGenericZpopCommand in t_zset.c): the first key that
// exists decides; [key, member, score], or a null array.
func cmdBzpop(c *cmdCtx, args []string) resp.Reply {
	if bad := parseTimeout(args[len(args)-1]); bad != nil {
		return *bad
	}
	for _, k := range args[:len(args)-1] {
		e, wrong := c.zset(k)
		if wrong {
			return errWrongType
		}
		if e == nil {
			continue
		}
		all := e.zset.members()
		m := all[0]
		if c.name == "bzpopmax" {
			m = all[len(all)-1]
		}
		s := e.zset.scores[m]
		e.zset.del(m)
		c.r.dropIfEmpty(k, e)
		return resp.ArrayReply(resp.BulkReply(k), resp.BulkReply(m), c.double(s))
	}
	return nullArray
}

// BLMPOP timeout numkeys key [key ...] LEFT|RIGHT [COUNT count] and BZMPOP
// — https://redis.io/commands/blmpop/: LMPOP and ZMPOP after the timeout.
func cmdBlockingMpop(c *cmdCtx, args []string) resp.Reply {
	if bad := parseTimeout(args[0]); bad != nil {
		return *bad
	}
	inner := &cmdCtx{r: c.r, proto: c.proto, name: c.name[1:], argv0: c.argv0, run: c.run}
	if c.name == "blmpop" {
		return cmdLmpop(inner, args[1:])
	}
	return cmdZmpop(inner, args[1:])
}

// WAIT numreplicas timeout — https://redis.io/commands/wait/: luatest has
// no replicas, so 0 once the arguments parse (waitCommand). The wire
// server waits out the timeout first when numreplicas is above 0, as the
// server does.
func cmdWait(c *cmdCtx, args []string) resp.Reply {
	// The timeout is read first (getTimeoutFromObjectOrReply, in
	// milliseconds), then the replica count.
	t, ok := parseInt(args[1])
	if !ok {
		return resp.ErrorReply("ERR timeout is not an integer or out of range")
	}
	if t < 0 {
		return resp.ErrorReply("ERR timeout is negative")
	}
	if _, ok := parseInt(args[0]); !ok {
		return errNotInt
	}
	return resp.IntReply(0)
}
