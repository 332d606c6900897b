package luatest

import (
	"math"
	"slices"
	"sort"
	"strconv"
)

// keyType is the type TYPE reports for a key.
type keyType uint8

const (
	typeString keyType = iota + 1
	typeHash
	typeList
	typeSet
	typeZSet
	typeStream
)

var typeNames = map[keyType]string{typeString: "string", typeHash: "hash", typeList: "list", typeSet: "set", typeZSet: "zset", typeStream: "stream"}

// entry is one key's value and expiry.
type entry struct {
	kind   keyType
	str    string
	hash   *hashValue
	list   []string
	set    map[string]struct{}
	zset   *zsetValue
	stream *streamValue
	raw    bool // a string modified in place (APPEND, SETRANGE, SETBIT ...): OBJECT ENCODING says "raw"
	// noInt marks a string stored without trying the int encoding
	// (INCRBYFLOAT's createStringObjectFromLongDouble): embstr or raw by
	// length.
	noInt bool
	// wide is set once a hash, set or sorted set has been converted to its
	// large encoding (hashtable, skiplist): Redis never converts back.
	wide bool
	// intsetWidth is the widest integer size (2, 4 or 8 bytes) an intset
	// has been upgraded to: intsets never downgrade.
	intsetWidth uint8
	// packed marks a hash or sorted set RESTORE loaded from a listpack or
	// ziplist: the server keeps it a listpack whatever its elements'
	// lengths, until it grows past the entry limit.
	packed bool
	// ql is a list's quicklist nodes (quicklist.go); nil when unknown,
	// which counts as a list built by tail pushes.
	ql       *quicklist
	expireAt int64 // Unix ms; 0 means no expiry
}

// hashValue keeps fields in insertion order, as Redis 7.0 does for small
// hashes (listpack encoding, up to hash-max-listpack-entries = 128), so
// HGETALL, HKEYS and HVALS answer in the server's order.
type hashValue struct {
	fields []string
	values map[string]string
}

func newHash() *hashValue { return &hashValue{values: map[string]string{}} }

func (h *hashValue) get(f string) (string, bool) { v, ok := h.values[f]; return v, ok }

// set stores f and reports whether it is a new field.
func (h *hashValue) set(f, v string) bool {
	n := len(h.values)
	h.values[f] = v // one map access: a new field is one more entry
	if len(h.values) == n {
		return false
	}
	h.fields = append(h.fields, f)
	return true
}

func (h *hashValue) del(f string) bool {
	if _, ok := h.values[f]; !ok {
		return false
	}
	delete(h.values, f)
	h.fields = slices.DeleteFunc(h.fields, func(x string) bool { return x == f })
	return true
}

func (h *hashValue) len() int { return len(h.fields) }

// zsetValue is a sorted set: member → score, ordered by (score, member)
// on demand.
type zsetValue struct {
	scores map[string]float64
	sorted []string // nil when stale
	// longAdded records that a member longer than zset-max-listpack-value
	// was added, which converts even a listpack RESTORE kept with long
	// members (zsetAdd checks the new member).
	longAdded bool
}

func newZSet() *zsetValue { return &zsetValue{scores: map[string]float64{}} }

func (z *zsetValue) set(m string, s float64) {
	if _, ok := z.scores[m]; !ok && len(m) > zsetMaxListpackValue {
		z.longAdded = true
	}
	z.scores[m] = s
	z.sorted = nil
}

func (z *zsetValue) del(m string) bool {
	if _, ok := z.scores[m]; !ok {
		return false
	}
	delete(z.scores, m)
	z.sorted = nil
	return true
}

func (z *zsetValue) len() int { return len(z.scores) }

// members returns members ordered by score, then bytewise by member: the
// order of ZRANGE.
func (z *zsetValue) members() []string {
	if z.sorted == nil {
		z.sorted = make([]string, 0, len(z.scores))
		for m := range z.scores {
			z.sorted = append(z.sorted, m)
		}
		sort.Slice(z.sorted, func(i, j int) bool {
			a, b := z.sorted[i], z.sorted[j]
			sa, sb := z.scores[a], z.scores[b]
			if sa != sb {
				return sa < sb
			}
			return a < b
		})
	}
	return z.sorted
}

// rank returns m's 0-based position in members(), or -1.
func (z *zsetValue) rank(m string) int {
	if _, ok := z.scores[m]; !ok {
		return -1
	}
	return slices.Index(z.members(), m)
}

