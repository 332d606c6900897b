// Commands from https://redis.io/commands/?group=generic

package luatest

import (
	"math"
	"sort"
	"strings"

	"github.com/luagen/luagen/luatest/resp"
)

var genericCommands = []*command{
	{name: "del", fn: cmdDel},
	{name: "unlink", fn: cmdDel},
	{name: "exists", fn: cmdExists},
	{name: "touch", fn: cmdExists},
	{name: "expire", fn: cmdExpire},
	{name: "pexpire", fn: cmdExpire},
	{name: "expireat", fn: cmdExpire},
	{name: "pexpireat", fn: cmdExpire},
	{name: "ttl", fn: cmdTTL},
	{name: "pttl", fn: cmdTTL},
	{name: "expiretime", fn: cmdTTL},
	{name: "pexpiretime", fn: cmdTTL},
	{name: "persist", fn: cmdPersist},
	{name: "type", fn: cmdType},
	{name: "keys", fn: cmdKeys},
	{name: "rename", fn: cmdRename},
	{name: "renamenx", fn: cmdRename},
	{name: "move", fn: cmdMove},
	{name: "copy", fn: cmdCopy},
	{name: "randomkey", fn: cmdRandomkey},
	{name: "object", fn: cmdObject},
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

// parseDB reads a database index as selectDb does: an integer
// (getIntFromObjectOrReply), then within 0..15.
func parseDB(s string) (int, *resp.Reply) {
	n, ok := parseInt(s)
	if !ok || n < math.MinInt32 || n > math.MaxInt32 {
		return 0, &errNotInt
	}
	if n < 0 || n >= numDBs {
		e := resp.ErrorReply("ERR DB index is out of range")
		return 0, &e
	}
	return int(n), nil
}

var errSameObject = resp.ErrorReply("ERR source and destination objects are the same")

// MOVE key db — https://redis.io/commands/move/ (the TTL moves with the
// value; 0 when the key is missing or db already has it).
func cmdMove(c *cmdCtx, args []string) resp.Reply {
	db, bad := parseDB(args[1])
	if bad != nil {
		return *bad
	}
	if db == c.r.dbIndex {
		return errSameObject
	}
	e := c.r.lookup(args[0])
	if e == nil || c.r.lookupIn(db, args[0]) != nil {
		return resp.IntReply(0)
	}
	delete(c.r.db, args[0])
	c.r.dbs[db][args[0]] = e
	return resp.IntReply(1)
}

// COPY source destination [DB destination-db] [REPLACE] —
// https://redis.io/commands/copy/ (a deep copy with the TTL).
func cmdCopy(c *cmdCtx, args []string) resp.Reply {
	db, replace := c.r.dbIndex, false
	for i := 2; i < len(args); i++ {
		switch {
		case strings.EqualFold(args[i], "REPLACE"):
			replace = true
		case strings.EqualFold(args[i], "DB") && i+1 < len(args):
			n, ok := parseInt(args[i+1])
			if !ok || n < math.MinInt32 || n > math.MaxInt32 {
				return errNotInt
			}
			db = int(n)
			i++
		default:
			return errSyntax
		}
	}
	if db < 0 || db >= numDBs {
		return resp.ErrorReply("ERR DB index is out of range")
	}
	if db == c.r.dbIndex && args[0] == args[1] {
		return errSameObject
	}
	e := c.r.lookup(args[0])
	if e == nil {
		return resp.IntReply(0)
	}
	if c.r.lookupIn(db, args[1]) != nil {
		if !replace {
			return resp.IntReply(0)
		}
	}
	c.r.dbs[db][args[1]] = e.clone()
	return resp.IntReply(1)
}

// RANDOMKEY — https://redis.io/commands/randomkey/ (luatest answers the
// first key in byte order: deterministic, where the server picks at random).
func cmdRandomkey(c *cmdCtx, args []string) resp.Reply {
	ks := c.r.keys("*")
	if len(ks) == 0 {
		return resp.NilReply
	}
	return resp.BulkReply(ks[0])
}

// OBJECT ENCODING|REFCOUNT|IDLETIME|FREQ|HELP key —
// https://redis.io/commands/object/. ENCODING follows the 7.0 defaults
// (hash listpack up to 512 entries, zset listpack up to 128, both of up to
// 64 bytes; intset up to 512 integers; embstr up to 44 bytes) from the value as it is now; the server never
// converts back, so a collection that grew and shrank may differ.
// REFCOUNT is 1, or INT_MAX for the shared integers 0..9999; IDLETIME is 0
// (the virtual clock has no access times); FREQ answers the server's error
// under the default noeviction policy.
func cmdObject(c *cmdCtx, args []string) resp.Reply {
	sub := strings.ToLower(args[0])
	if sub == "help" {
		return resp.BulkArray(objectHelp)
	}
	e := c.r.lookup(args[1])
	if e == nil {
		return resp.NilReply
	}
	switch sub {
	case "encoding":
		return resp.BulkReply(encodingOf(e))
	case "refcount":
		if n, ok := parseInt(e.str); e.kind == typeString && ok && n >= 0 && n < 10000 {
			return resp.IntReply(math.MaxInt32)
		}
		return resp.IntReply(1)
	case "idletime":
		return resp.IntReply(0)
	default: // freq
		return resp.ErrorReply("ERR An LFU maxmemory policy is not selected, access frequency not tracked. " +
			"Please note that when switching between policies at runtime LRU and LFU data will take some time to adjust.")
	}
}

var objectHelp = []string{
	"OBJECT <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
	"ENCODING <key>",
	"    Return the kind of internal representation used in order to store the value",
	"    associated with a <key>.",
	"FREQ <key>",
	"    Return the access frequency index of the <key>. The returned integer is",
	"    proportional to the logarithm of the recent access frequency of the key.",
	"IDLETIME <key>",
	"    Return the idle time of the <key>, that is the approximated number of",
	"    seconds elapsed since the last access to the key.",
	"REFCOUNT <key>",
	"    Return the number of references of the value associated with the specified",
	"    <key>.",
	"HELP",
	"    Prints this help.",
}

// encodingOf is the encoding OBJECT ENCODING reports for e under the 7.0
// default thresholds.
func encodingOf(e *entry) string {
	small := func(n, max int, items func(yield func(string) bool)) bool {
		if n > max {
			return false
		}
		ok := true
		items(func(s string) bool { ok = len(s) <= 64; return ok })
		return ok
	}
	switch e.kind {
	case typeString:
		if _, ok := parseInt(e.str); ok && len(e.str) <= 20 {
			return "int"
		}
		if len(e.str) <= 44 {
			return "embstr"
		}
		return "raw"
	case typeHash:
		if small(e.hash.len(), 512, func(y func(string) bool) {
			for _, f := range e.hash.fields {
				if !y(f) || !y(e.hash.values[f]) {
					return
				}
			}
		}) {
			return "listpack"
		}
		return "hashtable"
	case typeList:
		return "quicklist"
	case typeSet:
		if len(e.set) > 512 {
			return "hashtable"
		}
		for m := range e.set {
			if _, ok := parseInt(m); !ok {
				return "hashtable"
			}
		}
		return "intset"
	case typeZSet:
		if small(e.zset.len(), 128, func(y func(string) bool) {
			for m := range e.zset.scores {
				if !y(m) {
					return
				}
			}
		}) {
			return "listpack"
		}
		return "skiplist"
	}
	return "stream"
}
