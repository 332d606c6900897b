// Package redistest starts real redis-server processes for tests and the
// demo: single servers and 3-primary/3-replica clusters, each node on a free
// loopback port in its own directory, stopped by PID. It needs redis-server
// and redis-cli 7 on PATH; `make test` installs them with apt-get when they
// are missing.
package redistest

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/redis/rueidis"

	"github.com/luagen/luagen/luatest/server"
)

// Server is one redis-server process.
type Server struct {
	Addr string // 127.0.0.1:port
	Port int
	Dir  string // working directory: redis.log, nodes.conf
	cmd  *exec.Cmd
	args []string
	conf string         // a sentinel's configuration file; "" for a redis-server
	lt   *server.Server // luatest's server instead of a process (BackendEnv)
	fake bool           // BackendEnv chose luatest for this server
}

// Start runs a redis-server with persistence off on a free loopback port and
// stops it (SIGKILL by PID) when tb ends. extra are more configuration
// arguments, e.g. "--maxmemory", "10mb". It fails tb when redis-server is
// missing or does not answer PING within 10 s.
func Start(tb testing.TB, extra ...string) *Server {
	tb.Helper()
	s, err := NewServer(tb.TempDir(), extra...)
	if err != nil {
		tb.Fatalf("redistest: %v", err)
	}
	tb.Cleanup(s.Stop)
	return s
}

// NewServer is [Start] without a testing.TB: it runs the server in dir and
// the caller must call Stop.
func NewServer(dir string, extra ...string) (*Server, error) {
	s := &Server{Dir: dir, fake: useLuatest() && len(extra) == 0}
	if !s.fake {
		if _, err := exec.LookPath("redis-server"); err != nil {
			return nil, fmt.Errorf("redis-server 7 is not on PATH: install it (Debian/Ubuntu: apt-get install redis-server; macOS: brew install redis): %w", err)
		}
		s.args = append([]string{"--save", "", "--appendonly", "no", "--bind", "127.0.0.1",
			"--protected-mode", "no", "--dir", dir, "--logfile", "redis.log"}, extra...)
	}
	var err error
	for range 5 { // a free port can be taken between FreePort and bind
		if s.Port, err = freePort(); err != nil {
			return nil, err
		}
		s.Addr = net.JoinHostPort("127.0.0.1", strconv.Itoa(s.Port))
		if err = s.start(); err == nil {
			return s, nil
		}
	}
	return nil, err
}

func (s *Server) start() error {
	if s.fake {
		return s.startLuatest()
	}
	if s.conf != "" {
		s.cmd = exec.Command("redis-server", s.conf, "--sentinel")
	} else {
		s.cmd = exec.Command("redis-server", append([]string{"--port", strconv.Itoa(s.Port)}, s.args...)...)
	}
	s.cmd.Dir = s.Dir
	s.cmd.SysProcAttr = procAttr()
	if err := s.cmd.Start(); err != nil {
		return err
	}
	if err := WaitPing(s.Addr, 10*time.Second); err != nil {
		s.Stop()
		return fmt.Errorf("redis-server on %s: %w; log:\n%s", s.Addr, err, s.Log())
	}
	// The PONG may come from another server that took the port first
	// (this one then failed to bind it and exited): make sure it is ours.
	info, err := do(s.Addr, "INFO", "server")
	if err != nil || !strings.Contains(info, "process_id:"+strconv.Itoa(s.cmd.Process.Pid)+"\r\n") {
		s.Stop()
		return fmt.Errorf("redis-server on %s: the port answers for another process (%v)", s.Addr, err)
	}
	return nil
}

// Stop kills the server by PID (SIGKILL) and reaps it. It is idempotent.
func (s *Server) Stop() {
	if s.lt != nil {
		s.stopLuatest()
		return
	}
	if s.cmd == nil || s.cmd.Process == nil {
		return
	}
	_ = s.cmd.Process.Kill()
	_ = s.cmd.Wait()
	s.cmd = nil
}

// Restart kills the server and starts it again on the same port with the
// same configuration; with persistence off it comes back empty (and, in a
// cluster, with its nodes.conf). It returns an error when the server does
// not answer PING within 10 s.
func (s *Server) Restart() error {
	s.Stop()
	deadline := time.Now().Add(10 * time.Second)
	for {
		err := s.start()
		if err == nil || time.Now().After(deadline) {
			return err
		}
		time.Sleep(50 * time.Millisecond) // the port may linger for a moment
	}
}

// Signal sends sig to the server process (SIGSTOP/SIGCONT to pause it).
func (s *Server) Signal(sig syscall.Signal) error {
	if s.fake {
		return errNoProcess
	}
	if s.cmd == nil || s.cmd.Process == nil {
		return errors.New("redistest: server not running")
	}
	return s.cmd.Process.Signal(sig)
}

// PID returns the server's process id, or 0 when it is stopped.
func (s *Server) PID() int {
	if s.cmd == nil || s.cmd.Process == nil {
		return 0
	}
	return s.cmd.Process.Pid
}

// Log returns the server's log file.
func (s *Server) Log() string {
	b, _ := os.ReadFile(filepath.Join(s.Dir, "redis.log"))
	return string(b)
}

