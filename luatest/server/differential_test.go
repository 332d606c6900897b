package server_test

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/luagen/luagen/luatest/server"
	"github.com/luagen/luagen/redistest"
)

// step is one thing the wire differential does on one of its two
// connections: send a command (args) and read replies, read replies
// only (args nil: pushes, a blocked command's answer), or wait until a
// connection is blocked (wait).
type step struct {
	conn  int
	args  []string
	read  int  // replies to read after sending
	wait  bool // wait for a connection blocked in a command (CLIENT LIST flags=b)
	proto int  // 0: both protocols; 2 or 3: only that one
}

func do(conn int, args ...string) step     { return step{conn: conn, args: args, read: 1} }
func send(conn int, args ...string) step   { return step{conn: conn, args: args} }
func doN(conn, n int, args ...string) step { return step{conn: conn, args: args, read: n} }
func recv(conn, n int) step                { return step{conn: conn, read: n} }
func only(proto int, s step) step          { s.proto = proto; return s }

var waitBlockedStep = step{wait: true}

// wireSequence is what the differential sends, in order, on a fresh
// server. Nothing in it depends on the time, on a client's id or on the
// order of the server's hash tables, which is random per process (PUBSUB
// CHANNELS lists one channel; UNSUBSCRIBE without arguments drops one).
var wireSequence = []step{
	// Connection commands.
	do(0, "PING"), do(0, "PING", "hi"), do(0, "ECHO", "x\r\ny"), do(0, "SELECT", "1"), do(0, "SET", "db1", "v"),
	do(0, "SELECT", "16"), do(0, "SELECT", "x"), do(0, "DBSIZE"), do(0, "SELECT", "0"), do(0, "DBSIZE"),
	do(0, "AUTH", "pw"), do(0, "AUTH", "default", "any"), do(0, "HELLO", "4"), do(0, "HELLO", "x"),
	do(0, "CLIENT", "GETNAME"), do(0, "CLIENT", "SETNAME", "a b"), do(0, "CLIENT", "SETNAME", "app"),
	do(0, "CLIENT", "GETNAME"), do(0, "CLIENT", "NOSUCH"), do(0, "CLIENT", "SETINFO", "lib-name", "x"),
	do(0, "CLIENT", "TRACKING", "off"), do(0, "CONFIG", "GET", "maxmemory-policy"),
	do(0, "CONFIG", "SET", "nosuch", "1"), do(0, "WAIT", "0", "0"), do(0, "WAIT", "x", "0"), do(0, "WAIT", "0", "-1"),
	// Errors of the command table and of commands.
	do(0, "NOSUCH", "a"), do(0, "GET"), do(0, "GET", "a", "b"), do(0, "SET", "k", "v", "XX", "NX"),
	do(0, "LPUSH", "str", "x"), do(0, "INCR", "str"),
	// Strings and numbers.
	do(0, "SET", "n", "10"), do(0, "INCRBYFLOAT", "n", "0.1"), do(0, "GET", "n"), do(0, "MGET", "n", "none"),
	do(0, "GET", "none"), do(0, "APPEND", "s", "abc"), do(0, "GETRANGE", "s", "1", "-1"), do(0, "STRLEN", "s"),
	do(0, "SETNX", "s", "x"), do(0, "EXISTS", "s", "none"), do(0, "TYPE", "s"), do(0, "OBJECT", "ENCODING", "n"),
	// Lists: nulls of both kinds in RESP2.
	do(0, "RPUSH", "l", "a", "b", "c"), do(0, "LRANGE", "l", "0", "-1"), do(0, "LPOP", "l", "2"),
	do(0, "LPOP", "none"), do(0, "LPOP", "none", "2"), do(0, "LPOS", "l", "c"), do(0, "LMPOP", "1", "none", "LEFT"),
	// Hashes, sets, sorted sets: maps, sets and doubles in RESP3.
	do(0, "HSET", "h", "f", "1", "g", "2.5"), do(0, "HGETALL", "h"), do(0, "HINCRBYFLOAT", "h", "g", "1"),
	do(0, "HMGET", "h", "f", "none"), do(0, "HRANDFIELD", "none", "2"),
	do(0, "SADD", "set", "3", "1", "2"), do(0, "SMEMBERS", "set"), do(0, "SISMEMBER", "set", "2"), do(0, "SMISMEMBER", "set", "2", "9"),
	do(0, "ZADD", "z", "1.5", "a", "2", "b", "inf", "c"), do(0, "ZRANGE", "z", "0", "-1", "WITHSCORES"),
	do(0, "ZSCORE", "z", "a"), do(0, "ZSCORE", "z", "none"), do(0, "ZPOPMIN", "z"), do(0, "ZRANK", "z", "c"),
	do(0, "ZRANDMEMBER", "none"), do(0, "ZMPOP", "1", "none", "MIN"), do(0, "ZINCRBY", "z", "1", "b"),
	// Streams.
	do(0, "XADD", "st", "1-1", "f", "v"), do(0, "XRANGE", "st", "-", "+"), do(0, "XREAD", "STREAMS", "st", "0"),
	do(0, "XREAD", "STREAMS", "st", "$"), do(0, "XINFO", "STREAM", "none"),
	// Lua, in both script protocols.
	do(0, "EVAL", "return {1, 'two', 3.9, false, {err='E'}, {ok='S'}}", "0"),
	do(0, "EVAL", "return redis.call('HGETALL', KEYS[1])", "1", "h"),
	do(0, "EVAL", "redis.setresp(3); return redis.call('HGETALL', KEYS[1])", "1", "h"),
	do(0, "EVAL", "redis.setresp(3); return {double=1.5}", "0"),
	do(0, "EVAL", "redis.setresp(3); return {big_number='123'}", "0"),
	do(0, "EVAL", "redis.setresp(3); return redis.call('ZSCORE', KEYS[1], 'b')", "1", "z"),
	do(0, "EVAL", "return true", "0"), do(0, "EVAL", "return nil", "0"),
	do(0, "EVAL", "return redis.call('LPOP', KEYS[1], 2)", "1", "none"),
	do(0, "EVAL", "return redis.error_reply('MY error')", "0"), do(0, "EVAL", "return redis.call('NOSUCH')", "0"),
	do(0, "EVAL", "error('boom')", "0"), do(0, "EVALSHA", "0000000000000000000000000000000000000000", "0"),
	do(0, "EVAL", "return redis.call('BLPOP', KEYS[1], 0)", "1", "none"),
	do(0, "EVAL", "return redis.call('BLMPOP', 0, 1, KEYS[1], 'LEFT')", "1", "none"),
	// Transactions.
	do(0, "MULTI"), do(0, "INCR", "cnt"), do(0, "LPUSH", "cnt", "x"), do(0, "BLPOP", "none", "0"),
	do(0, "BLMOVE", "none", "x", "LEFT", "LEFT", "0"), do(0, "PING"), do(0, "EXEC"),
	do(0, "MULTI"), do(0, "NOSUCH"), do(0, "GET"), do(0, "EXEC"),
	do(0, "MULTI"), do(0, "MULTI"), do(0, "WATCH", "x"), do(0, "DISCARD"), do(0, "EXEC"), do(0, "DISCARD"),
	do(0, "WATCH", "w"), do(1, "SET", "w", "1"), do(0, "MULTI"), do(0, "GET", "w"), do(0, "EXEC"),
	do(0, "WATCH", "w"), do(0, "UNWATCH"), do(0, "MULTI"), do(0, "GET", "w"), do(0, "EXEC"),
	// Blocking commands: timeouts, then answers to a blocked client.
	do(0, "BLPOP", "none", "0.01"), do(0, "BRPOP", "none", "x"), do(0, "BRPOP", "none", "-1"),
	do(0, "BLMOVE", "none", "d", "LEFT", "RIGHT", "0.01"), do(0, "BRPOPLPUSH", "none", "d", "0.01"),
	do(0, "BZPOPMIN", "none", "0.01"), do(0, "BZPOPMAX", "str", "0.01"), do(0, "BLMPOP", "0.01", "1", "none", "LEFT"),
	do(0, "XREAD", "BLOCK", "10", "STREAMS", "st", "$"), do(0, "BLPOP", "l", "0"),
	send(0, "BLPOP", "q1", "q2", "0"), waitBlockedStep, do(1, "RPUSH", "q2", "job"), recv(0, 1),
	send(0, "BZPOPMAX", "zq", "0"), waitBlockedStep, do(1, "ZADD", "zq", "1", "a", "2", "b"), recv(0, 1),
	send(0, "BLMOVE", "mq", "dst", "RIGHT", "LEFT", "0"), waitBlockedStep, do(1, "LPUSH", "mq", "m"), recv(0, 1),
	send(0, "XREAD", "BLOCK", "0", "STREAMS", "st", "$"), waitBlockedStep, do(1, "XADD", "st", "2-1", "f", "w"), recv(0, 1),
	do(0, "XGROUP", "CREATE", "st", "g", "$"), do(0, "XREADGROUP", "GROUP", "g", "c", "BLOCK", "10", "STREAMS", "st", ">"),
	send(0, "XREADGROUP", "GROUP", "g", "c", "BLOCK", "0", "COUNT", "1", "STREAMS", "st", ">"), waitBlockedStep,
	do(1, "XADD", "st", "3-1", "f", "x"), recv(0, 1), do(0, "XPENDING", "st", "g"),
	// Client-side caching (RESP3): an invalidation push after another
	// client's write, and after a flush.
	only(3, do(0, "CLIENT", "CACHING", "YES")), only(3, do(0, "CLIENT", "TRACKING", "ON", "OPTIN", "OPTOUT")),
	only(3, do(0, "CLIENT", "TRACKING", "ON")), only(3, do(0, "CLIENT", "CACHING", "YES")),
	only(3, do(0, "GET", "tk")), only(3, do(1, "SET", "tk", "x")), only(3, recv(0, 1)),
	only(3, do(0, "MGET", "tk", "tk2")), only(3, do(1, "FLUSHDB")), only(3, recv(0, 1)),
	only(3, do(0, "CLIENT", "TRACKING", "OFF")), only(3, do(0, "GET", "tk")), only(3, do(1, "SET", "tk", "y")),
	// Pub/sub: confirmations and messages are pushes in RESP3.
	doN(0, 2, "SUBSCRIBE", "ch", "other"), do(1, "PUBLISH", "ch", "hello"), recv(0, 1),
	do(1, "EVAL", "return redis.call('PUBLISH', 'ch', 'from lua')", "0"), recv(0, 1),
	do(0, "PSUBSCRIBE", "c*"), do(1, "PUBLISH", "ch", "both"), recv(0, 2),
	do(1, "PUBSUB", "NUMSUB", "ch", "none"), do(1, "PUBSUB", "CHANNELS", "c*"), do(1, "PUBSUB", "NUMPAT"),
	do(0, "PING"), do(0, "PING", "x"), only(2, do(0, "GET", "k")), only(3, do(0, "GET", "n")),
	do(0, "UNSUBSCRIBE", "ch"), do(0, "PUNSUBSCRIBE"), do(0, "UNSUBSCRIBE"), do(0, "UNSUBSCRIBE"),
	doN(0, 2, "PSUBSCRIBE", "a*", "b*"), doN(0, 2, "PUNSUBSCRIBE", "b*", "x"), doN(0, 2, "SUBSCRIBE", "a", "a"), do(0, "RESET"),
	do(0, "SSUBSCRIBE", "sh"), do(1, "SPUBLISH", "sh", "s"), recv(0, 1), do(0, "SUNSUBSCRIBE"),
	// The end of a connection's state.
	do(0, "RESET"), do(0, "CLIENT", "GETNAME"), do(0, "QUIT"),
}

