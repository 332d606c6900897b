// Commands from https://redis.io/commands/?group=stream

package luatest

import (
	"fmt"
	"math"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/luagen/luagen/luatest/resp"
)

var streamCommands = []*command{
	{name: "xadd", fn: cmdXadd},
	{name: "xlen", fn: cmdXlen},
	{name: "xrange", fn: cmdXrange},
	{name: "xrevrange", fn: cmdXrange},
	{name: "xdel", fn: cmdXdel},
	{name: "xtrim", fn: cmdXtrim},
	{name: "xread", fn: cmdXread},
	{name: "xreadgroup", fn: cmdXread},
	{name: "xsetid", fn: cmdXsetid},
	{name: "xgroup", fn: cmdXgroup},
	{name: "xack", fn: cmdXack},
	{name: "xpending", fn: cmdXpending},
	{name: "xclaim", fn: cmdXclaim},
	{name: "xautoclaim", fn: cmdXautoclaim},
	{name: "xinfo", fn: cmdXinfo},
}

// streamID is an entry ID: milliseconds and sequence.
type streamID struct{ ms, seq uint64 }

func (a streamID) cmp(b streamID) int {
	switch {
	case a.ms != b.ms:
		if a.ms < b.ms {
			return -1
		}
		return 1
	case a.seq != b.seq:
		if a.seq < b.seq {
			return -1
		}
		return 1
	}
	return 0
}

func (a streamID) String() string { return fmt.Sprintf("%d-%d", a.ms, a.seq) }

func (a streamID) isZero() bool { return a.ms == 0 && a.seq == 0 }

var maxStreamID = streamID{math.MaxUint64, math.MaxUint64}

// parseStreamID is streamGenericParseIDOrReply: "ms-seq", "ms" (seq
// missingSeq), "-" and "+" when allowed.
func parseStreamID(s string, missingSeq uint64, strict bool) (streamID, bool) {
	if !strict {
		switch s {
		case "-":
			return streamID{}, true
		case "+":
			return maxStreamID, true
		}
	}
	msPart, seqPart, hasSeq := strings.Cut(s, "-")
	ms, err := strconv.ParseUint(msPart, 10, 64)
	if err != nil {
		return streamID{}, false
	}
	if !hasSeq {
		return streamID{ms, missingSeq}, true
	}
	seq, err := strconv.ParseUint(seqPart, 10, 64)
	if err != nil {
		return streamID{}, false
	}
	return streamID{ms, seq}, true
}

var errStreamID = resp.ErrorReply("ERR Invalid stream ID specified as stream command argument")

type streamEntry struct {
	id     streamID
	fields []string
	node   int64 // the radix-tree node (listpack) the entry was appended to
}

type pendingEntry struct {
	consumer  string
	delivered int64 // Unix ms of the last delivery
	count     int64
}

type streamConsumer struct {
	seen int64 // Unix ms
	pel  map[streamID]bool
}

type streamGroup struct {
	lastID      streamID
	entriesRead int64 // -1: invalid (SCG_INVALID_ENTRIES_READ)
	pel         map[streamID]*pendingEntry
	consumers   map[string]*streamConsumer
}

// streamValue is a stream: entries in ID order and consumer groups.
type streamValue struct {
	entries      []streamEntry
	lastID       streamID
	maxDeleted   streamID
	entriesAdded int64
	groups       map[string]*streamGroup
	node         int64 // the number of the newest radix-tree node
	// tombs are deleted entries the server still keeps, flagged, in their
	// node's listpack (XDEL, exact trimming) until the node loses its last
	// live entry; DUMP writes them, and they count toward a node's limits.
	tombs []streamEntry
}

func (s *streamValue) clone() *streamValue {
	c := *s
	c.entries = slices.Clone(s.entries)
	c.tombs = slices.Clone(s.tombs)
	c.groups = map[string]*streamGroup{}
	for n, g := range s.groups {
		ng := *g
		ng.pel = map[streamID]*pendingEntry{}
		for id, p := range g.pel {
			np := *p
			ng.pel[id] = &np
		}
		ng.consumers = map[string]*streamConsumer{}
		for cn, co := range g.consumers {
			nc := &streamConsumer{seen: co.seen, pel: map[streamID]bool{}}
			for id := range co.pel {
				nc.pel[id] = true
			}
			ng.consumers[cn] = nc
		}
		c.groups[n] = &ng
	}
	return &c
}

func (s *streamValue) find(id streamID) int {
	i := sort.Search(len(s.entries), func(i int) bool { return s.entries[i].id.cmp(id) >= 0 })
	if i < len(s.entries) && s.entries[i].id == id {
		return i
	}
	return -1
}

func (s *streamValue) firstID() streamID {
	if len(s.entries) == 0 {
		return streamID{}
	}
	return s.entries[0].id
}

// distance is streamEstimateDistanceFromFirstEverEntry; -1 when unknown.
func (s *streamValue) distance(id streamID) int64 {
	if s.entriesAdded == 0 {
		return 0
	}
	if len(s.entries) == 0 && id.cmp(s.lastID) < 1 {
		return s.entriesAdded
	}
	switch id.cmp(s.lastID) {
	case 0:
		return s.entriesAdded
	case 1:
		return -1
	}
	if s.maxDeleted.isZero() || s.maxDeleted.cmp(s.firstID()) < 0 {
		switch id.cmp(s.firstID()) {
		case -1:
			return s.entriesAdded - int64(len(s.entries))
		case 0:
			return s.entriesAdded - int64(len(s.entries)) + 1
		}
	}
	return -1
}

// hasTombstones is streamRangeHasTombstones(s, start, NULL).
func (s *streamValue) hasTombstones(start streamID) bool {
	if len(s.entries) == 0 || s.maxDeleted.isZero() {
		return false
	}
	if s.firstID().cmp(s.maxDeleted) > 0 {
		return false
	}
	return start.cmp(s.maxDeleted) <= 0
}

func (c *cmdCtx) stream(key string) (*entry, bool) { return c.r.lookupType(key, typeStream) }

func entryReply(e streamEntry) resp.Reply {
	return resp.ArrayReply(resp.BulkReply(e.id.String()), resp.BulkArray(e.fields))
}

// trimSpec is the MAXLEN | MINID [= | ~] threshold [LIMIT count] of XADD
// and XTRIM.
type trimSpec struct {
	kind   string // "", "MAXLEN", "MINID"
	approx bool
	maxLen int64
	minID  streamID
	limit  int64
}

