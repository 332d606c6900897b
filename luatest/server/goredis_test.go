package server_test

import (
	"context"
	"errors"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/luagen/luagen/luatest"
	"github.com/luagen/luagen/luatest/server"
	"github.com/luagen/luagen/runtime/goredis"
	"github.com/luagen/luagen/stock"
)

func itoa(n int64) string { return strconv.FormatInt(n, 10) }

var t0 = time.UnixMilli(1_700_000_000_000)

// goRedis returns a go-redis client of srv speaking proto, closed with t.
func goRedis(t *testing.T, srv *server.Server, proto int, opts ...func(*redis.Options)) *redis.Client {
	o := &redis.Options{Addr: srv.Addr(), Protocol: proto}
	for _, f := range opts {
		f(o)
	}
	c := redis.NewClient(o)
	t.Cleanup(func() { c.Close() })
	return c
}

// go-redis works against the server in both protocols: data commands,
// expiry on the virtual clock the test moves, a Lua script, pipelines,
// transactions, the database of Options.DB, and the inspection of what
// the client wrote.
func TestGoRedis(t *testing.T) {
	for _, proto := range []int{2, 3} {
		t.Run(map[int]string{2: "RESP2", 3: "RESP3"}[proto], func(t *testing.T) {
			ctx := context.Background()
			srv := server.Start(t, luatest.Start(t, luatest.WithTime(t0)))
			c := goRedis(t, srv, proto)

			require.NoError(t, c.Set(ctx, "k", "v", time.Second).Err())
			assert.Equal(t, "v", c.Get(ctx, "k").Val())
			v, ok := srv.Get("k")
			assert.True(t, ok)
			assert.Equal(t, "v", v)
			srv.Advance(time.Second)
			assert.Equal(t, "v", c.Get(ctx, "k").Val(), "Redis expires a key after its time, not at it")
			srv.Advance(time.Millisecond)
			assert.ErrorIs(t, c.Get(ctx, "k").Err(), redis.Nil)

			require.NoError(t, c.HSet(ctx, "h", "a", "1", "b", "2").Err())
			assert.Equal(t, map[string]string{"a": "1", "b": "2"}, c.HGetAll(ctx, "h").Val())
			require.NoError(t, c.ZAdd(ctx, "z", redis.Z{Score: 1.5, Member: "m"}).Err())
			assert.Equal(t, []redis.Z{{Score: 1.5, Member: "m"}}, c.ZRangeWithScores(ctx, "z", 0, -1).Val())
			assert.Equal(t, 1.5, c.ZScore(ctx, "z", "m").Val())

			n, err := c.Eval(ctx, "return redis.call('INCRBY', KEYS[1], ARGV[1])", []string{"n"}, 5).Int64()
			require.NoError(t, err)
			assert.Equal(t, int64(5), n)
			err = c.Eval(ctx, "return redis.call('HGET', KEYS[1])", []string{"h"}).Err()
			require.Error(t, err)
			assert.Contains(t, err.Error(), "Wrong number of args calling Redis command from script")

			cmds, err := c.Pipelined(ctx, func(p redis.Pipeliner) error {
				for i := range 100 {
					p.Set(ctx, "p"+string(rune('a'+i%26)), i, 0)
					p.Get(ctx, "p"+string(rune('a'+i%26)))
				}
				return nil
			})
			require.NoError(t, err)
			assert.Len(t, cmds, 200)
			assert.Equal(t, "99", cmds[199].(*redis.StringCmd).Val())

			var incr *redis.IntCmd
			_, err = c.TxPipelined(ctx, func(p redis.Pipeliner) error {
				p.Set(ctx, "t", "1", 0)
				incr = p.Incr(ctx, "t")
				return nil
			})
			require.NoError(t, err)
			assert.Equal(t, int64(2), incr.Val())

			other := goRedis(t, srv, proto, func(o *redis.Options) { o.DB = 3 })
			require.NoError(t, other.Set(ctx, "k", "db3", 0).Err())
			assert.ErrorIs(t, c.Get(ctx, "k").Err(), redis.Nil, "database 0 is not database 3")
			assert.Equal(t, "db3", other.Get(ctx, "k").Val())
			assert.Equal(t, 3, other.ClientInfo(ctx).Val().DB, "CLIENT INFO shows the database SELECT chose")
			srv.MustDo("SELECT", "3")
			v, _ = srv.Get("k")
			srv.MustDo("SELECT", "0")
			assert.Equal(t, "db3", v, "the test sees database 3 when it selects it")
		})
	}
}

