package main

import (
	"bufio"
	"bytes"
	"io"
	"os/exec"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// luagen serve answers redis-cli in both protocols, Lua included, and
// stops when interrupted.
func TestServeRedisCli(t *testing.T) {
	pr, pw := io.Pipe()
	stop := make(chan struct{})
	var errb bytes.Buffer
	code := make(chan int)
	go func() {
		code <- run(&env{stdout: pw, stderr: &errb, stop: stop}, []string{"serve", "-addr", "127.0.0.1:0"})
		pw.Close()
	}()
	line, err := bufio.NewReader(pr).ReadString('\n')
	require.NoError(t, err)
	go io.Copy(io.Discard, pr)
	addr := strings.TrimSpace(line[strings.LastIndex(line, " "):])
	require.True(t, strings.HasPrefix(addr, "127.0.0.1:"), line)
	port := strings.TrimPrefix(addr, "127.0.0.1:")

	cli := func(args ...string) string {
		out, err := exec.Command("redis-cli", append([]string{"-p", port}, args...)...).CombinedOutput()
		require.NoError(t, err, "%s", out)
		return string(out)
	}
	assert.Equal(t, "PONG\n", cli("PING"))
	assert.Equal(t, "OK\n", cli("SET", "k", "v"))
	assert.Equal(t, "v\n", cli("GET", "k"))
	assert.Equal(t, "1) \"v\"\n2) (integer) 3\n", cli("--no-raw", "EVAL", "return {redis.call('GET', KEYS[1]), 3}", "1", "k"))
	assert.Equal(t, "1\n", cli("HSET", "h", "a", "1"))
	assert.Equal(t, "1# \"a\" => \"1\"\n", cli("-3", "--no-raw", "EVAL", "redis.setresp(3); return redis.call('HGETALL', KEYS[1])", "1", "h"),
		"a RESP3 map, through redis-cli -3")
	close(stop)
	assert.Equal(t, exitOK, <-code, errb.String())
}