// parseTrim reads trim options starting at args[i] and returns the index
// after them (streamParseAddOrTrimArgsOrReply); xadd stops at the ID.
func parseTrim(args []string, i int, xadd bool) (trimSpec, int, bool, *resp.Reply) {
	var t trimSpec
	fail := func(r resp.Reply) (trimSpec, int, bool, *resp.Reply) { return t, 0, false, &r }
	limitGiven, noMk := false, false
	for ; i < len(args); i++ {
		left := len(args) - i - 1
		opt := strings.ToUpper(args[i])
		switch {
		case xadd && opt == "NOMKSTREAM":
			noMk = true
			continue
		case (opt == "MAXLEN" || opt == "MINID") && left >= 1:
			t.kind = opt
			next := args[i+1]
			if (next == "~" || next == "=") && left >= 2 {
				t.approx = next == "~"
				i++
			}
			v := args[i+1]
			i++
			if opt == "MAXLEN" {
				n, ok := parseInt(v)
				if !ok {
					return fail(errNotInt)
				}
				if n < 0 {
					return fail(resp.ErrorReply("ERR The MAXLEN argument must be >= 0."))
				}
				t.maxLen = n
			} else {
				id, ok := parseStreamID(v, 0, true)
				if !ok {
					return fail(errStreamID)
				}
				t.minID = id
			}
			continue
		case opt == "LIMIT" && left >= 1:
			n, ok := parseInt(args[i+1])
			if !ok {
				return fail(errNotInt)
			}
			if n < 0 {
				return fail(resp.ErrorReply("ERR The LIMIT argument must be >= 0."))
			}
			t.limit, limitGiven = n, true
			i++
			continue
		}
		if xadd {
			break
		}
		return fail(errSyntax)
	}
	if limitGiven && t.kind == "" {
		return fail(resp.ErrorReply("ERR syntax error, LIMIT cannot be used without specifying a trimming strategy"))
	}
	if limitGiven && !t.approx {
		return fail(resp.ErrorReply("ERR syntax error, LIMIT cannot be used without the special ~ option"))
	}
	if t.approx && !limitGiven {
		t.limit = 100 * 100 // the server's default: 100 × stream-node-max-entries
	}
	return t, i, noMk, nil
}

// streamNodeMaxEntries is stream-node-max-entries: how many entries one
// radix-tree node (a listpack) takes before a new one starts.
const streamNodeMaxEntries = 100

// trim removes entries by t and returns how many. Under "~" the server
// trims whole radix-tree nodes only (luatest starts nodes by the server's
// rule, see cmdXadd); exact trimming removes whole nodes and flags the
// entries it cuts from the next one as deleted (tombs).
func (s *streamValue) trim(t trimSpec) int64 {
	n := 0
	switch t.kind {
	case "MAXLEN":
		n = max(len(s.entries)-int(t.maxLen), 0)
	case "MINID":
		for n < len(s.entries) && s.entries[n].id.cmp(t.minID) < 0 {
			n++
		}
	default:
		return 0
	}
	if t.approx {
		// Only whole nodes go: back off to the start of the node the cut
		// falls in, unless every entry of it is cut.
		if n < len(s.entries) && n > 0 && s.entries[n-1].node == s.entries[n].node {
			k := n
			for k > 0 && s.entries[k-1].node == s.entries[n].node {
				k--
			}
			n = k
		}
		if t.limit > 0 && n > int(t.limit) {
			n = 0
			for n < len(s.entries) && n < int(t.limit) {
				n++
			}
			for n > 0 && n < len(s.entries) && s.entries[n-1].node == s.entries[n].node {
				n--
			}
		}
	}
	removed := slices.Clone(s.entries[:n])
	s.entries = s.entries[n:]
	s.bury(removed)
	return int64(n)
}

// bury keeps removed entries as tombstones in the nodes that still have
// live entries; a node without any is gone, tombstones included
// (streamIteratorRemoveEntry frees it).
func (s *streamValue) bury(removed []streamEntry) {
	if len(removed) == 0 {
		return
	}
	live := map[int64]bool{}
	for _, e := range s.entries {
		live[e.node] = true
	}
	s.tombs = slices.DeleteFunc(append(s.tombs, removed...), func(e streamEntry) bool { return !live[e.node] })
	slices.SortFunc(s.tombs, func(a, b streamEntry) int { return a.id.cmp(b.id) })
}

// XADD key [NOMKSTREAM] [MAXLEN | MINID [= | ~] threshold [LIMIT count]]
// * | id field value [field value ...] — https://redis.io/commands/xadd/.
// "*" takes the virtual clock's milliseconds.
func cmdXadd(c *cmdCtx, args []string) resp.Reply {
	t, i, noMk, bad := parseTrim(args, 1, true)
	if bad != nil {
		return *bad
	}
	// The ID is parsed with the options, before the fields are counted
	// (streamParseAddOrTrimArgsOrReply, then xaddCommand's arity check).
	var id streamID
	auto, autoSeq := i < len(args) && args[i] == "*", false
	if i < len(args) && !auto {
		if ms, seq, ok := strings.Cut(args[i], "-"); ok && seq == "*" {
			v, err := strconv.ParseUint(ms, 10, 64)
			if err != nil {
				return errStreamID
			}
			id, autoSeq = streamID{ms: v}, true
		} else {
			var ok bool
			if id, ok = parseStreamID(args[i], 0, true); !ok {
				return errStreamID
			}
		}
	}
	if i >= len(args) || (len(args)-i-1) < 2 || (len(args)-i-1)%2 == 1 {
		return errArity("xadd")
	}
	if !auto && !autoSeq && id.isZero() {
		return resp.ErrorReply("ERR The ID specified in XADD must be greater than 0-0")
	}
	e, wrong := c.stream(args[0])
	if wrong {
		return errWrongType
	}
	if e == nil {
		if noMk {
			return resp.NilReply
		}
		e = &entry{kind: typeStream, stream: &streamValue{groups: map[string]*streamGroup{}}}
		c.r.db[args[0]] = e
	}
	s := e.stream
	switch {
	case auto:
		ms := uint64(c.nowMs())
		if ms > s.lastID.ms {
			id = streamID{ms, 0}
		} else {
			id = streamID{s.lastID.ms, s.lastID.seq + 1}
		}
	case autoSeq:
		if id.ms == s.lastID.ms {
			id.seq = s.lastID.seq + 1
		}
		if id.cmp(s.lastID) <= 0 {
			return resp.ErrorReply("ERR The ID specified in XADD is equal or smaller than the target stream top item")
		}
	default:
		if id.cmp(s.lastID) <= 0 {
			return resp.ErrorReply("ERR The ID specified in XADD is equal or smaller than the target stream top item")
		}
	}
	s.entries = append(s.entries, streamEntry{id: id, fields: slices.Clone(args[i+1:]), node: s.appendNode(args[i+1:])})
	s.lastID = id
	s.entriesAdded++
	s.trim(t)
	return resp.BulkReply(id.String())
}

