package jobqueue_test

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/redis/rueidis"
	"github.com/stretchr/testify/require"

	"github.com/luagen/luagen/luatest"
	"github.com/luagen/luagen/runtime"
)

// store reads one queue's keys, whatever holds them, for [dump].
type store interface {
	// keys lists every key that starts with prefix.
	keys(t *testing.T, prefix string) []string
	typ(t *testing.T, key string) string
	hasTTL(t *testing.T, key string) bool
	str(t *testing.T, key string) string
	hash(t *testing.T, key string) map[string]string
	list(t *testing.T, key string) []string
	// zset is the members with their scores, in ZRANGE order.
	zset(t *testing.T, key string) []string
	// stream is each entry's fields, in order, without the entry ids:
	// XADD * makes them from the server's clock.
	stream(t *testing.T, key string) []map[string]string
}

// dump renders every key under prefix in a form that does not depend on
// where it ran: one line per key, sorted, the key without prefix, its
// type, whether it has a time to live (lock TTLs count down in real time)
// and its contents (hash fields sorted; stream entries without ids).
func dump(t *testing.T, s store, prefix string) string {
	t.Helper()
	keys := s.keys(t, prefix)
	slices.Sort(keys)
	var b strings.Builder
	for _, k := range keys {
		typ := s.typ(t, k)
		fmt.Fprintf(&b, "%s %s", strings.TrimPrefix(k, prefix), typ)
		if s.hasTTL(t, k) {
			b.WriteString(" ttl")
		}
		b.WriteString(" ")
		switch typ {
		case "string":
			b.WriteString(strconv.Quote(s.str(t, k)))
		case "hash":
			b.WriteString(sortedPairs(s.hash(t, k)))
		case "list":
			fmt.Fprintf(&b, "%q", s.list(t, k))
		case "zset":
			fmt.Fprintf(&b, "%q", s.zset(t, k))
		case "stream":
			entries := s.stream(t, k)
			fmt.Fprintf(&b, "len=%d", len(entries))
			for _, e := range entries {
				b.WriteString(" ")
				b.WriteString(sortedPairs(e))
			}
		default:
			t.Fatalf("key %s: the flow writes no %s", k, typ)
		}
		b.WriteString("\n")
	}
	return b.String()
}

func sortedPairs(m map[string]string) string {
	fields := make([]string, 0, len(m))
	for f := range m {
		fields = append(fields, f)
	}
	slices.Sort(fields)
	var parts []string
	for _, f := range fields {
		parts = append(parts, strconv.Quote(f)+":"+strconv.Quote(m[f]))
	}
	return "{" + strings.Join(parts, " ") + "}"
}

// score spells a sorted-set score one way for every store.
func score(f float64) string { return strconv.FormatFloat(f, 'f', -1, 64) }

// luatestStore reads a luatest keyspace.
type luatestStore struct{ r *luatest.Redis }

func (s luatestStore) do(t *testing.T, args ...string) runtime.Value {
	t.Helper()
	v, err := s.r.Do(args...)
	require.NoError(t, err, "%q", args)
	return v
}

func (s luatestStore) keys(t *testing.T, prefix string) []string {
	var out []string
	for _, k := range s.r.Keys() {
		if strings.HasPrefix(k, prefix) {
			out = append(out, k)
		}
	}
	return out
}

func (s luatestStore) typ(t *testing.T, key string) string { return s.do(t, "TYPE", key).Str }

func (s luatestStore) hasTTL(t *testing.T, key string) bool {
	_, ok := s.r.PTTL(key)
	return ok
}

func (s luatestStore) str(t *testing.T, key string) string { return s.do(t, "GET", key).Str }

func (s luatestStore) hash(t *testing.T, key string) map[string]string { return s.r.HGetAll(key) }

func (s luatestStore) list(t *testing.T, key string) []string { return s.r.List(key) }

func (s luatestStore) zset(t *testing.T, key string) []string {
	// luatest's Do answers as a RESP3 client sees it: [member, score]
	// pairs with the score a double.
	var out []string
	for _, p := range s.do(t, "ZRANGE", key, "0", "-1", "WITHSCORES").Array {
		require.Len(t, p.Array, 2, "%s", key)
		require.Equal(t, runtime.KindDouble, p.Array[1].Kind, "%s", key)
		out = append(out, p.Array[0].Str+" "+score(p.Array[1].Float))
	}
	return out
}

func (s luatestStore) stream(t *testing.T, key string) []map[string]string {
	var out []map[string]string
	for _, e := range s.do(t, "XRANGE", key, "-", "+").Array {
		require.Len(t, e.Array, 2)
		m := map[string]string{}
		fv := e.Array[1].Array
		for i := 0; i+1 < len(fv); i += 2 {
			m[fv[i].Str] = fv[i+1].Str
		}
		out = append(out, m)
	}
	return out
}

// rueidisStore reads a server's keyspace through a rueidis client, a
// single server's or a cluster's: each command names its key, so a
// cluster client sends it to the key's node, and KEYS names the queue's
// prefix, whose hash tag puts every key of the queue on that node.
type rueidisStore struct{ c rueidis.Client }

func (s rueidisStore) do(t *testing.T, cmd, key string, args ...string) rueidis.RedisResult {
	t.Helper()
	return s.c.Do(context.Background(), s.c.B().Arbitrary(cmd).Keys(key).Args(args...).Build())
}

func (s rueidisStore) keys(t *testing.T, prefix string) []string {
	ks, err := s.do(t, "KEYS", prefix+"*").AsStrSlice()
	require.NoError(t, err)
	return ks
}

func (s rueidisStore) typ(t *testing.T, key string) string {
	v, err := s.do(t, "TYPE", key).ToString()
	require.NoError(t, err)
	return v
}

func (s rueidisStore) hasTTL(t *testing.T, key string) bool {
	n, err := s.do(t, "PTTL", key).AsInt64()
	require.NoError(t, err)
	return n >= 0
}

func (s rueidisStore) str(t *testing.T, key string) string {
	v, err := s.do(t, "GET", key).ToString()
	require.NoError(t, err)
	return v
}

func (s rueidisStore) hash(t *testing.T, key string) map[string]string {
	m, err := s.do(t, "HGETALL", key).AsStrMap()
	require.NoError(t, err)
	return m
}

func (s rueidisStore) list(t *testing.T, key string) []string {
	v, err := s.do(t, "LRANGE", key, "0", "-1").AsStrSlice()
	require.NoError(t, err)
	return v
}

func (s rueidisStore) zset(t *testing.T, key string) []string {
	zs, err := s.do(t, "ZRANGE", key, "0", "-1", "WITHSCORES").AsZScores()
	require.NoError(t, err)
	var out []string
	for _, z := range zs {
		out = append(out, z.Member+" "+score(z.Score))
	}
	return out
}

func (s rueidisStore) stream(t *testing.T, key string) []map[string]string {
	es, err := s.do(t, "XRANGE", key, "-", "+").AsXRange()
	require.NoError(t, err)
	var out []map[string]string
	for _, e := range es {
		out = append(out, e.FieldValues)
	}
	return out
}
