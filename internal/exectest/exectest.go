// Package exectest runs real-server tests once per executor: rueidis
// (runtime.NewRueidisExecutor) and go-redis (goredis.NewExecutor), on a redistest server or
// cluster. A test that takes a runtime.Executor writes
//
//	exectest.Run(t, func(t *testing.T, k exectest.Kind) {
//		srv := redistest.Start(t)
//		e := k.Single(t, srv)
//		...
//	})
//
// and its assertions hold for both clients. Clients are closed when the
// subtest ends.
package exectest

import (
	"testing"

	"github.com/redis/go-redis/v9"

	"github.com/luagen/luagen/redistest"
	"github.com/luagen/luagen/runtime"
	"github.com/luagen/luagen/runtime/goredis"
)

// Kind is one client library an executor can wrap.
type Kind struct {
	Name string // "rueidis" or "goredis": the subtest name
	// Single returns an executor over a new client (its own connections)
	// to srv.
	Single func(tb testing.TB, srv *redistest.Server) runtime.Executor
	// Cluster returns an executor over a new cluster client seeded with
	// every node of c.
	Cluster func(tb testing.TB, c *redistest.Cluster) runtime.Executor
}

// Rueidis is runtime.NewRueidisExecutor over the clients redistest builds (client-side
// caching off).
var Rueidis = Kind{
	Name: "rueidis",
	Single: func(tb testing.TB, srv *redistest.Server) runtime.Executor {
		return runtime.NewRueidisExecutor(srv.Client(tb))
	},
	Cluster: func(tb testing.TB, c *redistest.Cluster) runtime.Executor {
		return runtime.NewRueidisExecutor(c.Client(tb))
	},
}

// GoRedis is goredis.NewExecutor over a go-redis v9 client with default options
// (RESP3, MaxRetries 3): the executor must not need anything else.
var GoRedis = Kind{
	Name: "goredis",
	Single: func(tb testing.TB, srv *redistest.Server) runtime.Executor {
		c := redis.NewClient(&redis.Options{Addr: srv.Addr})
		tb.Cleanup(func() { c.Close() })
		return goredis.NewExecutor(c)
	},
	Cluster: func(tb testing.TB, cl *redistest.Cluster) runtime.Executor {
		c := redis.NewClusterClient(&redis.ClusterOptions{Addrs: cl.Addrs()})
		tb.Cleanup(func() { c.Close() })
		return goredis.NewExecutor(c)
	},
}

// Kinds are every executor kind, in subtest order.
var Kinds = []Kind{Rueidis, GoRedis}

// Run runs f as one subtest per kind, named after it.
func Run(t *testing.T, f func(t *testing.T, k Kind)) {
	t.Helper()
	for _, k := range Kinds {
		t.Run(k.Name, func(t *testing.T) { f(t, k) })
	}
}