// XLEN key — https://redis.io/commands/xlen/
func cmdXlen(c *cmdCtx, args []string) resp.Reply {
	e, wrong := c.stream(args[0])
	if wrong {
		return errWrongType
	}
	if e == nil {
		return resp.IntReply(0)
	}
	return resp.IntReply(int64(len(e.stream.entries)))
}

// parseRangeID reads a range bound: "-", "+", an ID, "(ID" (exclusive).
func parseRangeID(s string, end bool) (streamID, bool, *resp.Reply) {
	excl := strings.HasPrefix(s, "(")
	if excl {
		s = s[1:]
	}
	missing := uint64(0)
	if end {
		missing = math.MaxUint64
	}
	id, ok := parseStreamID(s, missing, excl)
	if !ok {
		return id, false, &errStreamID
	}
	if excl {
		if end {
			if id.isZero() {
				return id, false, errReply("ERR invalid end ID for the interval")
			}
			if id.seq == 0 {
				id = streamID{id.ms - 1, math.MaxUint64}
			} else {
				id.seq--
			}
		} else {
			if id == maxStreamID {
				return id, false, errReply("ERR invalid start ID for the interval")
			}
			if id.seq == math.MaxUint64 {
				id = streamID{id.ms + 1, 0}
			} else {
				id.seq++
			}
		}
	}
	return id, true, nil
}

// XRANGE key start end [COUNT count] — https://redis.io/commands/xrange/,
// and XREVRANGE key end start [COUNT count].
func cmdXrange(c *cmdCtx, args []string) resp.Reply {
	rev := c.name == "xrevrange"
	lo, hi := args[1], args[2]
	if rev {
		lo, hi = hi, lo
	}
	start, _, bad := parseRangeID(lo, false)
	if bad != nil {
		return *bad
	}
	end, _, bad := parseRangeID(hi, true)
	if bad != nil {
		return *bad
	}
	count := int64(-1)
	for i := 3; i < len(args); i++ {
		if strings.EqualFold(args[i], "COUNT") && i+1 < len(args) {
			n, ok := parseInt(args[i+1])
			if !ok {
				return errNotInt
			}
			count = max(n, 0)
			i++
			continue
		}
		return errSyntax
	}
	e, wrong := c.stream(args[0])
	if wrong {
		return errWrongType
	}
	out := []resp.Reply{}
	if e == nil {
		return resp.ArrayReply(out...)
	}
	if count == 0 { // a null array, but only for an existing stream
		return nullArray
	}
	es := e.stream.entries
	for k := range es {
		en := es[k]
		if rev {
			en = es[len(es)-1-k]
		}
		if en.id.cmp(start) >= 0 && en.id.cmp(end) <= 0 {
			out = append(out, entryReply(en))
			if count > 0 && int64(len(out)) == count {
				break
			}
		}
	}
	return resp.ArrayReply(out...)
}

// XDEL key id [id ...] — https://redis.io/commands/xdel/
func cmdXdel(c *cmdCtx, args []string) resp.Reply {
	e, wrong := c.stream(args[0])
	if wrong {
		return errWrongType
	}
	if e == nil {
		return resp.IntReply(0) // before the IDs are parsed, as the server does
	}
	ids := make([]streamID, 0, len(args)-1)
	for _, a := range args[1:] {
		id, ok := parseStreamID(a, 0, true)
		if !ok {
			return errStreamID
		}
		ids = append(ids, id)
	}
	s := e.stream
	var n int64
	var removed []streamEntry
	defer func() { s.bury(removed) }()
	for _, id := range ids {
		if k := s.find(id); k >= 0 {
			removed = append(removed, s.entries[k])
			s.entries = slices.Delete(s.entries, k, k+1)
			if id.cmp(s.maxDeleted) > 0 {
				s.maxDeleted = id
			}
			n++
		}
	}
	return resp.IntReply(n)
}

// XTRIM key MAXLEN | MINID [= | ~] threshold [LIMIT count] —
// https://redis.io/commands/xtrim/
func cmdXtrim(c *cmdCtx, args []string) resp.Reply {
	t, _, _, bad := parseTrim(args, 1, false)
	if bad != nil {
		return *bad
	}
	if t.kind == "" {
		return errSyntax
	}
	e, wrong := c.stream(args[0])
	if wrong {
		return errWrongType
	}
	if e == nil {
		return resp.IntReply(0)
	}
	return resp.IntReply(e.stream.trim(t))
}

// XSETID key last-id [ENTRIESADDED entries-added] [MAXDELETEDID
// max-deleted-id] — https://redis.io/commands/xsetid/
func cmdXsetid(c *cmdCtx, args []string) resp.Reply {
	id, ok := parseStreamID(args[1], 0, true)
	if !ok {
		return errStreamID
	}
	added, maxDel := int64(-1), streamID{}
	hasMaxDel := false
	for i := 2; i < len(args); i++ {
		switch opt := strings.ToUpper(args[i]); {
		case opt == "ENTRIESADDED" && i+1 < len(args):
			n, ok := parseInt(args[i+1])
			if !ok {
				return errNotInt
			}
			if n < 0 {
				return resp.ErrorReply("ERR entries_added must be positive")
			}
			added = n
			i++
		case opt == "MAXDELETEDID" && i+1 < len(args):
			v, ok := parseStreamID(args[i+1], 0, true)
			if !ok {
				return errStreamID
			}
			if id.cmp(v) < 0 {
				return resp.ErrorReply("ERR The ID specified in XSETID is smaller than the provided max_deleted_entry_id")
			}
			maxDel, hasMaxDel = v, true
			i++
		default:
			return errSyntax
		}
	}
	e, wrong := c.stream(args[0])
	if wrong {
		return errWrongType
	}
	if e == nil {
		return errNoSuchKey
	}
	s := e.stream
	if added != -1 && int64(len(s.entries)) > added {
		return resp.ErrorReply("ERR The entries_added specified in XSETID is smaller than the target stream length")
	}
	if len(s.entries) > 0 && id.cmp(s.entries[len(s.entries)-1].id) < 0 {
		return resp.ErrorReply("ERR The ID specified in XSETID is smaller than the target stream top item")
	}
	s.lastID = id
	if added != -1 {
		s.entriesAdded = added
	}
	if hasMaxDel {
		s.maxDeleted = maxDel
	}
	return resp.OK
}