// setMembers returns a set's members in a stable order: ascending numeric
// order when every member is an integer (Redis' intset encoding, up to
// set-max-intset-entries = 512, answers in exactly that order), else sorted
// bytewise. Redis answers other sets in hash-table order, which is
// unspecified; see the README.
func setMembers(s map[string]struct{}) []string {
	out := make([]string, 0, len(s))
	allInts := len(s) <= 512
	for m := range s {
		out = append(out, m)
		if allInts {
			if _, ok := intsetMember(m); !ok {
				allInts = false
			}
		}
	}
	if allInts {
		sort.Slice(out, func(i, j int) bool {
			a, _ := intsetMember(out[i])
			b, _ := intsetMember(out[j])
			return a < b
		})
	} else {
		sort.Strings(out)
	}
	return out
}

// intsetMember reports whether m is stored in an intset: a canonical
// decimal int64 (string2ll rules: no sign on zero, no leading zeros).
func intsetMember(m string) (int64, bool) {
	n, err := strconv.ParseInt(m, 10, 64)
	if err != nil || strconv.FormatInt(n, 10) != m {
		return 0, false
	}
	return n, true
}

// lookup returns the live entry for key, deleting it first when its
// expiry has passed (Redis' lazy expiry: a key is expired once the clock is
// past its expire time, keyIsExpired in db.c).
func (r *Redis) lookup(key string) *entry { return r.lookupDB(r.db, key) }

// lookupDB is lookup in the database db.
func (r *Redis) lookupDB(db map[string]*entry, key string) *entry {
	e, ok := db[key]
	if !ok {
		return nil
	}
	if e.expireAt != 0 && r.nowMs() > e.expireAt {
		delete(db, key)
		return nil
	}
	return e
}

// lookupType returns key's entry when it holds t and nil when the key does
// not exist; wrong is true when it holds another type (the caller answers
// WRONGTYPE).
func (r *Redis) lookupType(key string, t keyType) (e *entry, wrong bool) {
	e = r.lookup(key)
	if e != nil && e.kind != t {
		return nil, true
	}
	return e, false
}

// setString stores a string value, dropping any expiry unless keepTTL.
func (r *Redis) setString(key, v string, keepTTL bool) {
	e := r.lookup(key)
	var exp int64
	if keepTTL && e != nil {
		exp = e.expireAt
	}
	r.db[key] = &entry{kind: typeString, str: v, expireAt: exp}
}

// del removes key and reports whether it existed.
func (r *Redis) del(key string) bool {
	if r.lookup(key) == nil {
		return false
	}
	delete(r.db, key)
	return true
}

// dropIfEmpty deletes key when its collection is empty: Redis never keeps
// an empty hash, list, set or sorted set.
func (r *Redis) dropIfEmpty(key string, e *entry) {
	empty := false
	switch e.kind {
	case typeHash:
		empty = e.hash.len() == 0
	case typeList:
		empty = len(e.list) == 0
	case typeSet:
		empty = len(e.set) == 0
	case typeZSet:
		empty = e.zset.len() == 0
	}
	if empty {
		delete(r.db, key)
	}
}

// clone returns a deep copy of e (COPY).
func (e *entry) clone() *entry {
	c := *e
	switch e.kind {
	case typeHash:
		h := newHash()
		for _, f := range e.hash.fields {
			h.set(f, e.hash.values[f])
		}
		c.hash = h
	case typeList:
		c.list = slices.Clone(e.list)
		if e.ql != nil {
			c.ql = &quicklist{nodes: slices.Clone(e.ql.nodes), n: e.ql.n}
		}
	case typeSet:
		c.set = make(map[string]struct{}, len(e.set))
		for m := range e.set {
			c.set[m] = struct{}{}
		}
	case typeZSet:
		z := newZSet()
		for m, s := range e.zset.scores {
			z.set(m, s)
		}
		c.zset = z
	case typeStream:
		c.stream = e.stream.clone()
	}
	return &c
}

// lookupIn returns the live entry for key in database db.
func (r *Redis) lookupIn(db int, key string) *entry { return r.lookupDB(r.dbs[db], key) }

// noteEncoding records what the server's encoding of e has become and
// keeps even when the value shrinks: a hash, set or sorted set converted
// to hashtable or skiplist, an intset upgraded to wider integers.
func (e *entry) noteEncoding() {
	switch e.kind {
	case typeHash, typeSet, typeZSet:
	default:
		return
	}
	if e.kind == typeZSet && e.packed && e.zset.longAdded {
		e.wide = true
	}
	switch encodingOf(e) {
	case "hashtable", "skiplist":
		e.wide = true
	case "listpack":
		if e.kind == typeZSet {
			// A listpack stores a score that is an integer as one
			// (zzlInsertAt), so -0 reads back as 0.
			for m, s := range e.zset.scores {
				if s == 0 && math.Signbit(s) {
					e.zset.scores[m] = 0
				}
			}
		}
	case "intset":
		for m := range e.set {
			v, _ := intsetMember(m)
			e.intsetWidth = max(e.intsetWidth, intsetWidthOf(v))
		}
	}
}