// TestWireDifferential sends wireSequence as raw RESP to redis-server
// 7.0.15 and to luatest's server, in RESP2 and in RESP3 (HELLO 3 first,
// its reply left out: it carries the connection id), and requires every
// reply byte for byte the same: errors, nulls of both RESP2 kinds, maps,
// sets, doubles, pushes, blocking timeouts and blocked clients' answers.
func TestWireDifferential(t *testing.T) {
	real := redistest.Start(t)
	for _, proto := range []int{2, 3} {
		t.Run("RESP"+strconv.Itoa(proto), func(t *testing.T) {
			lt := server.Start(t, nil)
			want := transcript(t, real.Addr, proto)
			got := transcript(t, lt.Addr(), proto)
			require.Equal(t, len(want), len(got))
			for i := range want {
				require.Equal(t, want[i], got[i], "step %d", i)
			}
			// The sequence reaches what it is meant to compare.
			all := strings.Join(got, "\n")
			if proto == 2 {
				require.Contains(t, all, `: "*-1\r\n"`)
				require.Contains(t, all, `: "$-1\r\n"`)
			} else {
				require.Contains(t, all, `: ">3\r\n$7\r\nmessage`)
				require.Contains(t, all, `: "%2\r\n`)
				require.Contains(t, all, `: ",1.5\r\n"`)
			}
		})
	}
}