// XGROUP CREATE | CREATECONSUMER | DELCONSUMER | DESTROY | SETID —
// https://redis.io/commands/xgroup/
func cmdXgroup(c *cmdCtx, args []string) resp.Reply {
	sub := strings.ToUpper(args[0])
	if sub == "HELP" {
		return helpReply("xgroup")
	}
	key, group := args[1], args[2]
	mkstream := false
	entriesRead := int64(-1)
	// addReplySubcommandSyntaxError: an unknown option, or CREATE or SETID
	// with a number of arguments xgroupCommand does not dispatch.
	subSyntax := resp.ErrorReply(fmt.Sprintf("ERR unknown subcommand or wrong number of arguments for '%.128s'. Try XGROUP HELP.", args[0]))
	if sub == "CREATE" || sub == "SETID" {
		for i := 4; i < len(args); i++ {
			switch opt := strings.ToUpper(args[i]); {
			case opt == "MKSTREAM" && sub == "CREATE":
				mkstream = true
			case opt == "ENTRIESREAD" && i+1 < len(args):
				n, ok := parseInt(args[i+1])
				if !ok {
					return errNotInt
				}
				if n < 0 && n != -1 {
					return resp.ErrorReply("ERR value for ENTRIESREAD must be positive or -1")
				}
				entriesRead = n
				i++
			default:
				return subSyntax
			}
		}
	}
	e, wrong := c.stream(key)
	if wrong {
		return errWrongType
	}
	if e == nil {
		if sub != "CREATE" || !mkstream {
			return resp.ErrorReply("ERR The XGROUP subcommand requires the key to exist. Note that for CREATE you may want to use the MKSTREAM option to create an empty stream automatically.")
		}
	}
	var g *streamGroup
	if e != nil && sub != "CREATE" {
		if g = e.stream.groups[group]; g == nil {
			if sub == "DESTROY" {
				return resp.IntReply(0)
			}
			return resp.ErrorReply(fmt.Sprintf("NOGROUP No such consumer group '%s' for key name '%s'", group, key))
		}
	}
	groupID := func(s *streamValue) (streamID, bool) {
		if args[3] == "$" {
			return s.lastID, true
		}
		return parseStreamID(args[3], 0, true)
	}
	if sub == "CREATE" && len(args) > 7 || sub == "SETID" && len(args) != 4 && len(args) != 6 {
		return subSyntax
	}
	switch sub {
	case "CREATE":
		var s *streamValue
		if e != nil {
			s = e.stream
		} else {
			s = &streamValue{groups: map[string]*streamGroup{}}
		}
		id, ok := groupID(s)
		if !ok {
			return errStreamID
		}
		if e == nil {
			c.r.db[key] = &entry{kind: typeStream, stream: s}
		}
		if _, ok := s.groups[group]; ok {
			return resp.ErrorReply("BUSYGROUP Consumer Group name already exists")
		}
		s.groups[group] = &streamGroup{lastID: id, entriesRead: entriesRead,
			pel: map[streamID]*pendingEntry{}, consumers: map[string]*streamConsumer{}}
		return resp.OK
	case "SETID":
		id, ok := groupID(e.stream)
		if !ok {
			return errStreamID
		}
		g.lastID, g.entriesRead = id, entriesRead
		return resp.OK
	case "DESTROY":
		delete(e.stream.groups, group)
		return resp.IntReply(1)
	case "CREATECONSUMER":
		if _, ok := g.consumers[args[3]]; ok {
			return resp.IntReply(0)
		}
		g.consumers[args[3]] = &streamConsumer{seen: c.nowMs(), pel: map[streamID]bool{}}
		return resp.IntReply(1)
	case "DELCONSUMER":
		co, ok := g.consumers[args[3]]
		if !ok {
			return resp.IntReply(0)
		}
		for id := range co.pel {
			delete(g.pel, id)
		}
		delete(g.consumers, args[3])
		return resp.IntReply(int64(len(co.pel)))
	}
	return resp.ErrorReply(fmt.Sprintf("ERR unknown subcommand '%s'. Try XGROUP HELP.", args[0]))
}

// lag is a group's lag as streamReplyWithCGLag answers it: nil when the
// server cannot tell.
func (s *streamValue) lag(g *streamGroup) resp.Reply {
	switch {
	case s.entriesAdded == 0:
		return resp.IntReply(0)
	case g.entriesRead != -1 && !s.hasTombstones(g.lastID):
		return resp.IntReply(s.entriesAdded - g.entriesRead)
	}
	if d := s.distance(g.lastID); d != -1 {
		return resp.IntReply(s.entriesAdded - d)
	}
	return resp.NilReply
}

