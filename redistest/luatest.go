package redistest

import (
	"errors"
	"os"

	"github.com/luagen/luagen/luatest"
	"github.com/luagen/luagen/luatest/server"
)

// BackendEnv names the environment variable that chooses what [Start] and
// [NewServer] run: unset, a redis-server process; "luatest", luatest's
// server (package luatest/server) in this process on the same free port,
// with its clock on the wall clock (luatest.WithWallClock), so the
// project's real-server tests run against luatest unchanged:
//
//	LUAGEN_REDISTEST=luatest go test ./runtime/ ./lock/ ./stock/
//
// A server asked for with configuration arguments (extra), and so every
// Cluster and Sentinel node, stays a redis-server process. A
// luatest-backed Server has no process: Signal fails, PID is 0, Log is
// empty, Restart brings back an empty keyspace on the same port. luatest/README.md lists the tests
// that need a process, and why.
const BackendEnv = "LUAGEN_REDISTEST"

// useLuatest reports whether BackendEnv asks for luatest.
func useLuatest() bool { return os.Getenv(BackendEnv) == "luatest" }

// errNoProcess is Signal's error on a luatest-backed Server.
var errNoProcess = errors.New("redistest: luatest's server runs in this process: it takes no signal")

// startLuatest serves a new, empty luatest on s.Addr.
func (s *Server) startLuatest() error {
	r := luatest.New(luatest.WithWallClock())
	lt, err := server.New(r, server.WithAddr(s.Addr))
	if err != nil {
		r.Close()
		return err
	}
	s.lt = lt
	return nil
}

// stopLuatest closes the luatest server and its keyspace.
func (s *Server) stopLuatest() {
	s.lt.Close()
	s.lt.Redis.Close()
	s.lt = nil
}