// WATCH aborts a transaction whose key another client changed, with
// go-redis's ErrTxFailed, and lets it run otherwise.
func TestGoRedisWatch(t *testing.T) {
	ctx := context.Background()
	srv := server.Start(t, nil)
	c := goRedis(t, srv, 3)
	other := goRedis(t, srv, 2)
	require.NoError(t, c.Set(ctx, "w", "0", 0).Err())

	err := c.Watch(ctx, func(tx *redis.Tx) error {
		require.NoError(t, other.Set(ctx, "w", "changed", 0).Err())
		_, err := tx.TxPipelined(ctx, func(p redis.Pipeliner) error {
			p.Set(ctx, "w", "mine", 0)
			return nil
		})
		return err
	}, "w")
	assert.ErrorIs(t, err, redis.TxFailedErr)
	assert.Equal(t, "changed", c.Get(ctx, "w").Val())

	err = c.Watch(ctx, func(tx *redis.Tx) error {
		_, err := tx.TxPipelined(ctx, func(p redis.Pipeliner) error {
			p.Set(ctx, "w", "mine", 0)
			return nil
		})
		return err
	}, "w")
	require.NoError(t, err)
	assert.Equal(t, "mine", c.Get(ctx, "w").Val())

	// A watched key with an expiry that passes on the virtual clock
	// aborts EXEC too (Redis 7.0).
	require.NoError(t, c.Set(ctx, "e", "1", time.Second).Err())
	err = c.Watch(ctx, func(tx *redis.Tx) error {
		srv.Advance(2 * time.Second)
		_, err := tx.TxPipelined(ctx, func(p redis.Pipeliner) error {
			p.Set(ctx, "e", "2", 0)
			return nil
		})
		return err
	}, "e")
	assert.ErrorIs(t, err, redis.TxFailedErr)
}

// Pub/sub through go-redis: a subscriber receives what a client and a
// script publish, PUBLISH counts receivers, and pattern subscriptions get
// pmessages.
func TestGoRedisPubSub(t *testing.T) {
	for _, proto := range []int{2, 3} {
		t.Run(map[int]string{2: "RESP2", 3: "RESP3"}[proto], func(t *testing.T) {
			ctx := context.Background()
			srv := server.Start(t, nil)
			c := goRedis(t, srv, proto)
			sub := c.Subscribe(ctx, "news")
			defer sub.Close()
			_, err := sub.Receive(ctx) // the confirmation
			require.NoError(t, err)
			psub := c.PSubscribe(ctx, "n*")
			defer psub.Close()
			_, err = psub.Receive(ctx)
			require.NoError(t, err)

			assert.Equal(t, int64(2), c.Publish(ctx, "news", "hello").Val())
			require.NoError(t, c.Eval(ctx, "return redis.call('PUBLISH', 'news', 'from lua')", nil).Err())
			assert.Equal(t, int64(0), c.Publish(ctx, "other", "x").Val())

			for _, want := range []string{"hello", "from lua"} {
				m, err := sub.ReceiveMessage(ctx)
				require.NoError(t, err)
				assert.Equal(t, "news", m.Channel)
				assert.Equal(t, want, m.Payload)
				pm, err := psub.ReceiveMessage(ctx)
				require.NoError(t, err)
				assert.Equal(t, "n*", pm.Pattern)
				assert.Equal(t, want, pm.Payload)
			}
			assert.Equal(t, map[string]int64{"news": 1, "none": 0}, c.PubSubNumSub(ctx, "news", "none").Val())
			assert.Equal(t, []string{"news"}, c.PubSubChannels(ctx, "*").Val())
			assert.Equal(t, int64(1), c.PubSubNumPat(ctx).Val())
			events := srv.Events()
			require.Len(t, events, 3)
			assert.Equal(t, luatest.Event{Command: "PUBLISH", Channel: "news", Message: "from lua"}, events[1])
		})
	}
}