// xinfoFull is the tail of XINFO STREAM key FULL [COUNT count]: the first
// count entries, then every group (in name order) with its PEL and its
// consumers' PELs, each cut to count (0: everything), as
// xinfoReplyWithStreamInfo writes them. Delivery and seen times read the
// virtual clock.
func (c *cmdCtx) xinfoFull(s *streamValue, groups []string, count int64) []resp.Reply {
	upTo := func(n int) int {
		if count > 0 && int64(n) > count {
			return int(count)
		}
		return n
	}
	entries := make([]resp.Reply, 0, upTo(len(s.entries)))
	for _, en := range s.entries[:upTo(len(s.entries))] {
		entries = append(entries, entryReply(en))
	}
	gs := make([]resp.Reply, 0, len(groups))
	for _, name := range groups {
		g := s.groups[name]
		read := resp.NilReply
		if g.entriesRead != -1 {
			read = resp.IntReply(g.entriesRead)
		}
		pel := g.sortedPEL()
		pending := make([]resp.Reply, 0, upTo(len(pel)))
		for _, id := range pel[:upTo(len(pel))] {
			p := g.pel[id]
			pending = append(pending, resp.ArrayReply(resp.BulkReply(id.String()), resp.BulkReply(p.consumer),
				resp.IntReply(p.delivered), resp.IntReply(p.count)))
		}
		cnames := make([]string, 0, len(g.consumers))
		for n := range g.consumers {
			cnames = append(cnames, n)
		}
		sort.Strings(cnames)
		consumers := make([]resp.Reply, 0, len(cnames))
		for _, n := range cnames {
			co := g.consumers[n]
			var ids []streamID
			for _, id := range pel {
				if co.pel[id] {
					ids = append(ids, id)
				}
			}
			cp := make([]resp.Reply, 0, upTo(len(ids)))
			for _, id := range ids[:upTo(len(ids))] {
				p := g.pel[id]
				cp = append(cp, resp.ArrayReply(resp.BulkReply(id.String()), resp.IntReply(p.delivered), resp.IntReply(p.count)))
			}
			consumers = append(consumers, c.mapReply([]resp.Reply{
				resp.BulkReply("name"), resp.BulkReply(n),
				resp.BulkReply("seen-time"), resp.IntReply(co.seen),
				resp.BulkReply("pel-count"), resp.IntReply(int64(len(co.pel))),
				resp.BulkReply("pending"), resp.ArrayReply(cp...),
			}))
		}
		gs = append(gs, c.mapReply([]resp.Reply{
			resp.BulkReply("name"), resp.BulkReply(name),
			resp.BulkReply("last-delivered-id"), resp.BulkReply(g.lastID.String()),
			resp.BulkReply("entries-read"), read,
			resp.BulkReply("lag"), s.lag(g),
			resp.BulkReply("pel-count"), resp.IntReply(int64(len(g.pel))),
			resp.BulkReply("pending"), resp.ArrayReply(pending...),
			resp.BulkReply("consumers"), resp.ArrayReply(consumers...),
		}))
	}
	return []resp.Reply{resp.BulkReply("entries"), resp.ArrayReply(entries...), resp.BulkReply("groups"), resp.ArrayReply(gs...)}
}

// consumer returns group g's consumer name, creating it.
func (c *cmdCtx) consumer(g *streamGroup, name string) *streamConsumer {
	co := g.consumers[name]
	if co == nil {
		co = &streamConsumer{pel: map[streamID]bool{}}
		g.consumers[name] = co
	}
	co.seen = c.nowMs()
	return co
}

// xreadArgs is what XREAD and XREADGROUP parse.
type xreadArgs struct {
	group        bool   // XREADGROUP
	gname, cname string // GROUP group consumer
	count        int64  // COUNT; 0 reads all
	noack        bool
	keys, ids    []string // STREAMS key [key ...] id [id ...]
}

// xreadWant is one stream to read: its key's entry (nil when the key is
// missing) and the ID to read after, or new for XREADGROUP's ">".
type xreadWant struct {
	e   *entry
	id  streamID
	new bool
}

// XREAD [COUNT count] [BLOCK ms] STREAMS key [key ...] id [id ...] —
// https://redis.io/commands/xread/, and XREADGROUP GROUP group consumer
// [COUNT count] [BLOCK ms] [NOACK] STREAMS key [key ...] id [id ...].
// BLOCK never blocks: a script cannot, and luatest has no other clients.
func cmdXread(c *cmdCtx, args []string) resp.Reply {
	a, bad := c.parseXreadArgs(args)
	if bad != nil {
		return *bad
	}
	ws, bad := c.xreadWants(&a)
	if bad != nil {
		return *bad
	}
	var out []resp.Reply
	for i, w := range ws {
		if w.e == nil {
			continue
		}
		s := w.e.stream
		var got []resp.Reply
		if a.group {
			g := s.groups[a.gname]
			co := c.consumer(g, a.cname)
			if w.new {
				got = c.xreadGroupNew(s, g, co, &a)
			} else {
				got = c.xreadGroupHistory(s, g, co, w.id, a.count)
				if len(got) == 0 {
					out = append(out, resp.ArrayReply(resp.BulkReply(a.keys[i]), resp.ArrayReply()))
					continue
				}
			}
		} else {
			got = xreadAfter(s, w.id, a.count)
		}
		if len(got) > 0 {
			out = append(out, resp.ArrayReply(resp.BulkReply(a.keys[i]), resp.ArrayReply(got...)))
		}
	}
	return c.xreadReply(out)
}

// parseXreadArgs parses the options up to STREAMS and splits what follows
// into keys and IDs, in xreadCommand's order of checks.
func (c *cmdCtx) parseXreadArgs(args []string) (xreadArgs, *resp.Reply) {
	a := xreadArgs{group: c.name == "xreadgroup"}
	streamsAt := -1
	for i := 0; i < len(args); i++ {
		left := len(args) - i - 1
		switch opt := strings.ToUpper(args[i]); {
		case opt == "BLOCK" && left >= 1:
			if c.run != nil {
				return a, errReply("ERR " + c.argv0 + " command is not allowed with BLOCK option from scripts")
			}
			n, ok := parseInt(args[i+1])
			if !ok {
				return a, errReply("ERR timeout is not an integer or out of range")
			}
			if n < 0 {
				return a, errReply("ERR timeout is negative")
			}
			i++
		case opt == "COUNT" && left >= 1:
			n, ok := parseInt(args[i+1])
			if !ok {
				return a, &errNotInt
			}
			a.count = max(n, 0)
			i++
		case opt == "STREAMS" && left >= 1:
			streamsAt = i + 1
			i = len(args)
		case opt == "GROUP" && a.group && left >= 2:
			a.gname, a.cname = args[i+1], args[i+2]
			i += 2
		case opt == "NOACK" && a.group:
			a.noack = true
		default:
			return a, &errSyntax
		}
	}
	if streamsAt < 0 {
		return a, &errSyntax
	}
	rest := args[streamsAt:]
	if len(rest)%2 != 0 {
		return a, errReply("ERR Unbalanced XREAD list of streams: for each stream key an ID or '$' must be specified.")
	}
	if a.group && a.gname == "" {
		return a, errReply("ERR Missing GROUP option for XREADGROUP")
	}
	n := len(rest) / 2
	a.keys, a.ids = rest[:n], rest[n:]
	return a, nil
}

