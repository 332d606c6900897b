package runtime_test

// Tests of runtime/goredis that need go-redis itself (its retries, RESP2)
// or a cluster: they live here to share the package's cluster.

import (
	"context"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/luagen/luagen/redistest"
	"github.com/luagen/luagen/runtime"
	"github.com/luagen/luagen/runtime/goredis"
)

// slowIncr increments KEYS[1], then keeps the server busy for ARGV[1]
// milliseconds, so a client with a shorter read timeout gives up on a
// script that ran.
var slowIncr = runtime.NewScript(runtime.ScriptSpec{Name: "t.SlowIncr", File: "slow.lua", Body: `#!lua
redis.call('INCR', KEYS[1])
local t = redis.call('TIME')
local start = t[1] * 1000000 + t[2]
repeat t = redis.call('TIME') until t[1] * 1000000 + t[2] - start >= tonumber(ARGV[1]) * 1000
return 1`})

// The client gives up on a reply after readTimeout and resends on a new
// connection, whose handshake (HELLO) must not time out in turn while the
// server is still busy: so slowMs is below 2×readTimeout.
const (
	slowMs      = 150                    // how long slowIncr keeps the server busy
	readTimeout = 100 * time.Millisecond // the client's; shorter than slowMs
)

// runs waits until the server is idle again and returns how often slowIncr
// ran for key. It reads the counter, which the server answers once the
// script in progress ended, then once more after enough time for every
// script a client had sent meanwhile (go-redis' resends are all written
// before the caller gets the error, so they are queued by now).
func runs(t *testing.T, do func(...string) string, key string) int {
	t.Helper()
	do("GET", key)
	deadline := time.Now().Add(20 * time.Second)
	prev := -1
	for {
		time.Sleep(2 * slowMs * time.Millisecond)
		n, _ := strconv.Atoi(do("GET", key))
		if n == prev || time.Now().After(deadline) {
			return n
		}
		prev = n
	}
}

// go-redis resends a command whose reply timed out (error.go shouldRetry;
// redis.go processWithRetry), so go-redis' own Script.Run runs a script
// that outlives ReadTimeout up to MaxRetries+1 times. The executor sends it
// once and returns the timeout.
func TestGoRedisExecutorNeverResendsAScriptThatMayHaveRun(t *testing.T) {
	srv := redistest.Start(t)
	do := func(args ...string) string { return srv.Do(t, args...) }
	c := redis.NewClient(&redis.Options{Addr: srv.Addr, ReadTimeout: readTimeout, MaxRetries: 3})
	t.Cleanup(func() { c.Close() })
	testNoResend(t, c, do)
}

// The same on a cluster, whose client resends on another node too
// (osscluster.go ClusterClient.process).
func TestGoRedisExecutorNeverResendsOnCluster(t *testing.T) {
	cl := sharedCluster(t)
	c := redis.NewClusterClient(&redis.ClusterOptions{Addrs: cl.Addrs(), ReadTimeout: readTimeout, MaxRetries: 3})
	t.Cleanup(func() { c.Close() })
	prefix := "{noresend-" + strconv.FormatInt(time.Now().UnixNano(), 36) + "}:"
	primary, _, err := cl.PrimaryOf(runtime.Slot(prefix))
	require.NoError(t, err)
	do := func(args ...string) string { return primary.Do(t, args...) }
	testNoResend(t, c, do, prefix)
}

