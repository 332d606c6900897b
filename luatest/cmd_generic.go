// Commands from https://redis.io/commands/?group=generic

package luatest

import (
	"math"
	"sort"
	"strings"

	"github.com/luagen/luagen/luatest/resp"
)

var genericCommands = []*command{
	{name: "del", arity: -2, flags: fWrite, first: 1, last: -1, step: 1, fn: cmdDel},
	{name: "unlink", arity: -2, flags: fWrite, first: 1, last: -1, step: 1, fn: cmdDel},
	{name: "exists", arity: -2, first: 1, last: -1, step: 1, fn: cmdExists},
	{name: "touch", arity: -2, first: 1, last: -1, step: 1, fn: cmdExists},
	{name: "expire", arity: -3, flags: fWrite, first: 1, last: 1, step: 1, fn: cmdExpire},
	{name: "pexpire", arity: -3, flags: fWrite, first: 1, last: 1, step: 1, fn: cmdExpire},
	{name: "expireat", arity: -3, flags: fWrite, first: 1, last: 1, step: 1, fn: cmdExpire},
	{name: "pexpireat", arity: -3, flags: fWrite, first: 1, last: 1, step: 1, fn: cmdExpire},
	{name: "ttl", arity: 2, first: 1, last: 1, step: 1, fn: cmdTTL},
	{name: "pttl", arity: 2, first: 1, last: 1, step: 1, fn: cmdTTL},
	{name: "expiretime", arity: 2, first: 1, last: 1, step: 1, fn: cmdTTL},
	{name: "pexpiretime", arity: 2, first: 1, last: 1, step: 1, fn: cmdTTL},
	{name: "persist", arity: 2, flags: fWrite, first: 1, last: 1, step: 1, fn: cmdPersist},
	{name: "type", arity: 2, first: 1, last: 1, step: 1, fn: cmdType},
	{name: "keys", arity: 2, fn: cmdKeys},
	{name: "rename", arity: 3, flags: fWrite, first: 1, last: 2, step: 1, fn: cmdRename},
	{name: "renamenx", arity: 3, flags: fWrite, first: 1, last: 2, step: 1, fn: cmdRename},
}

// DEL key [key ...] — https://redis.io/commands/del/
// UNLINK key [key ...] — https://redis.io/commands/unlink/
func cmdDel(c *cmdCtx, args []string) resp.Reply {
	var n int64
	for _, k := range args {
		if c.r.del(k) {
			n++
		}
	}
	return resp.IntReply(n)
}

// EXISTS key [key ...] — https://redis.io/commands/exists/ (a key named
// twice counts twice). TOUCH answers the same count.
func cmdExists(c *cmdCtx, args []string) resp.Reply {
	var n int64
	for _, k := range args {
		if c.r.lookup(k) != nil {
			n++
		}
	}
	return resp.IntReply(n)
}

// EXPIRE key seconds [NX | XX | GT | LT] — https://redis.io/commands/expire/
// and PEXPIRE, EXPIREAT, PEXPIREAT (expireGenericCommand in expire.c). A
// time at or before now deletes the key and answers 1.
func cmdExpire(c *cmdCtx, args []string) resp.Reply {
	var nx, xx, gt, lt bool
	for _, a := range args[2:] {
		switch strings.ToUpper(a) {
		case "NX":
			nx = true
		case "XX":
			xx = true
		case "GT":
			gt = true
		case "LT":
			lt = true
		default:
			return resp.ErrorReply("ERR Unsupported option " + a)
		}
	}
	if nx && (xx || gt || lt) {
		return resp.ErrorReply("ERR NX and XX, GT or LT options at the same time are not compatible")
	}
	if gt && lt {
		return resp.ErrorReply("ERR GT and LT options at the same time are not compatible")
	}
	when, ok := parseInt(args[1])
	if !ok {
		return errNotInt
	}
	if c.name == "expire" || c.name == "expireat" {
		if when > math.MaxInt64/1000 || when < math.MinInt64/1000 {
			return c.errExpireTime()
		}
		when *= 1000
	}
	if c.name == "expire" || c.name == "pexpire" {
		if when > math.MaxInt64-c.nowMs() {
			return c.errExpireTime()
		}
		when += c.nowMs()
	}
	e := c.r.lookup(args[0])
	if e == nil {
		return resp.IntReply(0)
	}
	cur := e.expireAt
	switch {
	case nx && cur != 0, xx && cur == 0, gt && (cur == 0 || when <= cur), lt && cur != 0 && when >= cur:
		return resp.IntReply(0)
	}
	if when <= c.nowMs() {
		c.r.del(args[0])
		return resp.IntReply(1)
	}
	e.expireAt = when
	return resp.IntReply(1)
}