// xreadWants looks up each key (and, for XREADGROUP, its group) and parses
// its ID, key by key as xreadCommand does.
func (c *cmdCtx) xreadWants(a *xreadArgs) ([]xreadWant, *resp.Reply) {
	ws := make([]xreadWant, len(a.keys))
	for i, k := range a.keys {
		e, wrong := c.stream(k)
		if wrong {
			return nil, &errWrongType
		}
		ws[i].e = e
		// The key and group are checked before the ID (xreadCommand).
		if a.group {
			if e == nil || e.stream.groups[a.gname] == nil {
				return nil, errReply(fmt.Sprintf("NOGROUP No such key '%s' or consumer group '%s' in XREADGROUP with GROUP option", k, a.gname))
			}
		}
		id := a.ids[i]
		switch {
		case a.group && id == ">":
			ws[i].new = true
		case id == "$" && !a.group:
			if e != nil {
				ws[i].id = e.stream.lastID
			} else {
				ws[i].id = streamID{}
			}
		case id == "$":
			return nil, errReply("ERR The $ ID is meaningless in the context of XREADGROUP: you want to read the history of this consumer by specifying a proper ID, or use the > ID to get new messages. The $ ID would just return an empty result set.")
		case id == ">":
			return nil, errReply("ERR The > ID can be specified only when calling XREADGROUP using the GROUP <group> <consumer> option.")
		default:
			sid, ok := parseStreamID(id, 0, true)
			if !ok {
				return nil, &errStreamID
			}
			ws[i].id = sid
		}
	}
	return ws, nil
}

// xreadAfter is XREAD's read of s: up to count entries after id.
func xreadAfter(s *streamValue, id streamID, count int64) []resp.Reply {
	var got []resp.Reply
	for _, en := range s.entries {
		if en.id.cmp(id) > 0 {
			got = append(got, entryReply(en))
			if count > 0 && int64(len(got)) == count {
				break
			}
		}
	}
	return got
}

// xreadGroupNew is XREADGROUP's ">": up to a.count entries past group g's
// last-delivered ID, which moves past them, counted in entries-read and,
// without NOACK, added to g's and consumer co's pending entries.
func (c *cmdCtx) xreadGroupNew(s *streamValue, g *streamGroup, co *streamConsumer, a *xreadArgs) []resp.Reply {
	var got []resp.Reply
	for _, en := range s.entries {
		if en.id.cmp(g.lastID) <= 0 {
			continue
		}
		if g.entriesRead != -1 && !s.hasTombstones(en.id) {
			g.entriesRead++
		} else if s.entriesAdded > 0 {
			g.entriesRead = s.distance(en.id)
		}
		g.lastID = en.id
		if !a.noack {
			if p := g.pel[en.id]; p != nil {
				delete(g.consumers[p.consumer].pel, en.id)
			}
			g.pel[en.id] = &pendingEntry{consumer: a.cname, delivered: c.nowMs(), count: 1}
			co.pel[en.id] = true
		}
		got = append(got, entryReply(en))
		if a.count > 0 && int64(len(got)) == a.count {
			break
		}
	}
	return got
}

// xreadGroupHistory is XREADGROUP with an ID: the consumer's history, up to
// count of its pending entries after id, each delivered once more (an entry
// deleted from the stream comes back as its ID and a null).
func (c *cmdCtx) xreadGroupHistory(s *streamValue, g *streamGroup, co *streamConsumer, id streamID, count int64) []resp.Reply {
	var ids []streamID
	for pid := range co.pel {
		if pid.cmp(id) > 0 {
			ids = append(ids, pid)
		}
	}
	slices.SortFunc(ids, func(a, b streamID) int { return a.cmp(b) })
	var got []resp.Reply
	for _, pid := range ids {
		if count > 0 && int64(len(got)) == count {
			break
		}
		p := g.pel[pid]
		p.delivered = c.nowMs()
		p.count++
		if k := s.find(pid); k >= 0 {
			got = append(got, entryReply(s.entries[k]))
		} else {
			got = append(got, resp.ArrayReply(resp.BulkReply(pid.String()), nullArray))
		}
	}
	return got
}

// xreadReply is XREAD's reply: a null array when nothing was read, else a
// [key, entries] pair per stream, a map of them under RESP3.
func (c *cmdCtx) xreadReply(out []resp.Reply) resp.Reply {
	if len(out) == 0 {
		return nullArray
	}
	if c.proto == 3 {
		var kvs []resp.Reply
		for _, o := range out {
			kvs = append(kvs, o.Elems...)
		}
		return resp.Reply{Kind: resp.Map, Elems: kvs}
	}
	return resp.ArrayReply(out...)
}

// group finds key's group for XACK, XPENDING, XCLAIM, XAUTOCLAIM.
func (c *cmdCtx) group(key, name string) (*streamValue, *streamGroup, *resp.Reply) {
	e, wrong := c.stream(key)
	if wrong {
		return nil, nil, &errWrongType
	}
	if e == nil || e.stream.groups[name] == nil {
		return nil, nil, errReply(fmt.Sprintf("NOGROUP No such key '%s' or consumer group '%s'", key, name))
	}
	return e.stream, e.stream.groups[name], nil
}

// XACK key group id [id ...] — https://redis.io/commands/xack/
func cmdXack(c *cmdCtx, args []string) resp.Reply {
	// No key or group: nothing to acknowledge, whatever the IDs
	// (xackCommand parses them after the lookup).
	e, wrong := c.stream(args[0])
	if wrong {
		return errWrongType
	}
	if e == nil || e.stream.groups[args[1]] == nil {
		return resp.IntReply(0)
	}
	g := e.stream.groups[args[1]]
	var ids []streamID
	for _, a := range args[2:] {
		id, ok := parseStreamID(a, 0, true)
		if !ok {
			return errStreamID
		}
		ids = append(ids, id)
	}
	var n int64
	for _, id := range ids {
		if p := g.pel[id]; p != nil {
			g.unpend(id, p)
			n++
		}
	}
	return resp.IntReply(n)
}

// unpend drops id, pending as p, from g's PEL and from its consumer's.
func (g *streamGroup) unpend(id streamID, p *pendingEntry) {
	delete(g.consumers[p.consumer].pel, id)
	delete(g.pel, id)
}

// claim hands id, pending as p, to the consumer name (co), delivered at
// ms (Unix ms), as XCLAIM and XAUTOCLAIM do.
func (g *streamGroup) claim(id streamID, p *pendingEntry, name string, co *streamConsumer, ms int64) {
	delete(g.consumers[p.consumer].pel, id)
	p.consumer, p.delivered = name, ms
	co.pel[id] = true
}

func (g *streamGroup) sortedPEL() []streamID {
	ids := make([]streamID, 0, len(g.pel))
	for id := range g.pel {
		ids = append(ids, id)
	}
	slices.SortFunc(ids, func(a, b streamID) int { return a.cmp(b) })
	return ids
}

