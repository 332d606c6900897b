package luatest

import (
	"fmt"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/luagen/luagen/luatest/resp"
)

// Typed helpers to seed and inspect the keyspace without going through
// Do. They never run scripts and never touch the call log.

// Set stores a string value without expiry (SET key value).
func (r *Redis) Set(key, value string) {
	r.lock()
	defer r.mu.Unlock()
	r.setString(key, value, false)
	r.touched(r.dbIndex, key)
}

// SetTTL stores a string value that expires ttl from the virtual clock's
// now (SET key value PX ttl); a ttl under 1 ms stores no expiry.
func (r *Redis) SetTTL(key, value string, ttl time.Duration) {
	r.lock()
	defer r.mu.Unlock()
	r.setString(key, value, false)
	if ms := ttl.Milliseconds(); ms > 0 {
		r.db[key].expireAt = r.nowMs() + ms
	}
	r.touched(r.dbIndex, key)
}

// Get returns key's string value; ok is false when the key is missing or
// holds another type.
func (r *Redis) Get(key string) (value string, ok bool) {
	r.lock()
	defer r.mu.Unlock()
	e, _ := r.lookupType(key, typeString)
	if e == nil {
		return "", false
	}
	return e.str, true
}

// Type returns what TYPE answers: "string", "hash", "list", "set", "zset",
// or "none" for a missing key.
func (r *Redis) Type(key string) string {
	r.lock()
	defer r.mu.Unlock()
	if e := r.lookup(key); e != nil {
		return typeNames[e.kind]
	}
	return "none"
}

// Exists reports whether key exists (expiry taken into account).
func (r *Redis) Exists(key string) bool { return r.Type(key) != "none" }

// PTTL returns key's remaining time to live on the virtual clock (≥ 0,
// millisecond precision) and true when the key has an expiry; 0 and false
// when it has none or is missing.
func (r *Redis) PTTL(key string) (time.Duration, bool) {
	r.lock()
	defer r.mu.Unlock()
	e := r.lookup(key)
	if e == nil || e.expireAt == 0 {
		return 0, false
	}
	return time.Duration(max(e.expireAt-r.nowMs(), 0)) * time.Millisecond, true
}

// HGetAll returns a hash's fields (nil when the key is missing or not a hash).
func (r *Redis) HGetAll(key string) map[string]string {
	r.lock()
	defer r.mu.Unlock()
	e, _ := r.lookupType(key, typeHash)
	if e == nil {
		return nil
	}
	m := make(map[string]string, e.hash.len())
	for _, f := range e.hash.fields {
		m[f] = e.hash.values[f]
	}
	return m
}

// List returns a list's elements, head first (nil when missing or not a list).
func (r *Redis) List(key string) []string {
	r.lock()
	defer r.mu.Unlock()
	e, _ := r.lookupType(key, typeList)
	if e == nil {
		return nil
	}
	return append([]string(nil), e.list...)
}

// Members returns a set's members sorted (nil when missing or not a set).
func (r *Redis) Members(key string) []string {
	r.lock()
	defer r.mu.Unlock()
	e, _ := r.lookupType(key, typeSet)
	if e == nil {
		return nil
	}
	m := setMembers(e.set)
	sort.Strings(m)
	return m
}

// ZScores returns a sorted set's member → score (nil when missing or not a zset).
func (r *Redis) ZScores(key string) map[string]float64 {
	r.lock()
	defer r.mu.Unlock()
	e, _ := r.lookupType(key, typeZSet)
	if e == nil {
		return nil
	}
	m := make(map[string]float64, e.zset.len())
	for k, v := range e.zset.scores {
		m[k] = v
	}
	return m
}

// Keys returns every live key, sorted.
func (r *Redis) Keys() []string {
	r.lock()
	defer r.mu.Unlock()
	return r.keys("*")
}

// Dump renders the whole keyspace, one key per line in key order, for
// assertions and failure messages:
//
//	seckill:{42}:log:u7 string "u7 2 1700000000123" ttl=1h0m0s
//	seckill:{42}:stock string "3"
//	lock:{a} hash {"owner1": "1"} ttl=30s
//	limit:{u7} zset ["r1":1700000000000 "r2":1700000000000.5]
//
// Sorted-set scores read as ZSCORE answers them (Redis' "%.17g"):
// millisecond timestamps in full, 0.1 as 0.10000000000000001.
func (r *Redis) Dump() string {
	r.lock()
	defer r.mu.Unlock()
	var b strings.Builder
	for _, k := range r.keys("*") {
		e := r.db[k]
		fmt.Fprintf(&b, "%s %s ", k, typeNames[e.kind])
		switch e.kind {
		case typeString:
			b.WriteString(strconv.Quote(e.str))
		case typeHash:
			b.WriteByte('{')
			for i, f := range e.hash.fields {
				if i > 0 {
					b.WriteString(", ")
				}
				fmt.Fprintf(&b, "%q: %q", f, e.hash.values[f])
			}
			b.WriteByte('}')
		case typeList:
			fmt.Fprintf(&b, "%q", e.list)
		case typeSet:
			fmt.Fprintf(&b, "%q", setMembers(e.set))
		case typeZSet:
			b.WriteByte('[')
			for i, m := range e.zset.members() {
				if i > 0 {
					b.WriteString(" ")
				}
				fmt.Fprintf(&b, "%q:%s", m, resp.FormatDouble(e.zset.scores[m]))
			}
			b.WriteByte(']')
		}
		if e.expireAt != 0 {
			fmt.Fprintf(&b, " ttl=%v", time.Duration(e.expireAt-r.nowMs())*time.Millisecond)
		}
		b.WriteByte('\n')
	}
	return b.String()
}
