package runtime_test

// Tests of runtime/goredis that need go-redis itself (its retries, RESP2)
// or a cluster: they live here to share the package's cluster.

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
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
// server is still busy: so slowMs is below 2×readTimeout. The 200 ms
// between them is slack for a loaded machine: go-redis arms the read
// deadline when it starts reading, so a client goroutine descheduled after
// its write for longer than slowMs-readTimeout would see the reply in time.
const (
	slowMs      = 600                    // how long slowIncr keeps the server busy
	readTimeout = 400 * time.Millisecond // the client's; shorter than slowMs
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

	e := goredis.NewExecutor(c)
	do("SCRIPT", "FLUSH")
	// First EVALSHA answers NOSCRIPT, then EVAL runs and times out…
	_, err = slowIncr.Exec(ctx, e, []string{key("eval")}, []string{ms})
	require.Error(t, err)
	assert.True(t, runtime.IsTransient(err), "a timeout is transient: %v", err)
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
	testReplies(t, srv, goredis.NewExecutor(c), []replyCase{
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
	err := goredis.NewExecutor(c).Load(context.Background(), bad)
	var re *runtime.ReplyError
	require.ErrorAs(t, err, &re)
	assert.True(t, strings.HasPrefix(re.Msg, "Error compiling script"), re.Msg)
	assert.Contains(t, err.Error(), "SCRIPT LOAD t.Bad on "+srv.Addr+": ")

	cc := redis.NewClusterClient(&redis.ClusterOptions{Addrs: sharedCluster(t).Addrs()})
	t.Cleanup(func() { cc.Close() })
	err = goredis.NewExecutor(cc).Load(context.Background(), bad)
	require.ErrorAs(t, err, &re)
	assert.Equal(t, 6, strings.Count(err.Error(), "SCRIPT LOAD t.Bad on "), "every node's error, joined: %v", err)
}

// startSentinel runs a Sentinel watching primary as "m", stopped when t
// ends, and returns its address.
func startSentinel(t *testing.T, primary *redistest.Server) string {
	t.Helper()
	dir := t.TempDir()
	port := redistest.FreePort(t)
	conf := filepath.Join(dir, "sentinel.conf")
	require.NoError(t, os.WriteFile(conf, []byte("port "+strconv.Itoa(port)+"\nbind 127.0.0.1\ndir "+dir+
		"\nsentinel monitor m 127.0.0.1 "+strconv.Itoa(primary.Port)+" 1\nsentinel down-after-milliseconds m 1000\nsentinel failover-timeout m 10000\n"), 0o644))
	cmd := exec.Command("redis-server", conf, "--sentinel")
	cmd.Dir = dir
	require.NoError(t, cmd.Start())
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
	})
	addr := "127.0.0.1:" + strconv.Itoa(port)
	require.NoError(t, redistest.WaitPing(addr, 10*time.Second))
	return addr
}

// A failover client (Sentinel): Load reaches the primary only, since
// go-redis exposes no replica of it; after SENTINEL FAILOVER the promoted
// replica answers NOSCRIPT once and Exec falls back to EVAL. The script ran
// once per call: on the old primary, then on the new one.
func TestGoRedisFailoverClient(t *testing.T) {
	primary := redistest.Start(t)
	replica := redistest.Start(t, "--replicaof", "127.0.0.1", strconv.Itoa(primary.Port))
	sentinel := startSentinel(t, primary)
	sentinelDo := func(args ...string) (string, error) {
		c := redis.NewClient(&redis.Options{Addr: sentinel})
		defer c.Close()
		a := make([]any, len(args))
		for i, s := range args {
			a[i] = s
		}
		v, err := c.Do(context.Background(), a...).Result()
		return fmt.Sprint(v), err
	}
	c := redis.NewFailoverClient(&redis.FailoverOptions{MasterName: "m", SentinelAddrs: []string{sentinel}})
	t.Cleanup(func() { c.Close() })
	e := goredis.NewExecutor(c)
	ctx := context.Background()
	s := runtime.NewScript(runtime.ScriptSpec{Name: "t.Incr", File: "incr.lua", Body: "#!lua\nreturn redis.call('INCR', KEYS[1])"})

	require.NoError(t, s.Load(ctx, e))
	assert.Equal(t, "[1]", primary.Do(t, "SCRIPT", "EXISTS", s.SHA1()))
	assert.Equal(t, "[0]", replica.Do(t, "SCRIPT", "EXISTS", s.SHA1()), "SCRIPT LOAD is not replicated")
	v, err := s.Exec(ctx, e, []string{"n"}, nil)
	require.NoError(t, err)
	require.Equal(t, int64(1), v.Int)
	// A loaded machine may still be syncing the replica: wait for its ack
	// as long as the failover below may take, not a fixed 5 s.
	require.Eventually(t, func() bool { return primary.Do(t, "WAIT", "1", "1000") == "1" },
		30*time.Second, 10*time.Millisecond, "the replica has the increment")

	// SENTINEL FAILOVER needs the sentinel to have seen the replica.
	require.Eventually(t, func() bool {
		out, err := sentinelDo("SENTINEL", "FAILOVER", "m")
		return err == nil && out == "OK"
	}, 20*time.Second, 100*time.Millisecond)
	require.Eventually(t, func() bool {
		out, err := sentinelDo("SENTINEL", "GET-MASTER-ADDR-BY-NAME", "m")
		return err == nil && strings.Contains(out, strconv.Itoa(replica.Port)) &&
			strings.Contains(replica.Do(t, "INFO", "replication"), "role:master")
	}, 30*time.Second, 50*time.Millisecond, "the replica is promoted")
	// Sentinel demotes the old primary when it next polls it (up to 10 s);
	// do it now, as it would.
	primary.Do(t, "REPLICAOF", "127.0.0.1", strconv.Itoa(replica.Port))
	replica.Do(t, "CONFIG", "RESETSTAT")

	// The client learns the new primary from the sentinel; until then a
	// call may meet the old one, now a replica, which refuses the script
	// before running it (READONLY, transient).
	deadline := time.Now().Add(30 * time.Second)
	for {
		v, err = s.Exec(ctx, e, []string{"n"}, nil)
		if err == nil || !runtime.IsTransient(err) || time.Now().After(deadline) {
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	require.NoError(t, err)
	assert.Equal(t, int64(2), v.Int, "ran once on the new primary")
	assert.Equal(t, "2", replica.Do(t, "GET", "n"))
	assert.Contains(t, replica.Do(t, "INFO", "commandstats"), "cmdstat_eval:calls=1,", "NOSCRIPT, then EVAL")
}
