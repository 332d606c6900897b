// Commands from https://redis.io/commands/?group=generic

package luatest

import (
	"cmp"
	"math"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/luagen/luagen/internal/lua51"
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
	{name: "scan", fn: cmdScan},
	{name: "hscan", fn: cmdScan},
	{name: "sscan", fn: cmdScan},
	{name: "zscan", fn: cmdScan},
	{name: "sort", fn: cmdSort, keys: sortKeys},
	{name: "sort_ro", fn: cmdSort},
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
		return 0, errReply("ERR DB index is out of range")
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
			// copyCommand checks the index as it reads it, before the
			// options after it: COPY a b DB 99 BOGUS is out of range.
			n, ok := parseInt(args[i+1])
			if !ok || n < math.MinInt32 || n > math.MaxInt32 {
				return errNotInt
			}
			if n < 0 || n >= numDBs {
				return resp.ErrorReply("ERR DB index is out of range")
			}
			db = int(n)
			i++
		default:
			return errSyntax
		}
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
		return helpReply("object")
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

// encodingOf is the encoding OBJECT ENCODING reports for e under the 7.0
// default thresholds: from the value as it is now, except that a
// collection once converted to its large encoding keeps it (e.wide, which
// noteEncoding records after every write command).
func encodingOf(e *entry) string {
	small := func(n, max int, items func(yield func(string) bool)) bool {
		if n > max {
			return false
		}
		ok := true
		if !e.packed {
			items(func(s string) bool { ok = len(s) <= 64; return ok })
		}
		return ok
	}
	switch e.kind {
	case typeString:
		if e.raw {
			return "raw"
		}
		if _, ok := parseInt(e.str); ok && !e.noInt && len(e.str) <= 20 {
			return "int"
		}
		if len(e.str) <= 44 {
			return "embstr"
		}
		return "raw"
	case typeHash:
		if !e.wide && small(e.hash.len(), hashMaxListpackEntries, func(y func(string) bool) {
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
		if e.wide || len(e.set) > setMaxIntsetEntries {
			return "hashtable"
		}
		for m := range e.set {
			if _, ok := parseInt(m); !ok {
				return "hashtable"
			}
		}
		return "intset"
	case typeZSet:
		if !e.wide && small(e.zset.len(), zsetMaxListpackEntries, func(y func(string) bool) {
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

// parseCursor is parseScanCursorOrReply: strtoul over the whole string.
func parseCursor(s string) (uint64, bool) {
	if s == "" || isSpace(s[0]) {
		return 0, false
	}
	neg := s[0] == '-'
	d := strings.TrimPrefix(strings.TrimPrefix(s, "-"), "+")
	n, err := strconv.ParseUint(d, 10, 64)
	if err != nil {
		return 0, false
	}
	if neg {
		n = -n
	}
	return n, true
}

// scanKinds is the type each of HSCAN, SSCAN and ZSCAN iterates.
var scanKinds = map[string]keyType{"hscan": typeHash, "sscan": typeSet, "zscan": typeZSet}

// SCAN cursor [MATCH pattern] [COUNT count] [TYPE type] —
// https://redis.io/commands/scan/, and HSCAN, SSCAN, ZSCAN key cursor
// [MATCH pattern] [COUNT count].
//
// A collection in a compact encoding (listpack, intset) answers every
// element at once, in its encoding's order, with cursor 0, whatever the
// cursor and COUNT, as the server does. Otherwise (the keyspace, hashtable
// and skiplist encodings) each element has a fixed place: scanHash of its
// name (key, field, member), a 53-bit hash that depends on nothing else.
// A reply holds the elements whose hash is >= cursor, in hash order: the
// first COUNT of them and every other element sharing the last one's hash
// (a tie is never split). The next cursor is that hash + 1, or 0 when no
// element has a greater hash. MATCH and TYPE filter the reply afterwards,
// so a reply may be empty with a non-zero cursor, as on the server.
//
// What holds, as the server guarantees it and a little more: a full
// iteration (from cursor 0 until 0 comes back) returns every element that
// is present from its start to its end, whatever the script deletes, adds
// or changes in between; no element comes back twice (the server may
// repeat elements when its hash table is resized during an iteration); an
// element added or deleted during the iteration may or may not be
// returned. How the cursors differ from the server's: the server's cursor
// is a bucket index of its hash table in reverse-binary order, below the
// table size and dependent on the hash seed it draws at start, and it
// answers whole buckets, so about COUNT elements; luatest's cursors are
// hash values of at most 2^53 (exact as Lua numbers, so a script that
// passes tonumber(cursor) back still works), each reply takes exactly
// COUNT elements before MATCH and TYPE (more only on a hash tie, fewer at
// the end), and any cursor is accepted, a foreign one resuming at that
// hash.
func cmdScan(c *cmdCtx, args []string) resp.Reply {
	var key string
	if c.name != "scan" {
		key, args = args[0], args[1:]
	}
	cursor, ok := parseCursor(args[0])
	if !ok {
		return resp.ErrorReply("ERR invalid cursor")
	}
	// HSCAN, SSCAN and ZSCAN look the key up before they read their options
	// (hscanCommand and its peers, then scanGenericCommand): a missing key
	// answers an empty scan whatever follows the cursor.
	var e *entry
	if c.name != "scan" {
		var wrong bool
		if e, wrong = c.r.lookupType(key, scanKinds[c.name]); wrong {
			return errWrongType
		}
		if e == nil {
			return resp.ArrayReply(resp.BulkReply("0"), resp.ArrayReply())
		}
	}
	count, pattern, typ := int64(10), "*", ""
	for i := 1; i < len(args); i++ {
		opt := strings.ToUpper(args[i])
		if i+1 >= len(args) {
			return errSyntax
		}
		switch {
		case opt == "COUNT":
			n, ok := parseInt(args[i+1])
			if !ok {
				return errNotInt
			}
			if n < 1 {
				return errSyntax
			}
			count = n
		case opt == "MATCH":
			pattern = args[i+1]
		case opt == "TYPE" && c.name == "scan":
			typ = strings.ToLower(args[i+1])
		default:
			return errSyntax
		}
		i++
	}
	var names []string            // keys, fields or members
	var value func(string) string // a field's value or a member's score; nil for keys and set members
	var compact func() []string   // the whole collection in its compact encoding's order; nil otherwise
	if c.name == "scan" {
		for k := range c.r.db {
			if c.r.lookup(k) != nil {
				names = append(names, k)
			}
		}
	} else {
		enc := encodingOf(e)
		isCompact := enc == "listpack" || enc == "intset"
		switch e.kind {
		case typeHash:
			names, compact = e.hash.fields, func() []string { return e.hash.fields }
			value = func(f string) string { return e.hash.values[f] }
		case typeSet:
			compact = func() []string { return setMembers(e.set) }
			if !isCompact {
				names = make([]string, 0, len(e.set))
				for m := range e.set {
					names = append(names, m)
				}
			}
		case typeZSet:
			compact = e.zset.members
			value = func(m string) string { return resp.FormatDouble(e.zset.scores[m]) }
			if !isCompact {
				names = make([]string, 0, e.zset.len())
				for m := range e.zset.scores {
					names = append(names, m)
				}
			}
		}
		if !isCompact {
			compact = nil
		}
	}
	var page []string
	next := uint64(0)
	if compact != nil {
		page = compact()
	} else {
		page, next = scanPage(names, cursor, count)
	}
	out := []string{}
	for _, name := range page {
		if !globMatch(pattern, name, false) {
			continue
		}
		if typ != "" {
			if e := c.r.lookup(name); e == nil || typeNames[e.kind] != typ {
				continue
			}
		}
		out = append(out, name)
		if value != nil {
			out = append(out, value(name))
		}
	}
	return resp.ArrayReply(resp.BulkReply(strconv.FormatUint(next, 10)), resp.BulkArray(out))
}

// scanHashBits is the width of scanHash: a cursor (a hash + 1) stays at
// most 2^53, which a Lua number holds exactly and redis.call's %.17g
// writes back as the same integer.
const scanHashBits = 53

// scanHash is an element's fixed place in SCAN order: 64-bit FNV-1a,
// mixed by MurmurHash3's finalizer so that similar names spread, cut to
// scanHashBits. It depends on the name only, so cursors are the same in
// every run.
func scanHash(s string) uint64 {
	h := uint64(14695981039346656037)
	for i := 0; i < len(s); i++ {
		h ^= uint64(s[i])
		h *= 1099511628211
	}
	h ^= h >> 33
	h *= 0xff51afd7ed558ccd
	h ^= h >> 33
	h *= 0xc4ceb9fe1a85ec53
	h ^= h >> 33
	return h >> (64 - scanHashBits)
}

// scanPage is one reply of a SCAN over names (see cmdScan): the count
// names with the smallest hashes >= cursor, plus those tied with the last
// of them, in hash order (ties by name), and the next cursor. It costs
// O(n log count), so a full iteration costs O(n²/count · log count).
func scanPage(names []string, cursor uint64, count int64) (page []string, next uint64) {
	hs := make([]uint64, len(names))
	// top is a max-heap of the count smallest hashes >= cursor so far.
	top := make([]uint64, 0, min(count, int64(len(names))))
	for i, n := range names {
		h := scanHash(n)
		hs[i] = h
		if h < cursor {
			continue
		}
		switch {
		case int64(len(top)) < count:
			top = append(top, h)
			for j := len(top) - 1; j > 0 && top[(j-1)/2] < top[j]; j = (j - 1) / 2 {
				top[(j-1)/2], top[j] = top[j], top[(j-1)/2]
			}
		case h < top[0]:
			top[0] = h
			for j := 0; ; {
				l, big := 2*j+1, j
				if l < len(top) && top[l] > top[big] {
					big = l
				}
				if l+1 < len(top) && top[l+1] > top[big] {
					big = l + 1
				}
				if big == j {
					break
				}
				top[j], top[big] = top[big], top[j]
				j = big
			}
		}
	}
	if len(top) == 0 {
		return nil, 0
	}
	last, more := top[0], false
	type el struct {
		h    uint64
		name string
	}
	var got []el
	for i, h := range hs {
		switch {
		case h > last:
			more = true
		case h >= cursor:
			got = append(got, el{h, names[i]})
		}
	}
	slices.SortFunc(got, func(a, b el) int {
		if a.h != b.h {
			return cmp.Compare(a.h, b.h)
		}
		return strings.Compare(a.name, b.name)
	})
	page = make([]string, len(got))
	for i, e := range got {
		page[i] = e.name
	}
	if more {
		next = last + 1
	}
	return page, next
}

// sortKeys are SORT's keys for the KEYS check: the sorted key and the
// STORE destination (the server's key specs leave STORE "unknown"). BY and
// GET patterns name keys too; like the server's specs, they are not checked.
func sortKeys(args []string) []string {
	ks := []string{args[0]}
	for i := 1; i+1 < len(args); i++ {
		if strings.EqualFold(args[i], "STORE") {
			ks = append(ks, args[i+1])
		}
	}
	return ks
}

// sortArgs is what SORT and SORT_RO parse.
type sortArgs struct {
	by, store     string   // BY pattern, STORE destination
	gets          []string // GET patterns
	desc, alpha   bool
	dontSort      bool  // BY a pattern with no '*'
	offset, count int64 // LIMIT; count -1 for all
}

// SORT key [BY pattern] [LIMIT offset count] [GET pattern ...] [ASC|DESC]
// [ALPHA] [STORE destination] — https://redis.io/commands/sort/, and
// SORT_RO without STORE (sortCommandGeneric). Equal numeric weights order
// by the elements themselves, as 7.0 does; a set
// sorted BY a constant pattern is sorted anyway inside a script, as the
// server does for determinism.
func cmdSort(c *cmdCtx, args []string) resp.Reply {
	a, bad := c.parseSortArgs(args)
	if bad != nil {
		return *bad
	}
	e := c.r.lookup(args[0])
	var elems []string
	if e != nil {
		switch e.kind {
		case typeList:
			elems = slices.Clone(e.list)
		case typeSet:
			elems = setMembers(e.set)
			if a.dontSort && c.run != nil {
				a.dontSort, a.alpha = false, true
				a.by = ""
			}
		case typeZSet:
			elems = slices.Clone(e.zset.members())
		default:
			return errWrongType
		}
	}
	if !a.dontSort {
		if bad := c.sortElems(elems, &a); bad != nil {
			return *bad
		}
	}
	return c.sortReply(sortLimit(elems, a.offset, a.count), &a)
}

// parseSortArgs parses the options after SORT's key.
func (c *cmdCtx) parseSortArgs(args []string) (sortArgs, *resp.Reply) {
	a := sortArgs{count: -1}
	for i := 1; i < len(args); i++ {
		left := len(args) - i - 1
		switch opt := strings.ToUpper(args[i]); {
		case opt == "ASC":
			a.desc = false
		case opt == "DESC":
			a.desc = true
		case opt == "ALPHA":
			a.alpha = true
		case opt == "LIMIT" && left >= 2:
			o, ok1 := parseInt(args[i+1])
			n, ok2 := parseInt(args[i+2])
			if !ok1 || !ok2 {
				return a, &errNotInt
			}
			a.offset, a.count = o, n
			i += 2
		case opt == "STORE" && left >= 1 && c.name == "sort":
			a.store = args[i+1]
			i++
		case opt == "BY" && left >= 1:
			a.by = args[i+1]
			if !strings.Contains(a.by, "*") {
				a.dontSort = true
			}
			i++
		case opt == "GET" && left >= 1:
			a.gets = append(a.gets, args[i+1])
			i++
		default:
			return a, &errSyntax
		}
	}
	return a, nil
}

// sortElems sorts elems in place by their weights: the elements
// themselves, or what BY's pattern finds, as numbers unless ALPHA.
func (c *cmdCtx) sortElems(elems []string, a *sortArgs) *resp.Reply {
	type item struct {
		el    string
		w     string
		hasW  bool
		score float64
	}
	items := make([]item, len(elems))
	for i, el := range elems {
		it := item{el: el, w: el, hasW: true}
		if a.by != "" {
			it.w, it.hasW = c.lookupPattern(a.by, el)
		}
		if !a.alpha && it.hasW {
			f, ok := sortScore(it.w)
			if !ok {
				return errReply("ERR One or more scores can't be converted into double")
			}
			it.score = f
		}
		items[i] = it
	}
	alpha, desc := a.alpha, a.desc
	sort.SliceStable(items, func(i, j int) bool {
		a, b := items[i], items[j]
		var cmp int
		if alpha {
			switch {
			case !a.hasW && !b.hasW:
				cmp = 0
			case !a.hasW:
				cmp = -1
			case !b.hasW:
				cmp = 1
			default:
				cmp = strings.Compare(a.w, b.w)
			}
		} else if a.score != b.score {
			cmp = -1
			if a.score > b.score {
				cmp = 1
			}
		}
		if cmp == 0 && !alpha {
			// Equal scores order by the elements (7.0); equal ALPHA
			// weights keep the input order here, while the server's
			// unstable quicksort may not.
			cmp = strings.Compare(a.el, b.el)
		}
		if desc {
			return cmp > 0
		}
		return cmp < 0
	})
	for i := range items {
		elems[i] = items[i].el
	}
	return nil
}

// sortLimit is LIMIT as sortCommand clamps it: the offset to [0, n], the
// count to [-1, n], then the inclusive range start..end.
func sortLimit(elems []string, offset, count int64) []string {
	n := int64(len(elems))
	start := min(max(offset, 0), n)
	end := n - 1
	if count = min(max(count, -1), n); count >= 0 {
		end = start + count - 1
	}
	if start >= n {
		start, end = n-1, n-2
	}
	end = min(end, n-1)
	if end < start {
		return nil
	}
	return elems[start : end+1]
}

// sortReply replies with elems, or what each GET pattern finds for each,
// or stores them as a list at STORE's destination and replies with their
// number.
func (c *cmdCtx) sortReply(elems []string, a *sortArgs) resp.Reply {
	var out []resp.Reply
	var stored []string
	for _, el := range elems {
		if len(a.gets) == 0 {
			out = append(out, resp.BulkReply(el))
			stored = append(stored, el)
			continue
		}
		for _, g := range a.gets {
			v, ok := c.lookupPattern(g, el)
			if ok {
				out = append(out, resp.BulkReply(v))
			} else {
				out = append(out, resp.NilReply)
			}
			stored = append(stored, v)
		}
	}
	if a.store != "" {
		delete(c.r.db, a.store)
		if len(stored) > 0 {
			c.r.db[a.store] = &entry{kind: typeList, list: stored}
		}
		return resp.IntReply(int64(len(stored)))
	}
	return resp.ArrayReply(out...)
}

// lookupPattern is lookupKeyByPattern: "#" is the element itself; the
// first '*' is replaced by el; "key->field" reads a hash field.
func (c *cmdCtx) lookupPattern(pattern, el string) (string, bool) {
	if pattern == "#" {
		return el, true
	}
	star := strings.IndexByte(pattern, '*')
	if star < 0 {
		return "", false
	}
	field := ""
	arrow := strings.LastIndex(pattern, "->")
	if arrow > star && arrow+2 < len(pattern) {
		field = pattern[arrow+2:]
		pattern = pattern[:arrow]
	}
	key := pattern[:star] + el + pattern[star+1:]
	e := c.r.lookup(key)
	if e == nil {
		return "", false
	}
	if field != "" {
		if e.kind != typeHash {
			return "", false
		}
		return e.hash.get(field)
	}
	if e.kind != typeString {
		return "", false
	}
	return e.str, true
}

// sortScore is SORT's numeric weight: lua51.Strtod(s, &eptr) refused when eptr
// does not reach the end, on ERANGE or NaN (sortCommand). strtod skips
// leading space, and when nothing converts it points eptr at the start:
// the empty string weighs 0.
func sortScore(s string) (float64, bool) {
	t := strings.TrimLeft(s, " \t\n\r\v\f")
	f, n := lua51.Strtod(t)
	switch {
	case n == 0:
		return 0, s == ""
	case n != len(t), math.IsNaN(f):
		return 0, false
	case math.IsInf(f, 0):
		l := strings.ToLower(strings.TrimLeft(t, "+-"))
		return f, strings.HasPrefix(l, "inf") // a literal infinity; else an overflow (ERANGE)
	case math.Abs(f) < 0x1p-1022 && strings.ContainsAny(mantissa(t), "123456789abcdefABCDEF"):
		return 0, false // an underflow (ERANGE)
	}
	return f, true
}

// mantissa is a strtod number without its exponent.
func mantissa(t string) string {
	l := strings.ToLower(t)
	if strings.Contains(l, "0x") {
		if i := strings.IndexByte(l, 'p'); i >= 0 {
			return l[strings.Index(l, "0x")+2 : i]
		}
		return l[strings.Index(l, "0x")+2:]
	}
	if i := strings.IndexByte(l, 'e'); i >= 0 {
		return l[:i]
	}
	return l
}