// Blocking commands wait for another client's write (or the test's), and
// time out with a nil.
func TestGoRedisBlocking(t *testing.T) {
	ctx := context.Background()
	srv := server.Start(t, nil)
	c := goRedis(t, srv, 3)
	other := goRedis(t, srv, 2)

	got := make(chan []string)
	go func() {
		v, _ := c.BLPop(ctx, 0, "q1", "q2").Result()
		got <- v
	}()
	waitBlocked(t, other, 1)
	require.NoError(t, other.RPush(ctx, "q2", "job").Err())
	assert.Equal(t, []string{"q2", "job"}, <-got)

	go func() {
		v, _ := c.BLMove(ctx, "src", "dst", "LEFT", "RIGHT", 0).Result()
		got <- []string{v}
	}()
	waitBlocked(t, other, 1)
	srv.MustDo("RPUSH", "src", "moved") // the test's own write wakes it too
	assert.Equal(t, []string{"moved"}, <-got)
	assert.Equal(t, []string{"moved"}, srv.List("dst"))

	go func() {
		v, _ := c.BZPopMin(ctx, 0, "z").Result()
		got <- []string{v.Key, v.Member.(string)}
	}()
	waitBlocked(t, other, 1)
	require.NoError(t, other.ZAdd(ctx, "z", redis.Z{Score: 2, Member: "b"}, redis.Z{Score: 1, Member: "a"}).Err())
	assert.Equal(t, []string{"z", "a"}, <-got)

	go func() {
		v, _ := c.XRead(ctx, &redis.XReadArgs{Streams: []string{"s", "$"}, Block: 0}).Result()
		got <- []string{v[0].Stream, v[0].Messages[0].Values["f"].(string)}
	}()
	waitBlocked(t, other, 1)
	require.NoError(t, other.XAdd(ctx, &redis.XAddArgs{Stream: "s", Values: []string{"f", "new"}}).Err())
	assert.Equal(t, []string{"s", "new"}, <-got)

	_, err := c.BRPop(ctx, 50*time.Millisecond, "empty").Result()
	assert.ErrorIs(t, err, redis.Nil)
	_, err = c.XRead(ctx, &redis.XReadArgs{Streams: []string{"s", "$"}, Block: 50 * time.Millisecond}).Result()
	assert.ErrorIs(t, err, redis.Nil)
	assert.Equal(t, int64(0), c.Wait(ctx, 0, 0).Val())
	assert.Equal(t, int64(0), c.Wait(ctx, 1, 20*time.Millisecond).Val())
}

// waitBlocked waits until n connections run a blocking command, as
// CLIENT LIST shows them (flags=b).
func waitBlocked(t *testing.T, c *redis.Client, n int) {
	t.Helper()
	require.Eventually(t, func() bool {
		return strings.Count(c.ClientList(context.Background()).Val(), " flags=b ") == n
	}, 5*time.Second, time.Millisecond)
}

// containsBlocked reports whether a CLIENT LIST shows a connection
// blocked in cmd.
func containsBlocked(list, cmd string) bool {
	for _, line := range strings.Split(list, "\n") {
		if strings.Contains(line, " flags=b ") && strings.Contains(line, " cmd="+cmd+" ") {
			return true
		}
	}
	return false
}

