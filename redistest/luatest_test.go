package redistest

import (
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// With BackendEnv=luatest, Start serves luatest in this process: it
// answers as a server, counts commands, has no process to signal, and a
// restart brings it back empty on the same port; a server given
// configuration arguments is still a redis-server process.
func TestLuatestBackend(t *testing.T) {
	t.Setenv(BackendEnv, "luatest")
	s := Start(t)
	assert.Contains(t, s.Do(t, "INFO", "server"), "os:luatest")
	assert.Equal(t, "OK", s.Do(t, "SET", "k", "v"))
	assert.Equal(t, 1, s.CommandCalls(t, "set"))
	assert.Equal(t, 0, s.PID())
	assert.ErrorIs(t, s.Signal(syscall.SIGSTOP), errNoProcess)
	addr := s.Addr
	require.NoError(t, s.Restart())
	assert.Equal(t, addr, s.Addr)
	assert.Equal(t, "<nil>", s.Do(t, "GET", "k"), "a restart without persistence comes back empty")

	real := Start(t, "--maxmemory", "10mb")
	assert.NotZero(t, real.PID())
	assert.NotContains(t, real.Do(t, "INFO", "server"), "os:luatest")
}
