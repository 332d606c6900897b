package redistest

import (
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// RESP3 sends INFO and CLUSTER NODES as verbatim strings; Do must not
// return their "txt:" format prefix (it once glued itself to the first
// node ID of CLUSTER NODES, so the first primary never had a replica).
func TestDoStripsVerbatimPrefix(t *testing.T) {
	s := Start(t)
	assert.True(t, strings.HasPrefix(s.Do(t, "INFO", "server"), "# Server"), s.Do(t, "INFO", "server"))
	assert.Equal(t, "OK", s.Do(t, "SET", "k", "txt:v"))
	assert.Equal(t, "txt:v", s.Do(t, "GET", "k"), "a plain string that looks like one is kept")
	assert.Equal(t, "<nil>", s.Do(t, "GET", "nokey"))
	assert.True(t, strings.HasPrefix(s.Do(t, "NOSUCHCMD"), "ERR unknown command"))
}

// Extra arguments override the defaults, so a test can turn the AOF on and
// a restart then keeps every acknowledged write.
func TestRestartWithAOFKeepsData(t *testing.T) {
	s := Start(t, "--appendonly", "yes", "--appendfsync", "always")
	s.Do(t, "SET", "k", "1")
	pid := s.PID()
	require.NoError(t, s.Restart())
	assert.NotEqual(t, pid, s.PID())
	assert.Equal(t, "1", s.Do(t, "GET", "k"))

	plain := Start(t)
	plain.Do(t, "SET", "k", "1")
	require.NoError(t, plain.Restart())
	assert.Equal(t, "<nil>", plain.Do(t, "GET", "k"), "persistence is off by default")
}

// CommandCalls reads one command's counter, subcommands included, and
// tells "eval" from "evalsha"; CommandStat reads its time too.
func TestCommandCalls(t *testing.T) {
	s := Start(t)
	s.Do(t, "CONFIG", "RESETSTAT")
	assert.Equal(t, 0, s.CommandCalls(t, "eval"))
	s.Do(t, "EVAL", "return 1", "0")
	s.Do(t, "EVAL", "return 1", "0")
	s.Do(t, "FUNCTION", "LIST")
	assert.Equal(t, 2, s.CommandCalls(t, "eval"))
	assert.Equal(t, 0, s.CommandCalls(t, "evalsha"))
	assert.Equal(t, 1, s.CommandCalls(t, "function|list"))
	calls, usec := s.CommandStat(t, "eval")
	assert.Equal(t, 2, calls)
	assert.Contains(t, s.Do(t, "INFO", "commandstats"), "cmdstat_eval:calls=2,usec="+strconv.FormatInt(usec, 10)+",",
		"usec is the server's own field")
}