// XPENDING key group [[IDLE min-idle-time] start end count [consumer]] —
// https://redis.io/commands/xpending/ (idle times read the virtual clock).
func cmdXpending(c *cmdCtx, args []string) resp.Reply {
	var minIdle int64
	rest := args[2:]
	if len(rest) > 0 && strings.EqualFold(rest[0], "IDLE") {
		if len(rest) < 2 {
			return errSyntax
		}
		n, ok := parseInt(rest[1])
		if !ok {
			return errNotInt
		}
		minIdle, rest = n, rest[2:]
		if len(rest) == 0 {
			return errSyntax
		}
	}
	if len(rest) != 0 && len(rest) != 3 && len(rest) != 4 {
		return errSyntax
	}
	var start, end streamID
	var count int64
	if len(rest) > 0 {
		var bad *resp.Reply
		if start, _, bad = parseRangeID(rest[0], false); bad != nil {
			return *bad
		}
		if end, _, bad = parseRangeID(rest[1], true); bad != nil {
			return *bad
		}
		n, ok := parseInt(rest[2])
		if !ok {
			return errNotInt
		}
		count = max(n, 0)
	}
	_, g, bad := c.group(args[0], args[1])
	if bad != nil {
		return *bad
	}
	ids := g.sortedPEL()
	if len(rest) == 0 {
		if len(ids) == 0 {
			return resp.ArrayReply(resp.IntReply(0), resp.NilReply, resp.NilReply, nullArray)
		}
		per := map[string]int64{}
		for _, id := range ids {
			per[g.pel[id].consumer]++
		}
		names := make([]string, 0, len(per))
		for n := range per {
			names = append(names, n)
		}
		sort.Strings(names)
		var cs []resp.Reply
		for _, n := range names {
			cs = append(cs, resp.ArrayReply(resp.BulkReply(n), resp.BulkReply(strconv.FormatInt(per[n], 10))))
		}
		return resp.ArrayReply(resp.IntReply(int64(len(ids))), resp.BulkReply(ids[0].String()),
			resp.BulkReply(ids[len(ids)-1].String()), resp.ArrayReply(cs...))
	}
	out := []resp.Reply{}
	for _, id := range ids {
		if int64(len(out)) >= count {
			break
		}
		p := g.pel[id]
		idle := c.nowMs() - p.delivered
		if id.cmp(start) < 0 || id.cmp(end) > 0 || idle < minIdle || len(rest) == 4 && p.consumer != rest[3] {
			continue
		}
		out = append(out, resp.ArrayReply(resp.BulkReply(id.String()), resp.BulkReply(p.consumer),
			resp.IntReply(idle), resp.IntReply(p.count)))
	}
	return resp.ArrayReply(out...)
}

// XCLAIM key group consumer min-idle-time id [id ...] [IDLE ms] [TIME
// unix-time-milliseconds] [RETRYCOUNT count] [FORCE] [JUSTID] [LASTID
// lastid] — https://redis.io/commands/xclaim/
func cmdXclaim(c *cmdCtx, args []string) resp.Reply {
	// The key and the group come first (xclaimCommand), then the arguments.
	s, g, bad := c.group(args[0], args[1])
	if bad != nil {
		return *bad
	}
	minIdle, ok := parseInt(args[3])
	if !ok {
		return resp.ErrorReply("ERR Invalid min-idle-time argument for XCLAIM")
	}
	var ids []streamID
	i := 4
	for ; i < len(args); i++ {
		id, ok := parseStreamID(args[i], 0, true)
		if !ok {
			break
		}
		ids = append(ids, id)
	}
	now := c.nowMs()
	deliveryTime, retry := int64(-1), int64(-1)
	force, justID := false, false
	var lastID streamID
	for ; i < len(args); i++ {
		left := len(args) - i - 1
		switch opt := strings.ToUpper(args[i]); {
		case opt == "FORCE":
			force = true
		case opt == "JUSTID":
			justID = true
		case opt == "IDLE" && left >= 1:
			n, ok := parseInt(args[i+1])
			if !ok {
				return resp.ErrorReply("ERR Invalid IDLE option argument for XCLAIM")
			}
			deliveryTime = now - n
			i++
		case opt == "TIME" && left >= 1:
			n, ok := parseInt(args[i+1])
			if !ok {
				return resp.ErrorReply("ERR Invalid TIME option argument for XCLAIM")
			}
			deliveryTime = n
			i++
		case opt == "RETRYCOUNT" && left >= 1:
			n, ok := parseInt(args[i+1])
			if !ok {
				return resp.ErrorReply("ERR Invalid RETRYCOUNT option argument for XCLAIM")
			}
			retry = n
			i++
		case opt == "LASTID" && left >= 1:
			if lastID, ok = parseStreamID(args[i+1], 0, true); !ok {
				return errStreamID
			}
			i++
		default:
			return resp.ErrorReply(fmt.Sprintf("ERR Unrecognized XCLAIM option '%s'", args[i]))
		}
	}
	if lastID.cmp(g.lastID) > 0 {
		g.lastID = lastID // LASTID moves the group's last delivered ID forward
	}
	if deliveryTime < 0 || deliveryTime > now {
		deliveryTime = now
	}
	co := c.consumer(g, args[2])
	out := []resp.Reply{}
	for _, id := range ids {
		p := g.pel[id]
		k := s.find(id)
		if p == nil {
			if !force || k < 0 {
				continue
			}
			p = &pendingEntry{consumer: args[2], delivered: now}
			g.pel[id] = p
		} else if k < 0 {
			g.unpend(id, p)
			continue
		}
		if minIdle > 0 && now-p.delivered < minIdle {
			continue
		}
		g.claim(id, p, args[2], co, deliveryTime)
		if retry >= 0 {
			p.count = retry
		} else if !justID {
			p.count++
		}
		if justID {
			out = append(out, resp.BulkReply(id.String()))
		} else {
			out = append(out, entryReply(s.entries[k]))
		}
	}
	return resp.ArrayReply(out...)
}

