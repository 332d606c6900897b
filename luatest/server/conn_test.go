package server_test

import (
	"bufio"
	"fmt"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/luagen/luagen/luatest/server"
)

// rawConn dials srv with a deadline; closed with t.
func rawConn(t *testing.T, srv *server.Server) (net.Conn, *bufio.Reader) {
	c, err := net.Dial("tcp", srv.Addr())
	require.NoError(t, err)
	t.Cleanup(func() { c.Close() })
	require.NoError(t, c.SetDeadline(time.Now().Add(10*time.Second)))
	return c, bufio.NewReader(c)
}

// connections returns how many connections CLIENT LIST shows, asked on c.
func connections(t *testing.T, c net.Conn, r *bufio.Reader) int {
	write(t, c, "CLIENT", "LIST")
	return strings.Count(readRaw(t, r), "id=")
}

// A pipeline of a thousand commands sent in one write gets a thousand
// replies in order.
func TestPipelining(t *testing.T) {
	srv := server.Start(t, nil)
	c, r := rawConn(t, srv)
	var b strings.Builder
	for range 1000 {
		b.WriteString("*2\r\n$4\r\nINCR\r\n$1\r\nn\r\n")
	}
	b.WriteString("PING\r\n") // an inline command, as telnet sends
	_, err := c.Write([]byte(b.String()))
	require.NoError(t, err)
	for i := 1; i <= 1000; i++ {
		require.Equal(t, fmt.Sprintf(":%d\r\n", i), readRaw(t, r))
	}
	assert.Equal(t, "+PONG\r\n", readRaw(t, r))
	v, _ := srv.Get("n")
	assert.Equal(t, "1000", v)
}

// A client that leaves while blocked, inside MULTI, halfway through a
// command or while subscribed leaves nothing behind: no write of its
// MULTI, no connection, no subscription, no goroutine (goleak, in
// TestMain); the others go on.
func TestClientLeavesMidCommand(t *testing.T) {
	srv := server.Start(t, nil)
	ctl, ctlR := rawConn(t, srv)

	blocked, _ := rawConn(t, srv)
	write(t, blocked, "BLPOP", "q", "0")
	require.Eventually(t, func() bool {
		write(t, ctl, "CLIENT", "LIST")
		return strings.Contains(readRaw(t, ctlR), " flags=b ")
	}, 5*time.Second, time.Millisecond)
	blocked.Close()

	multi, multiR := rawConn(t, srv)
	write(t, multi, "WATCH", "w")
	write(t, multi, "MULTI")
	write(t, multi, "SET", "k", "from multi")
	for _, want := range []string{"+OK\r\n", "+OK\r\n", "+QUEUED\r\n"} {
		require.Equal(t, want, readRaw(t, multiR))
	}
	multi.Close()

	half, _ := rawConn(t, srv)
	_, err := half.Write([]byte("*3\r\n$3\r\nSET\r\n$1\r\nh\r\n$10\r\nfive"))
	require.NoError(t, err)
	half.Close()

	sub, subR := rawConn(t, srv)
	write(t, sub, "SUBSCRIBE", "ch")
	readRaw(t, subR)
	sub.Close()

	require.Eventually(t, func() bool { return connections(t, ctl, ctlR) == 1 }, 5*time.Second, time.Millisecond)
	write(t, ctl, "PUBLISH", "ch", "x")
	assert.Equal(t, ":0\r\n", readRaw(t, ctlR), "the subscription left with its client")
	assert.False(t, srv.Exists("k"), "a MULTI never executed wrote nothing")
	assert.False(t, srv.Exists("h"), "half a command did not run")
	write(t, ctl, "RPUSH", "q", "job")
	assert.Equal(t, ":1\r\n", readRaw(t, ctlR), "the element stays: its waiter left")
}

// CLIENT KILL ends another connection, blocked or not; the old form
// answers OK or "No such client".
func TestClientKill(t *testing.T) {
	srv := server.Start(t, nil)
	ctl, ctlR := rawConn(t, srv)
	victim, victimR := rawConn(t, srv)
	write(t, victim, "CLIENT", "ID")
	id := strings.TrimSpace(strings.TrimPrefix(readRaw(t, victimR), ":"))
	write(t, victim, "BLPOP", "q", "0")
	write(t, ctl, "CLIENT", "KILL", "ID", id)
	assert.Equal(t, ":1\r\n", readRaw(t, ctlR))
	_, err := victimR.ReadByte()
	assert.Error(t, err, "the killed connection is closed without a reply")
	write(t, ctl, "CLIENT", "KILL", "127.0.0.1:1")
	assert.Equal(t, "-ERR No such client\r\n", readRaw(t, ctlR))
	write(t, ctl, "CLIENT", "KILL", "ID", id)
	assert.Equal(t, ":0\r\n", readRaw(t, ctlR))
}

// A malformed request is answered with a protocol error and the
// connection is closed, as redis-server does.
func TestProtocolError(t *testing.T) {
	srv := server.Start(t, nil)
	c, r := rawConn(t, srv)
	_, err := c.Write([]byte("*1\r\n+PING\r\n"))
	require.NoError(t, err)
	assert.Equal(t, "-ERR Protocol error: expected '$', got '+'\r\n", readRaw(t, r))
	_, err = r.ReadByte()
	assert.Error(t, err)
}
