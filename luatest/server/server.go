// Package server serves a [luatest.Redis] over RESP2 and RESP3 on a TCP
// port, so any client (go-redis, rueidis, redis-cli, a test suite in
// another language) uses luatest as it uses miniredis or a real
// redis-server, with luatest's Lua and replies and its virtual clock.
//
// [Start] ties a server to a test (closed when the test ends); [New] is
// for use outside a test (call [Server.Close]); `luagen serve` runs one
// from the command line. The keyspace is the *luatest.Redis the server
// embeds, so a test seeds, inspects and moves the clock as it does
// offline, and may run generated code on it directly too:
//
//	srv := server.Start(t, luatest.Start(t, luatest.WithTime(t0)))
//	client := redis.NewClient(&redis.Options{Addr: srv.Addr()})
//	// ... client.Set(ctx, "k", "v", time.Second) ...
//	srv.Advance(2 * time.Second) // the key has expired for every client
//
// The server keeps what belongs to connections, as redis-server's
// networking.c, multi.c, pubsub.c and blocking.c do: HELLO and the
// protocol, AUTH, the selected database, CLIENT (client-side caching
// with TRACKING included), CONFIG GET/SET, MULTI/EXEC/WATCH, subscriptions
// (pushes in RESP3), blocking commands and WAIT; every other command is
// luatest's. Differences from redis-server are listed in
// luatest/README.md.
package server

import (
	"errors"
	"fmt"
	"net"
	"strconv"
	"sync"
	"testing"

	"github.com/luagen/luagen/luatest"
	"github.com/luagen/luagen/luatest/internal/engine"
)

// Server is a [luatest.Redis] answering on a TCP port. The embedded Redis
// is the keyspace every connection shares: its methods (Advance, Get, Do,
// Calls, ...) work as offline. Close stops the server; it does not close
// the Redis (which the test or the caller owns).
type Server struct {
	*luatest.Redis
	eng      engine.Engine
	ln       net.Listener
	password string

	wg sync.WaitGroup // the accept loop and every connection's goroutines

	mu     sync.Mutex
	closed bool
	conns  map[*conn]struct{}
	nextID int64
	// wake is closed when the keyspace changes, for the blocked
	// connections that took it (nil when none waits).
	wake     chan struct{}
	channels map[string]map[*conn]struct{} // SUBSCRIBE
	patterns map[string]map[*conn]struct{} // PSUBSCRIBE
	shards   map[string]map[*conn]struct{} // SSUBSCRIBE
	watchers map[dbKey]map[*conn]struct{}  // WATCH
	tracked  map[string]map[*conn]struct{} // CLIENT TRACKING: key → the clients that read it
	config   map[string]string             // CONFIG SET's values
}

// dbKey is a key of one database.
type dbKey struct {
	db  int
	key string
}

// Option configures a [Server].
type Option func(*config)

type config struct {
	addr     string
	password string
}

// WithAddr makes the server listen on addr ("host:port") instead of a
// free loopback port ("127.0.0.1:0").
func WithAddr(addr string) Option { return func(c *config) { c.addr = addr } }

// WithPassword makes the server require AUTH (or HELLO's AUTH) with
// password p for the default user, as requirepass does. The default is
// none: every connection is authenticated.
func WithPassword(p string) Option { return func(c *config) { c.password = p } }

// New serves r (a new [luatest.New] when r is nil) on a free loopback
// port, or the address [WithAddr] gives, until Close. A Redis serves one
// Server at a time. The error is the listener's.
func New(r *luatest.Redis, opts ...Option) (*Server, error) {
	cfg := config{addr: "127.0.0.1:0"}
	for _, o := range opts {
		o(&cfg)
	}
	if r == nil {
		r = luatest.New()
	}
	ln, err := net.Listen("tcp", cfg.addr)
	if err != nil {
		return nil, fmt.Errorf("luatest/server: %w", err)
	}
	s := &Server{
		Redis:    r,
		eng:      engine.Of(r),
		ln:       ln,
		password: cfg.password,
		conns:    map[*conn]struct{}{},
		channels: map[string]map[*conn]struct{}{},
		patterns: map[string]map[*conn]struct{}{},
		shards:   map[string]map[*conn]struct{}{},
		watchers: map[dbKey]map[*conn]struct{}{},
		tracked:  map[string]map[*conn]struct{}{},
		config:   defaultConfig(ln.Addr(), cfg.password),
	}
	s.eng.Observe(observer{s})
	s.wg.Add(1)
	go s.accept()
	return s, nil
}

