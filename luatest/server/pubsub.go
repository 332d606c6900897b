package server

import (
	"slices"
	"strings"

	"github.com/luagen/luagen/luatest/resp"
)

// subscribed reports whether the connection has any subscription.
func (c *conn) subscribed() bool {
	c.s.mu.Lock()
	defer c.s.mu.Unlock()
	return c.nsubs > 0
}

// table returns the server's and the connection's sets for a
// (un)subscribe command's kind: "", "p" or "s".
func (c *conn) table(kind string) (server map[string]map[*conn]struct{}, own map[string]struct{}) {
	switch kind {
	case "p":
		return c.s.patterns, c.psubs
	case "s":
		return c.s.shards, c.ssubs
	}
	return c.s.channels, c.subs
}

// kindOf is "", "p" or "s" for a (un)subscribe command's name.
func kindOf(name string) string {
	name = strings.TrimPrefix(name, "un")
	if name[0] == 'p' || name[0] == 's' && name != "subscribe" {
		return name[:1]
	}
	return ""
}

// SUBSCRIBE channel [channel ...], PSUBSCRIBE pattern [pattern ...],
// SSUBSCRIBE shardchannel [...] — https://redis.io/commands/subscribe/:
// one confirmation per channel, with the count of the connection's
// subscriptions (SSUBSCRIBE counts shard channels alone).
func (c *conn) subscribe(name string, chans []string) {
	kind := kindOf(name)
	s := c.s
	s.mu.Lock()
	defer s.mu.Unlock()
	server, own := c.table(kind)
	for _, ch := range chans {
		if _, ok := own[ch]; !ok {
			own[ch] = struct{}{}
			c.nsubs++
			cs := server[ch]
			if cs == nil {
				cs = map[*conn]struct{}{}
				server[ch] = cs
			}
			cs[c] = struct{}{}
		}
		n := c.countLocked(kind)
		c.pushCount(name, &n, &ch)
	}
}

// countLocked is the count a (un)subscribe confirmation carries.
func (c *conn) countLocked(kind string) int64 {
	if kind == "s" {
		return int64(len(c.ssubs))
	}
	return int64(len(c.subs) + len(c.psubs))
}

// UNSUBSCRIBE [channel ...], PUNSUBSCRIBE, SUNSUBSCRIBE: without
// arguments, every subscription of the kind, or one confirmation with a
// null channel when there is none.
func (c *conn) unsubscribe(name string, chans []string) {
	kind := kindOf(name)
	s := c.s
	s.mu.Lock()
	defer s.mu.Unlock()
	_, own := c.table(kind)
	if len(chans) == 0 {
		for ch := range own {
			chans = append(chans, ch)
		}
		slices.Sort(chans)
		if len(chans) == 0 {
			n := c.countLocked(kind)
			c.pushCount(name, &n, nil)
			return
		}
	}
	for _, ch := range chans {
		c.dropLocked(kind, ch)
		n := c.countLocked(kind)
		c.pushCount(name, &n, &ch)
	}
}

// dropLocked removes one subscription, if the connection has it.
func (c *conn) dropLocked(kind, ch string) {
	server, own := c.table(kind)
	if _, ok := own[ch]; !ok {
		return
	}
	delete(own, ch)
	c.nsubs--
	if cs := server[ch]; cs != nil {
		delete(cs, c)
		if len(cs) == 0 {
			delete(server, ch)
		}
	}
}

// unsubscribeAllLocked drops every subscription without a reply.
func (c *conn) unsubscribeAllLocked() {
	for _, kind := range []string{"", "p", "s"} {
		_, own := c.table(kind)
		for ch := range own {
			c.dropLocked(kind, ch)
		}
	}
}

// PUBSUB CHANNELS [pattern] | NUMSUB [channel ...] | NUMPAT |
// SHARDCHANNELS [pattern] | SHARDNUMSUB [channel ...] —
// https://redis.io/commands/pubsub/; HELP and errors from the engine.
func (c *conn) pubsub(args []string, do doFunc) {
	s := c.s
	proto := int(c.proto.Load())
	sub := strings.ToLower(args[1])
	s.mu.Lock()
	defer s.mu.Unlock()
	switch {
	case (sub == "channels" || sub == "shardchannels") && len(args) <= 3:
		table := s.channels
		if sub == "shardchannels" {
			table = s.shards
		}
		var out []string
		for ch := range table {
			if len(args) == 2 || s.eng.Match(args[2], ch) {
				out = append(out, ch)
			}
		}
		slices.Sort(out)
		c.write(resp.BulkArray(out))
	case sub == "numsub" || sub == "shardnumsub":
		table := s.channels
		if sub == "shardnumsub" {
			table = s.shards
		}
		out := resp.ArrayReply()
		for _, ch := range args[2:] {
			out.Elems = append(out.Elems, resp.BulkReply(ch), resp.IntReply(int64(len(table[ch]))))
		}
		c.write(out)
	case sub == "numpat" && len(args) == 2:
		c.write(resp.IntReply(int64(len(s.patterns))))
	default:
		s.mu.Unlock()
		c.write(do(&c.db, proto, args))
		s.mu.Lock()
	}
}
