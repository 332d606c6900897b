package server

import (
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/luagen/luagen/luatest/resp"
)

// block runs a blocking command (BLPOP, BRPOP, BLMOVE, BRPOPLPUSH,
// BZPOPMIN, BZPOPMAX, BLMPOP, BZMPOP, XREAD and XREADGROUP with BLOCK,
// WAIT): the engine answers it at once, with a null when there is
// nothing to take; then the connection waits for the keyspace to change
// and asks again, until an answer, the timeout (a null array, as
// replyToBlockedClientTimedOut sends) or the client leaving (no reply).
//
// Timeouts run on the wall clock, since the client waits on it too;
// expiry stays on the virtual clock. When several connections wait for
// the same key, any one of them may get the element, not necessarily the
// one that waited longest as on the server.
func (c *conn) block(name string, args []string) {
	proto := int(c.proto.Load())
	timeout, ok := blockTimeout(name, args)
	if !ok { // not blocking (XREAD without BLOCK), or an argument the engine refuses
		c.write(c.s.eng.Do(&c.db, proto, args))
		return
	}
	defer c.blocked.Store(false)
	if name == "wait" {
		c.wait(args, timeout)
		return
	}
	deadline, stop := after(timeout)
	defer stop()
	if name == "xread" {
		args = c.resolveDollar(args)
	}
	for {
		// The channel is taken before the command runs, so a write after
		// it wakes the connection.
		wake := c.s.waitChan()
		reply := c.s.eng.Do(&c.db, proto, args)
		if reply.Kind != resp.Nil {
			c.write(reply)
			return
		}
		c.blocked.Store(true)
		c.flush() // what came before the blocked command
		select {
		case <-wake:
		case <-deadline:
			c.write(resp.NullArray)
			return
		case <-c.gone:
			return
		}
	}
}

// wait is WAIT: 0 replicas, at once when none is asked for, else after
// the timeout (never, for 0) as the server without replicas answers.
func (c *conn) wait(args []string, timeout time.Duration) {
	reply := c.s.eng.Do(&c.db, int(c.proto.Load()), args)
	if n, _ := strconv.ParseInt(args[1], 10, 64); reply.Kind == resp.Error || n <= 0 {
		c.write(reply)
		return
	}
	deadline, stop := after(timeout)
	defer stop()
	c.blocked.Store(true)
	c.flush()
	select {
	case <-deadline:
		c.write(reply)
	case <-c.gone:
	}
}

// blockTimeout reads a blocking command's timeout (0: forever); ok is
// false when it does not parse (the engine answers the error) or the
// command does not block.
func blockTimeout(name string, args []string) (time.Duration, bool) {
	var s string
	unit := time.Second
	switch name {
	case "blmpop", "bzmpop":
		s = args[1]
	case "wait":
		s, unit = args[2], time.Millisecond
	case "xread", "xreadgroup":
		for i := 1; i+1 < len(args); i++ {
			switch strings.ToLower(args[i]) {
			case "streams":
				return 0, false
			case "block":
				ms, err := strconv.ParseInt(args[i+1], 10, 64)
				if err != nil || ms < 0 {
					return 0, false
				}
				return time.Duration(ms) * time.Millisecond, true
			}
		}
		return 0, false
	default:
		s = args[len(args)-1]
	}
	f, err := strconv.ParseFloat(s, 64)
	if err != nil || f < 0 || math.IsInf(f, 0) || math.IsNaN(f) {
		return 0, false
	}
	return time.Duration(f * float64(unit)), true
}

// resolveDollar replaces XREAD's "$" IDs with each stream's last ID now
// (0-0 for a missing stream), so the command asked again after a change
// returns what came after the first ask, as the blocked command does.
func (c *conn) resolveDollar(args []string) []string {
	i := len(args) - 1
	for i > 0 && !strings.EqualFold(args[i], "streams") {
		i--
	}
	n := (len(args) - i - 1) / 2
	if i == 0 || n == 0 {
		return args
	}
	out := append([]string(nil), args...)
	db := c.db
	for j := 0; j < n; j++ {
		if out[i+1+n+j] != "$" {
			continue
		}
		last := "0-0"
		info := c.s.eng.Do(&db, 2, []string{"XINFO", "STREAM", out[i+1+j]})
		for k := 0; k+1 < len(info.Elems); k += 2 {
			if info.Elems[k].Str == "last-generated-id" {
				last = info.Elems[k+1].Str
			}
		}
		out[i+1+n+j] = last
	}
	return out
}

// after is a channel that fires once timeout has passed (never for 0, a
// wait without end) and the function that stops its timer.
func after(timeout time.Duration) (<-chan time.Time, func()) {
	if timeout <= 0 {
		return nil, func() {}
	}
	t := time.NewTimer(timeout)
	return t.C, func() { t.Stop() }
}