// transcript runs wireSequence on addr after FLUSHALL and returns one
// line per reply: the step, the command, and the reply's bytes quoted.
func transcript(t *testing.T, addr string, proto int) []string {
	t.Helper()
	dial := func() (net.Conn, *bufio.Reader) {
		c, err := net.Dial("tcp", addr)
		require.NoError(t, err)
		t.Cleanup(func() { c.Close() })
		require.NoError(t, c.SetDeadline(time.Now().Add(10*time.Second)))
		return c, bufio.NewReader(c)
	}
	ctl, ctlR := dial()
	write(t, ctl, "FLUSHALL")
	readRaw(t, ctlR)
	var conns [2]net.Conn
	var readers [2]*bufio.Reader
	for i := range conns {
		conns[i], readers[i] = dial()
		if proto == 3 {
			write(t, conns[i], "HELLO", "3")
			readRaw(t, readers[i])
		}
	}
	var out []string
	for i, s := range wireSequence {
		if s.proto != 0 && s.proto != proto {
			continue
		}
		if s.wait {
			require.Eventually(t, func() bool {
				write(t, ctl, "CLIENT", "LIST")
				return strings.Contains(readRaw(t, ctlR), " flags=b ")
			}, 5*time.Second, time.Millisecond, "step %d", i)
			continue
		}
		if s.args != nil {
			write(t, conns[s.conn], s.args...)
		}
		for range s.read {
			out = append(out, fmt.Sprintf("%d %q: %q", i, s.args, readRaw(t, readers[s.conn])))
		}
	}
	return out
}

