// Package redistest starts real redis-server processes for tests: each on a
// free loopback port, in a temporary directory, stopped by PID when the test
// ends. Tests need redis-server 7 on PATH; `make test` installs it with
// apt-get when it is missing.
package redistest

import (
	"bufio"
	"context"
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
)

// Server is one redis-server process.
type Server struct {
	Addr string // host:port on 127.0.0.1
	Port int
	Dir  string // working directory (dump files, logs)
	cmd  *exec.Cmd
	args []string
	tb   testing.TB
}

// Start runs a redis-server with persistence off on a free loopback port and
// stops it (SIGKILL by PID) when tb ends. extra are additional config
// arguments such as "--maxmemory", "10mb". It fails tb when the binary is
// missing or the server does not answer PING within 10 s.
func Start(tb testing.TB, extra ...string) *Server {
	tb.Helper()
	bin, err := exec.LookPath("redis-server")
	if err != nil {
		tb.Fatalf("redis-server not on PATH (run `make test`, which installs it): %v", err)
	}
	s := &Server{Dir: tb.TempDir(), tb: tb}
	s.args = append([]string{"--save", "", "--appendonly", "no", "--bind", "127.0.0.1",
		"--protected-mode", "no", "--dir", s.Dir, "--logfile", "redis.log"}, extra...)
	for attempt := 0; ; attempt++ {
		s.Port = FreePort(tb)
		s.Addr = net.JoinHostPort("127.0.0.1", strconv.Itoa(s.Port))
		if err = s.start(bin); err == nil {
			break
		}
		if attempt == 4 {
			tb.Fatalf("redistest: %v", err)
		}
	}
	tb.Cleanup(s.Stop)
	return s
}

func (s *Server) start(bin string) error {
	s.cmd = exec.Command(bin, append([]string{"--port", strconv.Itoa(s.Port)}, s.args...)...)
	s.cmd.Dir = s.Dir
	s.cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := s.cmd.Start(); err != nil {
		return err
	}
	if err := WaitPing(s.Addr, 10*time.Second); err != nil {
		s.Stop()
		return fmt.Errorf("redis-server on %s: %w; log:\n%s", s.Addr, err, s.Log())
	}
	return nil
}

// Stop kills the server by PID (SIGKILL) and reaps it. It is idempotent.
func (s *Server) Stop() {
	if s.cmd == nil || s.cmd.Process == nil {
		return
	}
	_ = s.cmd.Process.Kill()
	_ = s.cmd.Wait()
	s.cmd = nil
}

// Restart kills the server and starts it again on the same port with the
// same configuration; with persistence off it comes back empty. It fails
// the test when the server does not come back within 10 s.
func (s *Server) Restart() {
	s.tb.Helper()
	s.Stop()
	bin, _ := exec.LookPath("redis-server")
	deadline := time.Now().Add(10 * time.Second)
	for {
		err := s.start(bin)
		if err == nil {
			return
		}
		if time.Now().After(deadline) { // the port may linger for a moment
			s.tb.Fatalf("redistest: restart: %v", err)
		}
		time.Sleep(50 * time.Millisecond)
	}
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

// Client returns a rueidis client connected to the server, closed when the
// test ends.
func (s *Server) Client(tb testing.TB) rueidis.Client {
	tb.Helper()
	c, err := rueidis.NewClient(rueidis.ClientOption{InitAddress: []string{s.Addr}, DisableCache: true})
	if err != nil {
		tb.Fatalf("redistest: connect %s: %v", s.Addr, err)
	}
	tb.Cleanup(c.Close)
	return c
}

// Do runs one command on the server with a fresh connection and returns the
// reply's first line, for set-up and assertions that must not share a
// client with the code under test (e.g. SCRIPT FLUSH, DEBUG SLEEP).
func (s *Server) Do(tb testing.TB, args ...string) string {
	tb.Helper()
	c, err := rueidis.NewClient(rueidis.ClientOption{InitAddress: []string{s.Addr}, DisableCache: true, DisableRetry: true})
	if err != nil {
		tb.Fatalf("redistest: connect %s: %v", s.Addr, err)
	}
	defer c.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	res := c.Do(ctx, c.B().Arbitrary(args[0]).Args(args[1:]...).Build())
	if err := res.Error(); err != nil && !rueidis.IsRedisNil(err) {
		return "ERR " + err.Error()
	}
	a, _ := res.ToAny()
	return fmt.Sprint(a)
}

// FreePort returns a TCP port on 127.0.0.1 that was free a moment ago.
func FreePort(tb testing.TB) int {
	tb.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		tb.Fatalf("redistest: free port: %v", err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
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