// CLIENT and connection commands go-redis exposes.
func TestGoRedisClientCommands(t *testing.T) {
	ctx := context.Background()
	srv := server.Start(t, nil)
	c := goRedis(t, srv, 3, func(o *redis.Options) { o.ClientName = "worker-1"; o.PoolSize = 1 })
	assert.Equal(t, "worker-1", c.ClientGetName(ctx).Val())
	id := c.ClientID(ctx).Val()
	assert.Greater(t, id, int64(0))
	assert.Contains(t, c.ClientList(ctx).Val(), "name=worker-1 ")
	assert.Equal(t, "PONG", c.Ping(ctx).Val())
	// Not served: an error, never CLIENT's help taken for success.
	for _, sub := range [][]any{{"CLIENT", "REPLY", "ON"}, {"CLIENT", "UNBLOCK", "5"}} {
		assert.ErrorContains(t, c.Do(ctx, sub...).Err(), "is not implemented by luatest", "%v", sub)
	}
	assert.Equal(t, "hi", c.Echo(ctx, "hi").Val())
	assert.Equal(t, map[string]string{"maxmemory-policy": "noeviction"}, c.ConfigGet(ctx, "maxmemory-policy").Val())
	require.NoError(t, c.ConfigSet(ctx, "maxmemory-policy", "allkeys-lru").Err())
	assert.Equal(t, map[string]string{"maxmemory-policy": "allkeys-lru"}, c.ConfigGet(ctx, "maxmemory-policy").Val())
	assert.Contains(t, c.Info(ctx, "server").Val(), "redis_version:7.0.15")

	other := goRedis(t, srv, 2)
	assert.Equal(t, int64(1), other.ClientKillByFilter(ctx, "ID", itoa(id)).Val())
	// go-redis reconnects, with a new id.
	require.Eventually(t, func() bool { return c.Ping(ctx).Err() == nil }, 5*time.Second, time.Millisecond)
	assert.NotEqual(t, id, c.ClientID(ctx).Val())
}

// With a password, go-redis authenticates in its HELLO; a wrong password
// is refused.
func TestGoRedisAuth(t *testing.T) {
	ctx := context.Background()
	srv := server.Start(t, nil, server.WithPassword("s3cret"))
	for _, proto := range []int{2, 3} {
		c := goRedis(t, srv, proto, func(o *redis.Options) { o.Password = "s3cret" })
		assert.NoError(t, c.Set(ctx, "k", "v", 0).Err())
		bad := goRedis(t, srv, proto, func(o *redis.Options) { o.Password = "wrong" })
		err := bad.Ping(ctx).Err()
		require.Error(t, err)
		assert.Contains(t, err.Error(), "WRONGPASS")
		none := goRedis(t, srv, proto)
		err = none.Get(ctx, "k").Err()
		require.Error(t, err)
		assert.Contains(t, err.Error(), "NOAUTH")
	}
}

// luagen's generated code runs through runtime/goredis against the server
// as against redis-server: the NOSCRIPT fallback, declared errors.
func TestGeneratedCodeThroughGoRedis(t *testing.T) {
	ctx := context.Background()
	srv := server.Start(t, nil)
	c := goRedis(t, srv, 2)
	scripts := stock.New(goredis.NewExecutor(c))
	k := stock.KeysFor("shop:", "42")
	srv.Set(k.Stock, "1")
	left, err := scripts.Deduct(ctx, k.Deduct(), stock.DeductArgs{Order: "o1", Buyer: "u1", Qty: 1, At: t0})
	require.NoError(t, err)
	assert.Equal(t, int64(0), left)
	_, err = scripts.Deduct(ctx, k.Deduct(), stock.DeductArgs{Order: "o2", Buyer: "u2", Qty: 1, At: t0})
	assert.True(t, errors.Is(err, stock.ErrOutOfStock), "%v", err)
	var lines []string
	for _, call := range srv.Calls() {
		lines = append(lines, call.Mode.String())
	}
	sort.Strings(lines)
	assert.Contains(t, lines, "EVAL")
	assert.Contains(t, lines, "EVALSHA")
}
