// Commands from https://redis.io/commands/?group=pubsub

package luatest

import (
	"github.com/luagen/luagen/luatest/resp"
)

var pubsubCommands = []*command{
	{name: "publish", fn: cmdPublish},
	{name: "spublish", fn: cmdPublish},
}

// Event is a message a script published with PUBLISH or SPUBLISH. The fake
// server has no subscribers; tests read events with [Redis.Events].
type Event struct {
	Command string // "PUBLISH" or "SPUBLISH"
	Channel string
	Message string
}

// PUBLISH channel message — https://redis.io/commands/publish/ and
// SPUBLISH shardchannel message. Both answer 0 receivers: luatest records
// the message as an [Event] instead of delivering it.
func cmdPublish(c *cmdCtx, args []string) resp.Reply {
	cmd := "PUBLISH"
	if c.name == "spublish" {
		cmd = "SPUBLISH"
	}
	c.r.events = append(c.r.events, Event{Command: cmd, Channel: args[0], Message: args[1]})
	return resp.IntReply(0)
}
