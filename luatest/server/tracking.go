package server

import (
	"strings"

	rediscmd "github.com/luagen/luagen/internal/commands"
	"github.com/luagen/luagen/luatest/resp"
)

// Client-side caching, default (key) mode, as tracking.c does it for
// RESP3 clients: the keys a tracking client reads are remembered, and the
// first write to one afterwards sends that client an "invalidate" push
// with the key and forgets it; FLUSHDB and FLUSHALL invalidate everything
// (a null key list). OPTIN tracks the command after CLIENT CACHING YES
// (the whole MULTI when it comes before one), OPTOUT every command but
// the one after CLIENT CACHING NO. Like the server, the table is keyed by
// the key's name alone, in every database.

// tracking is a connection's CLIENT TRACKING state.
type tracking struct {
	on      bool
	optIn   bool
	optOut  bool
	caching int8 // CLIENT CACHING: 1 yes, -1 no, 0 not given, for the next command
}

// clientTracking is CLIENT TRACKING ON|OFF [OPTIN] [OPTOUT] [NOLOOP];
// REDIRECT, BCAST and PREFIX are refused, and so is RESP2, where
// invalidations need REDIRECT.
func (c *conn) clientTracking(args []string) {
	switch strings.ToLower(args[0]) {
	case "off":
		c.s.mu.Lock()
		c.untrackLocked()
		c.track = tracking{}
		c.s.mu.Unlock()
		c.write(resp.OK)
		return
	case "on":
	default:
		c.write(resp.ErrorReply("ERR syntax error"))
		return
	}
	t := tracking{on: true}
	for _, o := range args[1:] {
		switch strings.ToLower(o) {
		case "optin":
			t.optIn = true
		case "optout":
			t.optOut = true
		case "noloop":
		case "bcast", "redirect", "prefix":
			c.write(resp.ErrorReply("ERR luatest: CLIENT TRACKING " + strings.ToUpper(o) + " is not supported; use the default mode over RESP3"))
			return
		default:
			c.write(resp.ErrorReply("ERR syntax error"))
			return
		}
	}
	if t.optIn && t.optOut {
		c.write(resp.ErrorReply("ERR You can't specify both OPTIN mode and OPTOUT mode"))
		return
	}
	if c.proto.Load() != 3 {
		c.write(resp.ErrorReply("ERR luatest: CLIENT TRACKING over RESP2 needs REDIRECT, which is not supported; use RESP3"))
		return
	}
	c.track = t
	c.write(resp.OK)
}

// clientCaching is CLIENT CACHING YES|NO.
func (c *conn) clientCaching(arg string) {
	t := &c.track
	yes, no := strings.EqualFold(arg, "yes"), strings.EqualFold(arg, "no")
	switch {
	case !t.on:
		c.write(resp.ErrorReply("ERR CLIENT CACHING can be called only when the client is in tracking mode with OPTIN or OPTOUT mode enabled"))
	case yes && !t.optIn:
		c.write(resp.ErrorReply("ERR CLIENT CACHING YES is only valid when tracking is enabled in OPTIN mode."))
	case no && !t.optOut:
		c.write(resp.ErrorReply("ERR CLIENT CACHING NO is only valid when tracking is enabled in OPTOUT mode."))
	case !yes && !no:
		c.write(resp.ErrorReply("ERR syntax error"))
	default:
		t.caching = -1
		if yes {
			t.caching = 1
		}
		c.write(resp.OK)
	}
}

// trackRead remembers the keys of a read-only command args for a
// tracking client, before it runs (so a write that comes between is
// invalidated too).
func (c *conn) trackRead(args []string) {
	t := c.track
	if !t.on || t.optIn && t.caching != 1 || t.optOut && t.caching == -1 {
		return
	}
	info, ok := rediscmd.LookupArgs(args)
	if !ok || info.Flags&rediscmd.ReadOnly == 0 {
		return
	}
	keys := info.Keys(args)
	if len(keys) == 0 {
		return
	}
	s := c.s
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, k := range keys {
		cs := s.tracked[k]
		if cs == nil {
			cs = map[*conn]struct{}{}
			s.tracked[k] = cs
		}
		cs[c] = struct{}{}
		if c.trackedKeys == nil {
			c.trackedKeys = map[string]struct{}{}
		}
		c.trackedKeys[k] = struct{}{}
	}
}

// endCommand clears CLIENT CACHING's flag after the command it was for
// (a MULTI keeps it until EXEC).
func (c *conn) endCommand(name string) {
	if name != "client" && !c.multi {
		c.track.caching = 0
	}
}

// untrackLocked forgets the keys the connection read, with s.mu held.
func (c *conn) untrackLocked() {
	for k := range c.trackedKeys {
		if cs := c.s.tracked[k]; cs != nil {
			delete(cs, c)
			if len(cs) == 0 {
				delete(c.s.tracked, k)
			}
		}
	}
	c.trackedKeys = nil
}

// invalidateLocked sends the invalidations a change of key ("" for
// every key: a flush) makes, with s.mu held.
func (s *Server) invalidateLocked(key string) {
	if len(s.tracked) == 0 {
		return
	}
	if key == "" {
		seen := map[*conn]bool{}
		for _, cs := range s.tracked {
			for c := range cs {
				if !seen[c] {
					seen[c] = true
					c.send(func(b []byte) []byte { return append(b, ">2\r\n$10\r\ninvalidate\r\n_\r\n"...) })
					c.trackedKeys = nil
				}
			}
		}
		clear(s.tracked)
		return
	}
	for c := range s.tracked[key] {
		c.send(func(b []byte) []byte {
			return appendBulk(append(append(b, ">2\r\n$10\r\ninvalidate\r\n"...), "*1\r\n"...), key)
		})
		delete(c.trackedKeys, key)
	}
	delete(s.tracked, key)
}
