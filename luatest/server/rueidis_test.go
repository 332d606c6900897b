package server_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/redis/rueidis"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/luagen/luagen/luatest"
	"github.com/luagen/luagen/luatest/server"
	"github.com/luagen/luagen/runtime"
	"github.com/luagen/luagen/stock"
)

// newRueidis returns a rueidis client of srv with client-side caching off
// (luatest does not track keys), closed with t. resp2 forces RESP2.
func newRueidis(t *testing.T, srv *server.Server, resp2 bool) rueidis.Client {
	c, err := rueidis.NewClient(rueidis.ClientOption{InitAddress: []string{srv.Addr()}, DisableCache: true, AlwaysRESP2: resp2})
	require.NoError(t, err)
	t.Cleanup(c.Close)
	return c
}

// rueidis works against the server in RESP3 (its HELLO 3) and RESP2:
// commands, pipelines (DoMulti), Lua, MULTI/EXEC on a dedicated
// connection, blocking commands, pub/sub, and luagen's own rueidis
// executor running generated code.
func TestRueidis(t *testing.T) {
	for _, resp2 := range []bool{false, true} {
		t.Run(map[bool]string{false: "RESP3", true: "RESP2"}[resp2], func(t *testing.T) {
			ctx := context.Background()
			srv := server.Start(t, luatest.Start(t, luatest.WithTime(t0)))
			c := newRueidis(t, srv, resp2)

			require.NoError(t, c.Do(ctx, c.B().Set().Key("k").Value("v").ExSeconds(10).Build()).Error())
			v, err := c.Do(ctx, c.B().Get().Key("k").Build()).ToString()
			require.NoError(t, err)
			assert.Equal(t, "v", v)
			srv.Advance(10*time.Second + time.Millisecond)
			assert.True(t, rueidis.IsRedisNil(c.Do(ctx, c.B().Get().Key("k").Build()).Error()))

			cmds := make(rueidis.Commands, 0, 200)
			for i := range 100 {
				cmds = append(cmds, c.B().Set().Key("p").Value(itoa(int64(i))).Build(), c.B().Get().Key("p").Build())
			}
			res := c.DoMulti(ctx, cmds...)
			require.Len(t, res, 200)
			last, err := res[199].ToString()
			require.NoError(t, err)
			assert.Equal(t, "99", last)

			m, err := c.Do(ctx, c.B().Hset().Key("h").FieldValue().FieldValue("a", "1").Build()).AsInt64()
			require.NoError(t, err)
			assert.Equal(t, int64(1), m)
			h, err := c.Do(ctx, c.B().Hgetall().Key("h").Build()).AsStrMap()
			require.NoError(t, err)
			assert.Equal(t, map[string]string{"a": "1"}, h)
			score, err := func() (float64, error) {
				c.Do(ctx, c.B().Zadd().Key("z").ScoreMember().ScoreMember(2.5, "m").Build())
				return c.Do(ctx, c.B().Zscore().Key("z").Member("m").Build()).AsFloat64()
			}()
			require.NoError(t, err)
			assert.Equal(t, 2.5, score)

			script := rueidis.NewLuaScript("return redis.call('INCRBY', KEYS[1], ARGV[1])")
			n, err := script.Exec(ctx, c, []string{"n"}, []string{"3"}).AsInt64()
			require.NoError(t, err)
			assert.Equal(t, int64(3), n)

			tx, err := c.Dedicated(func(d rueidis.DedicatedClient) error {
				r := d.DoMulti(ctx, d.B().Multi().Build(), d.B().Incr().Key("n").Build(), d.B().Incr().Key("n").Build(), d.B().Exec().Build())
				return errors.Join(r[3].Error(), func() error {
					vs, err := r[3].ToArray()
					if err == nil && len(vs) == 2 {
						if n, _ := vs[1].AsInt64(); n != 5 {
							return errors.New("EXEC's second INCR did not answer 5")
						}
					}
					return err
				}())
			}), nil
			require.NoError(t, tx)

			got := make(chan []string, 1)
			go func() {
				vs, _ := c.Do(ctx, c.B().Blpop().Key("q").Timeout(0).Build()).AsStrSlice()
				got <- vs
			}()
			require.Eventually(t, func() bool {
				list, _ := c.Do(ctx, c.B().ClientList().Build()).ToString()
				return containsBlocked(list, "blpop")
			}, 5*time.Second, time.Millisecond)
			require.NoError(t, c.Do(ctx, c.B().Rpush().Key("q").Element("job").Build()).Error())
			assert.Equal(t, []string{"q", "job"}, <-got)
			assert.True(t, rueidis.IsRedisNil(c.Do(ctx, c.B().Brpop().Key("q").Timeout(0.05).Build()).Error()))

			msgs := make(chan string, 2)
			subCtx, cancel := context.WithCancel(ctx)
			done := make(chan error, 1)
			go func() {
				done <- c.Receive(subCtx, c.B().Subscribe().Channel("ch").Build(), func(m rueidis.PubSubMessage) { msgs <- m.Message })
			}()
			require.Eventually(t, func() bool {
				n, _ := c.Do(ctx, c.B().Publish().Channel("ch").Message("one").Build()).AsInt64()
				return n == 1
			}, 5*time.Second, time.Millisecond)
			assert.Equal(t, "one", <-msgs)
			cancel()
			<-done

			scripts := stock.New(runtime.NewRueidisExecutor(c))
			k := stock.KeysFor("shop:", "7")
			srv.Set(k.Stock, "1")
			left, err := scripts.Deduct(ctx, k.Deduct(), stock.DeductArgs{Order: "o1", Buyer: "u1", Qty: 1, At: t0})
			require.NoError(t, err)
			assert.Equal(t, int64(0), left)
			_, err = scripts.Deduct(ctx, k.Deduct(), stock.DeductArgs{Order: "o2", Buyer: "u2", Qty: 1, At: t0})
			assert.ErrorIs(t, err, stock.ErrOutOfStock)
		})
	}
}

// rueidis with client-side caching on (its default: CLIENT TRACKING ON
// OPTIN, CLIENT CACHING YES before each cached read): a second read is
// served from its cache, and a write by another client (or the test)
// invalidates it, so the next read sees the new value.
func TestRueidisClientSideCaching(t *testing.T) {
	ctx := context.Background()
	srv := server.Start(t, nil)
	c, err := rueidis.NewClient(rueidis.ClientOption{InitAddress: []string{srv.Addr()}})
	require.NoError(t, err)
	defer c.Close()
	other := newRueidis(t, srv, true)

	srv.Set("k", "v1")
	get := func() rueidis.RedisResult { return c.DoCache(ctx, c.B().Get().Key("k").Cache(), time.Minute) }
	v, err := get().ToString()
	require.NoError(t, err)
	assert.Equal(t, "v1", v)
	assert.True(t, get().IsCacheHit(), "the second read comes from the client's cache")

	require.NoError(t, other.Do(ctx, other.B().Set().Key("k").Value("v2").Build()).Error())
	require.Eventually(t, func() bool { v, _ := get().ToString(); return v == "v2" }, 5*time.Second, time.Millisecond)
	assert.True(t, get().IsCacheHit())

	srv.Set("k", "v3") // the test's own write invalidates too
	require.Eventually(t, func() bool { v, _ := get().ToString(); return v == "v3" }, 5*time.Second, time.Millisecond)

	require.NoError(t, other.Do(ctx, other.B().Flushall().Build()).Error())
	require.Eventually(t, func() bool { return rueidis.IsRedisNil(get().Error()) }, 5*time.Second, time.Millisecond)
}
