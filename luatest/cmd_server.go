// Commands from https://redis.io/commands/?group=server and
// https://redis.io/commands/?group=connection

package luatest

import (
	"strconv"
	"strings"

	"github.com/luagen/luagen/luatest/resp"
)

var serverCommands = []*command{
	{name: "ping", arity: -1, fn: cmdPing},
	{name: "echo", arity: 2, fn: cmdEcho},
	{name: "time", arity: 1, fn: cmdTime},
	{name: "dbsize", arity: 1, fn: cmdDbsize},
	{name: "flushall", arity: -1, flags: fWrite, fn: cmdFlush},
	{name: "flushdb", arity: -1, flags: fWrite, fn: cmdFlush},
	{name: "hello", arity: -1, flags: fNoScript, fn: cmdHello},
}

// PING [message] — https://redis.io/commands/ping/
func cmdPing(c *cmdCtx, args []string) resp.Reply {
	switch len(args) {
	case 0:
		return resp.StatusReply("PONG")
	case 1:
		return resp.BulkReply(args[0])
	}
	return errArity(c.name)
}

// ECHO message — https://redis.io/commands/echo/
func cmdEcho(c *cmdCtx, args []string) resp.Reply { return resp.BulkReply(args[0]) }

// TIME — https://redis.io/commands/time/ (the virtual clock: Unix seconds
// and microseconds, as two bulk strings).
func cmdTime(c *cmdCtx, args []string) resp.Reply {
	us := c.r.now.UnixMicro()
	return resp.BulkArray([]string{strconv.FormatInt(us/1e6, 10), strconv.FormatInt(us%1e6, 10)})
}

// DBSIZE — https://redis.io/commands/dbsize/
func cmdDbsize(c *cmdCtx, args []string) resp.Reply {
	return resp.IntReply(int64(len(c.r.keys("*"))))
}

// FLUSHALL [ASYNC | SYNC] — https://redis.io/commands/flushall/ and FLUSHDB.
func cmdFlush(c *cmdCtx, args []string) resp.Reply {
	if len(args) > 1 {
		return errSyntax
	}
	if len(args) == 1 {
		if m := strings.ToUpper(args[0]); m != "ASYNC" && m != "SYNC" {
			return errSyntax
		}
	}
	clear(c.r.db)
	return resp.OK
}

// HELLO — https://redis.io/commands/hello/ is refused: the fake server has
// no connections; pick the protocol per call instead ([Redis.Command]).
func cmdHello(c *cmdCtx, args []string) resp.Reply {
	return resp.ErrorReply("ERR luatest: HELLO is not supported; choose the protocol per call")
}
