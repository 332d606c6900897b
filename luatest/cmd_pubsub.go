// Commands from https://redis.io/commands/?group=pubsub

package luatest

import (
	"github.com/luagen/luagen/luatest/resp"
)

var pubsubCommands = []*command{
	{name: "publish", fn: cmdPublish},
	{name: "spublish", fn: cmdPublish},
}

// Event is a message published with PUBLISH or SPUBLISH, by a script or a
// client; tests read events with [Redis.Events].
type Event struct {
	Command string // "PUBLISH" or "SPUBLISH"
	Channel string
	Message string
}

// PUBLISH channel message — https://redis.io/commands/publish/ and
// SPUBLISH shardchannel message. luatest records the message as an
// [Event]; the subscribers of a wire server (package luatest/server)
// receive it too, and the reply counts them (0 without a server).
func cmdPublish(c *cmdCtx, args []string) resp.Reply {
	cmd := "PUBLISH"
	if c.name == "spublish" {
		cmd = "SPUBLISH"
	}
	c.r.events = append(c.r.events, Event{Command: cmd, Channel: args[0], Message: args[1]})
	if c.r.observer != nil {
		return resp.IntReply(c.r.observer.Publish(cmd == "SPUBLISH", args[0], args[1]))
	}
	return resp.IntReply(0)
}