// write sends args as a RESP multibulk.
func write(t *testing.T, c net.Conn, args ...string) {
	var b strings.Builder
	fmt.Fprintf(&b, "*%d\r\n", len(args))
	for _, a := range args {
		fmt.Fprintf(&b, "$%d\r\n%s\r\n", len(a), a)
	}
	_, err := c.Write([]byte(b.String()))
	require.NoError(t, err)
}

// readRaw reads one reply and returns its bytes as sent.
func readRaw(t *testing.T, r *bufio.Reader) string {
	t.Helper()
	var b strings.Builder
	var read func()
	read = func() {
		line, err := r.ReadString('\n')
		require.NoError(t, err, "after %q", b.String())
		b.WriteString(line)
		body := strings.TrimSuffix(line[1:], "\r\n")
		switch line[0] {
		case '$', '=', '!':
			n, err := strconv.Atoi(body)
			require.NoError(t, err)
			if n >= 0 {
				buf := make([]byte, n+2)
				_, err := io.ReadFull(r, buf)
				require.NoError(t, err)
				b.Write(buf)
			}
		case '*', '~', '>', '%', '|':
			n, err := strconv.Atoi(body)
			require.NoError(t, err)
			if line[0] == '%' || line[0] == '|' {
				n *= 2
			}
			for range n {
				read()
			}
		}
	}
	read()
	return b.String()
}