// XAUTOCLAIM key group consumer min-idle-time start [COUNT count] [JUSTID]
// — https://redis.io/commands/xautoclaim/: [next-start, claimed, deleted].
func cmdXautoclaim(c *cmdCtx, args []string) resp.Reply {
	minIdle, ok := parseInt(args[3])
	if !ok {
		return resp.ErrorReply("ERR Invalid min-idle-time argument for XAUTOCLAIM")
	}
	minIdle = max(minIdle, 0)
	start, _, bad := parseRangeID(args[4], false)
	if bad != nil {
		return *bad
	}
	count, justID := int64(100), false
	for i := 5; i < len(args); i++ {
		switch opt := strings.ToUpper(args[i]); {
		case opt == "JUSTID":
			justID = true
		case opt == "COUNT" && i+1 < len(args):
			n, ok := parseInt(args[i+1])
			if !ok || n < 1 || n > math.MaxInt64/10 {
				return resp.ErrorReply("ERR COUNT must be > 0")
			}
			count = n
			i++
		default:
			return errSyntax
		}
	}
	s, g, badg := c.group(args[0], args[1])
	if badg != nil {
		return *badg
	}
	now := c.nowMs()
	co := c.consumer(g, args[2])
	claimed, deleted := []resp.Reply{}, []resp.Reply{}
	next := streamID{}
	attempts := count * 10
	for _, id := range g.sortedPEL() {
		if id.cmp(start) < 0 {
			continue
		}
		if attempts == 0 || count == 0 {
			next = id
			break
		}
		attempts--
		p := g.pel[id]
		k := s.find(id)
		if k < 0 {
			g.unpend(id, p)
			deleted = append(deleted, resp.BulkReply(id.String()))
			continue
		}
		if minIdle > 0 && now-p.delivered < minIdle {
			continue
		}
		g.claim(id, p, args[2], co, now)
		if !justID {
			p.count++
			claimed = append(claimed, entryReply(s.entries[k]))
		} else {
			claimed = append(claimed, resp.BulkReply(id.String()))
		}
		count--
	}
	return resp.ArrayReply(resp.BulkReply(next.String()), resp.ArrayReply(claimed...), resp.ArrayReply(deleted...))
}

// XINFO STREAM key | GROUPS key | CONSUMERS key group —
// https://redis.io/commands/xinfo/. STREAM's radix-tree-keys is the
// number of listpack nodes, as the server splits them; radix-tree-nodes
// (the radix tree's inner nodes) is an estimate, twice that; idle times
// read the virtual clock, and so do FULL's delivery and seen times.
func cmdXinfo(c *cmdCtx, args []string) resp.Reply {
	sub := strings.ToUpper(args[0])
	if sub == "HELP" {
		return helpReply("xinfo")
	}
	e, wrong := c.stream(args[1])
	if wrong {
		return errWrongType
	}
	if e == nil {
		return errNoSuchKey
	}
	s := e.stream
	names := make([]string, 0, len(s.groups))
	for n := range s.groups {
		names = append(names, n)
	}
	sort.Strings(names)
	switch sub {
	case "STREAM":
		// [FULL [COUNT count]], checked as xinfoReplyWithStreamInfo does.
		opts, full, count := args[2:], false, int64(10)
		if len(opts) > 0 {
			if len(opts) != 1 && len(opts) != 3 || !strings.EqualFold(opts[0], "full") ||
				len(opts) == 3 && !strings.EqualFold(opts[1], "count") {
				return resp.ErrorReply(fmt.Sprintf("ERR unknown subcommand or wrong number of arguments for '%.128s'. Try XINFO HELP.", args[0]))
			}
			if len(opts) == 3 {
				n, ok := parseInt(opts[2])
				if !ok {
					return errNotInt
				}
				if n >= 0 {
					count = n
				}
			}
			full = true
		}
		nodes := len(s.nodes())
		kvs := []resp.Reply{
			resp.BulkReply("length"), resp.IntReply(int64(len(s.entries))),
			resp.BulkReply("radix-tree-keys"), resp.IntReply(int64(nodes)),
			resp.BulkReply("radix-tree-nodes"), resp.IntReply(int64(max(nodes*2, 1))),
			resp.BulkReply("last-generated-id"), resp.BulkReply(s.lastID.String()),
			resp.BulkReply("max-deleted-entry-id"), resp.BulkReply(s.maxDeleted.String()),
			resp.BulkReply("entries-added"), resp.IntReply(s.entriesAdded),
			resp.BulkReply("recorded-first-entry-id"), resp.BulkReply(s.firstID().String()),
		}
		if full {
			return c.mapReply(append(kvs, c.xinfoFull(s, names, count)...))
		}
		kvs = append(kvs, resp.BulkReply("groups"), resp.IntReply(int64(len(s.groups))))
		first, last := resp.NilReply, resp.NilReply
		if len(s.entries) > 0 {
			first, last = entryReply(s.entries[0]), entryReply(s.entries[len(s.entries)-1])
		}
		kvs = append(kvs, resp.BulkReply("first-entry"), first, resp.BulkReply("last-entry"), last)
		return c.mapReply(kvs)
	case "GROUPS":
		var out []resp.Reply
		for _, n := range names {
			g := s.groups[n]
			read := resp.NilReply
			if g.entriesRead != -1 {
				read = resp.IntReply(g.entriesRead)
			}
			out = append(out, c.mapReply([]resp.Reply{
				resp.BulkReply("name"), resp.BulkReply(n),
				resp.BulkReply("consumers"), resp.IntReply(int64(len(g.consumers))),
				resp.BulkReply("pending"), resp.IntReply(int64(len(g.pel))),
				resp.BulkReply("last-delivered-id"), resp.BulkReply(g.lastID.String()),
				resp.BulkReply("entries-read"), read,
				resp.BulkReply("lag"), s.lag(g),
			}))
		}
		return resp.ArrayReply(out...)
	case "CONSUMERS":
		if len(args) < 3 {
			return errArity("xinfo|consumers")
		}
		g := s.groups[args[2]]
		if g == nil {
			return resp.ErrorReply(fmt.Sprintf("NOGROUP No such consumer group '%s' for key name '%s'", args[2], args[1]))
		}
		cs := make([]string, 0, len(g.consumers))
		for n := range g.consumers {
			cs = append(cs, n)
		}
		sort.Strings(cs)
		var out []resp.Reply
		for _, n := range cs {
			co := g.consumers[n]
			out = append(out, c.mapReply([]resp.Reply{
				resp.BulkReply("name"), resp.BulkReply(n),
				resp.BulkReply("pending"), resp.IntReply(int64(len(co.pel))),
				resp.BulkReply("idle"), resp.IntReply(c.nowMs() - co.seen),
			}))
		}
		return resp.ArrayReply(out...)
	}
	return resp.ErrorReply(fmt.Sprintf("ERR unknown subcommand '%s'. Try XINFO HELP.", args[0]))
}