func testNoResend(t *testing.T, c redis.UniversalClient, do func(...string) string, prefix ...string) {
	ctx := context.Background()
	key := func(k string) string { return strings.Join(prefix, "") + k }
	ms := strconv.Itoa(slowMs)

	// What the executor prevents: go-redis' Script.Run.
	err := redis.NewScript(slowIncr.Body()).Run(ctx, c, []string{key("plain")}, ms).Err()
	require.Error(t, err, "the read timed out")
	plain := runs(t, do, key("plain"))
	require.Greater(t, plain, 1, "go-redis sent the script again after it ran")
	t.Logf("go-redis Script.Run ran the script %d times", plain)

	e := goredis.New(c)
	do("SCRIPT", "FLUSH")
	// First EVALSHA answers NOSCRIPT, then EVAL runs and times out…
	_, err = slowIncr.Exec(ctx, e, []string{key("eval")}, []string{ms})
	require.Error(t, err)
	assert.True(t, runtime.Transient(err), "a timeout is transient: %v", err)
	assert.Equal(t, 1, runs(t, do, key("eval")), "EVAL was sent once")
	// …and cached the script, so now EVALSHA runs it and times out.
	_, err = slowIncr.Exec(ctx, e, []string{key("evalsha")}, []string{ms})
	require.Error(t, err)
	assert.Equal(t, 1, runs(t, do, key("evalsha")), "EVALSHA was sent once")

	// Other commands keep go-redis' retries: the executor changed nothing
	// in the client.
	switch c := c.(type) {
	case *redis.Client:
		assert.Equal(t, 3, c.Options().MaxRetries)
	case *redis.ClusterClient:
		assert.Equal(t, 3, c.Options().MaxRetries)
	}
}

// A client speaking RESP2 gets the RESP2 forms of RESP3 replies.
func TestGoRedisRESP2Replies(t *testing.T) {
	srv := redistest.Start(t)
	c := redis.NewClient(&redis.Options{Addr: srv.Addr, Protocol: 2})
	t.Cleanup(func() { c.Close() })
	testReplies(t, srv, goredis.New(c), []replyCase{
		{"return 42", runtime.IntValue(42)},
		{"return 'x'", runtime.StringValue("x")},
		{"return {ok='QUEUED'}", runtime.StringValue("QUEUED")},
		{"return nil", runtime.Nil},
		{"return {1, 'a', {2}, false, 3}", runtime.ArrayValue(runtime.IntValue(1), runtime.StringValue("a"), runtime.ArrayValue(runtime.IntValue(2)), runtime.Nil, runtime.IntValue(3))},
		{"return {1, redis.pcall('INCR', KEYS[1])}", runtime.ArrayValue(runtime.IntValue(1), runtime.Value{Kind: runtime.KindError, Str: "value is not an integer or out of range"})},
		{"redis.setresp(3); return redis.call('HGETALL', KEYS[2])", runtime.ArrayValue(runtime.StringValue("f"), runtime.StringValue("v"))},
		{"redis.setresp(3); return {double=1.5}", runtime.StringValue("1.5")},
		{"redis.setresp(3); return true", runtime.IntValue(1)},
		{"redis.setresp(3); return false", runtime.IntValue(0)},
		{"redis.setresp(3); return {big_number='123456789012345678901234567890'}", runtime.StringValue("123456789012345678901234567890")},
	})
}

// Load names the script and the node, and keeps the server's reply.
func TestGoRedisLoadErrors(t *testing.T) {
	srv := redistest.Start(t)
	c := redis.NewClient(&redis.Options{Addr: srv.Addr})
	t.Cleanup(func() { c.Close() })
	bad := runtime.NewScript(runtime.ScriptSpec{Name: "t.Bad", File: "bad.lua", Body: "return +"})
	err := goredis.New(c).Load(context.Background(), bad)
	var re *runtime.ReplyError
	require.ErrorAs(t, err, &re)
	assert.True(t, strings.HasPrefix(re.Msg, "Error compiling script"), re.Msg)
	assert.Contains(t, err.Error(), "SCRIPT LOAD t.Bad on "+srv.Addr+": ")

	cc := redis.NewClusterClient(&redis.ClusterOptions{Addrs: sharedCluster(t).Addrs()})
	t.Cleanup(func() { cc.Close() })
	err = goredis.New(cc).Load(context.Background(), bad)
	require.ErrorAs(t, err, &re)
	assert.Equal(t, 6, strings.Count(err.Error(), "SCRIPT LOAD t.Bad on "), "every node's error, joined: %v", err)
}