// Start serves r (a new [luatest.Start](tb) when r is nil) for one test:
// like [New] on a free loopback port, closed when tb ends (before r is
// closed, when r came from luatest.Start in the same test), with every
// connection and goroutine gone by then. It fails tb when it cannot
// listen.
func Start(tb testing.TB, r *luatest.Redis, opts ...Option) *Server {
	tb.Helper()
	if r == nil {
		r = luatest.Start(tb)
	}
	s, err := New(r, opts...)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { s.Close() })
	return s
}

// Addr returns the address the server listens on, "127.0.0.1:port".
func (s *Server) Addr() string { return s.ln.Addr().String() }

// Close stops listening, closes every connection (a blocked command ends
// without a reply) and waits for their goroutines. The Redis stays as it
// is. Close is safe to call more than once; it returns the listener's
// error of the first call.
func (s *Server) Close() error {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return nil
	}
	s.closed = true
	conns := make([]*conn, 0, len(s.conns))
	for c := range s.conns {
		conns = append(conns, c)
	}
	s.mu.Unlock()
	err := s.ln.Close()
	for _, c := range conns {
		c.nc.Close()
	}
	s.wg.Wait()
	s.eng.Observe(nil)
	return err
}

func (s *Server) accept() {
	defer s.wg.Done()
	for {
		nc, err := s.ln.Accept()
		if err != nil {
			var ne net.Error
			if errors.As(err, &ne) && ne.Timeout() {
				continue
			}
			return // closed
		}
		s.mu.Lock()
		if s.closed {
			s.mu.Unlock()
			nc.Close()
			return
		}
		s.nextID++
		c := newConn(s, nc, s.nextID)
		s.conns[c] = struct{}{}
		s.mu.Unlock()
		c.start()
	}
}

// waitChan returns the channel the next change of the keyspace closes.
func (s *Server) waitChan() <-chan struct{} {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.wake == nil {
		s.wake = make(chan struct{})
	}
	return s.wake
}

// observer is the Server as the engine's observer (engine.Observer),
// kept off the Server's own methods.
type observer struct{ s *Server }

// Touched wakes the blocked connections, sends the invalidations of
// client-side caching and marks the connections that WATCH the key dirty
// (signalKeyAsReady, trackingInvalidateKey, touchWatchedKey).
func (o observer) Touched(db int, key string) {
	s := o.s
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.wake != nil {
		close(s.wake)
		s.wake = nil
	}
	s.invalidateLocked(key)
	if len(s.watchers) == 0 {
		return
	}
	if db >= 0 && key != "" {
		for c := range s.watchers[dbKey{db, key}] {
			c.dirty = true
		}
		return
	}
	for k, cs := range s.watchers {
		if db < 0 || k.db == db {
			for c := range cs {
				c.dirty = true
			}
		}
	}
}

// Publish delivers a message to the channel's subscribers, then to the
// patterns that match it (pubsubPublishMessage), and counts them.
func (o observer) Publish(shard bool, channel, message string) int64 {
	s := o.s
	s.mu.Lock()
	defer s.mu.Unlock()
	var n int64
	if shard {
		for c := range s.shards[channel] {
			c.push("smessage", &channel, &message)
			n++
		}
		return n
	}
	for c := range s.channels[channel] {
		c.push("message", &channel, &message)
		n++
	}
	for p, cs := range s.patterns {
		if !s.eng.Match(p, channel) {
			continue
		}
		for c := range cs {
			c.push("pmessage", &p, &channel, &message)
			n++
		}
	}
	return n
}

// defaultConfig is what CONFIG GET answers before any CONFIG SET: the
// defaults of redis-server 7.0.15 for the parameters clients and scripts
// read.
func defaultConfig(addr net.Addr, password string) map[string]string {
	port := "0"
	if a, ok := addr.(*net.TCPAddr); ok {
		port = strconv.Itoa(a.Port)
	}
	return map[string]string{
		"appendonly":                "no",
		"bind":                      "127.0.0.1",
		"busy-reply-threshold":      "5000",
		"client-query-buffer-limit": "1073741824",
		"cluster-enabled":           "no",
		"databases":                 "16",
		"hash-max-listpack-entries": "128",
		"hash-max-listpack-value":   "64",
		"hz":                        "10",
		"lazyfree-lazy-user-flush":  "no",
		"list-max-listpack-size":    "-2",
		"lua-time-limit":            "5000",
		"maxclients":                "10000",
		"maxmemory":                 "0",
		"maxmemory-policy":          "noeviction",
		"notify-keyspace-events":    "",
		"port":                      port,
		"proto-max-bulk-len":        "536870912",
		"requirepass":               password,
		"save":                      "",
		"set-max-intset-entries":    "512",
		"slowlog-log-slower-than":   "10000",
		"timeout":                   "0",
		"zset-max-listpack-entries": "128",
		"zset-max-listpack-value":   "64",
	}
}