// Client returns a rueidis client for the server with client-side caching
// off, closed when tb ends.
func (s *Server) Client(tb testing.TB) rueidis.Client {
	tb.Helper()
	c, err := rueidis.NewClient(rueidis.ClientOption{InitAddress: []string{s.Addr}, DisableCache: true})
	if err != nil {
		tb.Fatalf("redistest: connect %s: %v", s.Addr, err)
	}
	tb.Cleanup(c.Close)
	return c
}

// Do runs one command on the server over a fresh single-node connection and
// returns the reply formatted with fmt.Sprint (arrays as [a b]), or "ERR "
// and the message for an error reply. It is for set-up and assertions that
// must not share a client with the code under test (SCRIPT FLUSH, INFO).
func (s *Server) Do(tb testing.TB, args ...string) string {
	tb.Helper()
	out, err := do(s.Addr, args...)
	if err != nil {
		tb.Fatalf("redistest: %s on %s: %v", args[0], s.Addr, err)
	}
	return out
}

// CommandCalls returns how many times the server has run command since it
// started or since the last CONFIG RESETSTAT: the calls= field of its
// cmdstat_<command> line in INFO commandstats (0 when there is none).
// command is lower case, subcommands joined with "|" ("evalsha",
// "function|load").
func (s *Server) CommandCalls(tb testing.TB, command string) int {
	tb.Helper()
	calls, _ := s.CommandStat(tb, command)
	return calls
}

// CommandStat returns the calls= and usec= fields of command's
// cmdstat_<command> line in INFO commandstats: how many times the server
// has run it and the server's own time for those runs in µs, since it
// started or since the last CONFIG RESETSTAT (0, 0 when there is none).
// command is spelled as for CommandCalls.
func (s *Server) CommandStat(tb testing.TB, command string) (calls int, usec int64) {
	tb.Helper()
	for _, line := range strings.Split(s.Do(tb, "INFO", "commandstats"), "\n") {
		rest, ok := strings.CutPrefix(strings.TrimSpace(line), "cmdstat_"+command+":calls=")
		if !ok {
			continue
		}
		c, rest, _ := strings.Cut(rest, ",usec=")
		u, _, _ := strings.Cut(rest, ",")
		var err error
		if calls, err = strconv.Atoi(c); err == nil {
			usec, err = strconv.ParseInt(u, 10, 64)
		}
		if err != nil {
			tb.Fatalf("redistest: INFO commandstats on %s: %s: %v", s.Addr, line, err)
		}
		return calls, usec
	}
	return 0, 0
}

func do(addr string, args ...string) (string, error) {
	res, err := doResult(addr, args...)
	if err != nil {
		return "", err
	}
	if err := res.Error(); err != nil {
		if rueidis.IsRedisNil(err) {
			return "<nil>", nil
		}
		if re, ok := rueidis.IsRedisErr(err); ok {
			return "ERR " + re.Error(), nil
		}
		return "", err
	}
	msg, _ := res.ToMessage()
	if s, err := msg.ToString(); err == nil && !msg.IsString() && len(s) >= 4 && s[3] == ':' {
		// A RESP3 verbatim string (INFO, CLUSTER NODES, CLIENT LIST):
		// rueidis keeps its "txt:" format prefix, which would otherwise
		// glue itself to the first word of the reply.
		return s[4:], nil
	}
	a, _ := msg.ToAny()
	return fmt.Sprint(a), nil
}

// doResult runs one command on addr over a fresh single-node connection.
func doResult(addr string, args ...string) (rueidis.RedisResult, error) {
	c, err := rueidis.NewClient(rueidis.ClientOption{InitAddress: []string{addr}, DisableCache: true,
		DisableRetry: true, ForceSingleClient: true})
	if err != nil {
		return rueidis.RedisResult{}, err
	}
	defer c.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	return c.Do(ctx, c.B().Arbitrary(args[0]).Args(args[1:]...).Build()), nil
}

// FreePort returns a TCP port on 127.0.0.1 that was free a moment ago.
func FreePort(tb testing.TB) int {
	tb.Helper()
	p, err := freePort()
	if err != nil {
		tb.Fatalf("redistest: %v", err)
	}
	return p
}

func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, fmt.Errorf("free port: %w", err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// WaitPing dials addr until it answers PING with +PONG or timeout passes.
func WaitPing(addr string, timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	var last error
	for time.Now().Before(deadline) {
		conn, err := net.DialTimeout("tcp", addr, time.Second)
		if err == nil {
			_ = conn.SetDeadline(time.Now().Add(time.Second))
			_, err = conn.Write([]byte("PING\r\n"))
			if err == nil {
				var line string
				line, err = bufio.NewReader(conn).ReadString('\n')
				if err == nil && !strings.HasPrefix(line, "+PONG") {
					err = fmt.Errorf("PING answered %q", strings.TrimSpace(line))
				}
			}
			conn.Close()
			if err == nil {
				return nil
			}
		}
		last = err
		time.Sleep(20 * time.Millisecond)
	}
	return fmt.Errorf("no PONG within %v: %v", timeout, last)
}