// TTL key — https://redis.io/commands/ttl/ (seconds, rounded), PTTL (ms),
// EXPIRETIME and PEXPIRETIME (absolute Unix time): -2 for a missing key, -1
// for a key without expiry.
func cmdTTL(c *cmdCtx, args []string) resp.Reply {
	e := c.r.lookup(args[0])
	if e == nil {
		return resp.IntReply(-2)
	}
	if e.expireAt == 0 {
		return resp.IntReply(-1)
	}
	switch c.name {
	case "expiretime":
		return resp.IntReply((e.expireAt + 500) / 1000)
	case "pexpiretime":
		return resp.IntReply(e.expireAt)
	}
	ttl := max(e.expireAt-c.nowMs(), 0)
	if c.name == "ttl" {
		return resp.IntReply((ttl + 500) / 1000)
	}
	return resp.IntReply(ttl)
}

// PERSIST key — https://redis.io/commands/persist/
func cmdPersist(c *cmdCtx, args []string) resp.Reply {
	e := c.r.lookup(args[0])
	if e == nil || e.expireAt == 0 {
		return resp.IntReply(0)
	}
	e.expireAt = 0
	return resp.IntReply(1)
}

// TYPE key — https://redis.io/commands/type/ (a status reply; "none" for a
// missing key).
func cmdType(c *cmdCtx, args []string) resp.Reply {
	e := c.r.lookup(args[0])
	if e == nil {
		return resp.StatusReply("none")
	}
	return resp.StatusReply(typeNames[e.kind])
}

// KEYS pattern — https://redis.io/commands/keys/ (glob-style). Redis
// answers in hash-table order; luatest sorts the keys.
func cmdKeys(c *cmdCtx, args []string) resp.Reply {
	return resp.BulkArray(c.r.keys(args[0]))
}

func (r *Redis) keys(pattern string) []string {
	out := []string{}
	for k := range r.db {
		if r.lookup(k) != nil && globMatch(pattern, k, false) {
			out = append(out, k)
		}
	}
	sort.Strings(out)
	return out
}

// RENAME key newkey — https://redis.io/commands/rename/ (the TTL moves
// with the value). RENAMENX answers 0 when newkey exists.
func cmdRename(c *cmdCtx, args []string) resp.Reply {
	e := c.r.lookup(args[0])
	if e == nil {
		return errNoSuchKey
	}
	if c.name == "renamenx" {
		if args[0] == args[1] {
			return resp.IntReply(0)
		}
		if c.r.lookup(args[1]) != nil {
			return resp.IntReply(0)
		}
	}
	delete(c.r.db, args[0])
	c.r.db[args[1]] = e
	if c.name == "renamenx" {
		return resp.IntReply(1)
	}
	return resp.OK
}

// globMatch is stringmatchlen from util.c: '*', '?', '[...]' with '^'
// negation and ranges, '\' escapes.
func globMatch(pattern, s string, nocase bool) bool {
	for len(pattern) > 0 {
		switch pattern[0] {
		case '*':
			for len(pattern) > 1 && pattern[1] == '*' {
				pattern = pattern[1:]
			}
			if len(pattern) == 1 {
				return true
			}
			for i := 0; i <= len(s); i++ {
				if globMatch(pattern[1:], s[i:], nocase) {
					return true
				}
			}
			return false
		case '?':
			if s == "" {
				return false
			}
			s = s[1:]
		case '[':
			if s == "" {
				return false
			}
			pattern = pattern[1:]
			not := len(pattern) > 0 && pattern[0] == '^'
			if not {
				pattern = pattern[1:]
			}
			match := false
			for {
				if len(pattern) == 0 {
					break
				}
				if pattern[0] == '\\' && len(pattern) >= 2 {
					pattern = pattern[1:]
					if pattern[0] == s[0] {
						match = true
					}
				} else if pattern[0] == ']' {
					break
				} else if len(pattern) >= 3 && pattern[1] == '-' {
					lo, hi := pattern[0], pattern[2]
					if lo > hi {
						lo, hi = hi, lo
					}
					ch := s[0]
					if nocase {
						lo, hi, ch = lower(lo), lower(hi), lower(ch)
					}
					if ch >= lo && ch <= hi {
						match = true
					}
					pattern = pattern[2:]
				} else if eqByte(pattern[0], s[0], nocase) {
					match = true
				}
				pattern = pattern[1:]
			}
			if len(pattern) == 0 {
				// stringmatchlen: a missing ']' keeps the last pattern char.
				return false
			}
			if not {
				match = !match
			}
			if !match {
				return false
			}
			s = s[1:]
		case '\\':
			if len(pattern) >= 2 {
				pattern = pattern[1:]
			}
			fallthrough
		default:
			if s == "" || !eqByte(pattern[0], s[0], nocase) {
				return false
			}
			s = s[1:]
		}
		pattern = pattern[1:]
		if s == "" {
			for len(pattern) > 0 && pattern[0] == '*' {
				pattern = pattern[1:]
			}
			break
		}
	}
	return pattern == "" && s == ""
}

func lower(b byte) byte {
	if b >= 'A' && b <= 'Z' {
		return b + 32
	}
	return b
}

func eqByte(a, b byte, nocase bool) bool {
	if nocase {
		return lower(a) == lower(b)
	}
	return a == b
}
