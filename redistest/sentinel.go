package redistest

import (
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis/rueidis"
)

// SentinelMaster is the name under which a [Sentinel]'s sentinels monitor
// its primary (SENTINEL MONITOR's master-name).
const SentinelMaster = "mymaster"

// Sentinel is a local Sentinel deployment: one primary, its replicas, and
// three sentinels (quorum 2) monitoring the primary as SentinelMaster,
// each a [Server] on a free loopback port.
type Sentinel struct {
	Primary   *Server // the primary at start; see Master for the current one
	Replicas  []*Server
	Sentinels []*Server
}

// StartSentinel starts a primary, replicas replicas of it and three
// sentinels, waits until every replica's link is up and every sentinel
// knows the replicas and the other sentinels, and stops all of them by
// PID when tb ends. The sentinels judge a node down after 1 s without an
// answer (down-after-milliseconds), so a killed primary is replaced
// within a few seconds.
func StartSentinel(tb testing.TB, replicas int) *Sentinel {
	tb.Helper()
	s, err := NewSentinel(tb.TempDir(), replicas)
	if err != nil {
		tb.Fatalf("redistest: %v", err)
	}
	tb.Cleanup(s.Stop)
	return s
}

// NewSentinel is [StartSentinel] without a testing.TB: the servers live
// in subdirectories of dir and the caller must call Stop.
func NewSentinel(dir string, replicas int) (*Sentinel, error) {
	s := &Sentinel{}
	sub := func(name string) (string, error) {
		d := filepath.Join(dir, name)
		return d, os.MkdirAll(d, 0o755)
	}
	d, err := sub("primary")
	if err != nil {
		return nil, err
	}
	// A replica PINGs its primary every second, so an idle primary's
	// replicas still report a moving offset.
	if s.Primary, err = NewServer(d, "--repl-ping-replica-period", "1"); err != nil {
		return nil, err
	}
	for i := range replicas {
		if d, err = sub("replica" + strconv.Itoa(i)); err == nil {
			var r *Server
			r, err = NewServer(d, "--replicaof", "127.0.0.1", strconv.Itoa(s.Primary.Port), "--repl-ping-replica-period", "1")
			if r != nil {
				s.Replicas = append(s.Replicas, r)
			}
		}
		if err != nil {
			s.Stop()
			return nil, err
		}
	}
	for i := range 3 {
		if d, err = sub("sentinel" + strconv.Itoa(i)); err == nil {
			var sn *Server
			sn, err = startSentinel(d, s.Primary.Port)
			if sn != nil {
				s.Sentinels = append(s.Sentinels, sn)
			}
		}
		if err != nil {
			s.Stop()
			return nil, err
		}
	}
	if err := s.waitReady(30 * time.Second); err != nil {
		s.Stop()
		return nil, err
	}
	return s, nil
}

// startSentinel runs `redis-server sentinel.conf --sentinel` in dir on a
// free port, monitoring the primary on primaryPort.
func startSentinel(dir string, primaryPort int) (*Server, error) {
	s := &Server{Dir: dir}
	var err error
	for range 5 { // a free port can be taken between freePort and bind
		if s.Port, err = freePort(); err != nil {
			return nil, err
		}
		s.Addr = net.JoinHostPort("127.0.0.1", strconv.Itoa(s.Port))
		conf := filepath.Join(dir, "sentinel.conf")
		text := fmt.Sprintf("port %d\nbind 127.0.0.1\nprotected-mode no\ndir %s\nlogfile redis.log\n"+
			"sentinel monitor %s 127.0.0.1 %d 2\n"+
			"sentinel down-after-milliseconds %[3]s 1000\n"+
			"sentinel failover-timeout %[3]s 2000\n"+
			"sentinel parallel-syncs %[3]s 1\n", s.Port, dir, SentinelMaster, primaryPort)
		// The sentinel rewrites its configuration file, so each gets its own.
		if err = os.WriteFile(conf, []byte(text), 0o644); err != nil {
			return nil, err
		}
		s.conf = conf
		if err = s.start(); err == nil {
			return s, nil
		}
	}
	return nil, err
}

// waitReady waits until every replica's link is up and every sentinel
// sees every replica and the two other sentinels.
func (s *Sentinel) waitReady(timeout time.Duration) error {
	if err := poll(timeout, 100*time.Millisecond, s.ready); err != nil {
		return fmt.Errorf("sentinel deployment not ready after %v: %w", timeout, err)
	}
	return nil
}

func (s *Sentinel) ready() error {
	for _, r := range s.Replicas {
		if out, err := do(r.Addr, "INFO", "replication"); err != nil || !strings.Contains(out, "master_link_status:up") {
			return fmt.Errorf("replica %s not in sync (%v)", r.Addr, err)
		}
	}
	return s.sentinelsReady()
}

// sentinelsReady reports whether every sentinel knows as many replicas
// as the deployment has, and the two other sentinels.
func (s *Sentinel) sentinelsReady() error {
	for _, sn := range s.Sentinels {
		res, err := doResult(sn.Addr, "SENTINEL", "MASTER", SentinelMaster)
		if err != nil {
			return err
		}
		f, err := res.AsStrMap()
		if err != nil {
			return fmt.Errorf("sentinel %s: SENTINEL MASTER: %w", sn.Addr, err)
		}
		if f["num-slaves"] != strconv.Itoa(len(s.Replicas)) || f["num-other-sentinels"] != "2" {
			return fmt.Errorf("sentinel %s knows %s replicas and %s other sentinels", sn.Addr, f["num-slaves"], f["num-other-sentinels"])
		}
	}
	return nil
}

// Stop kills every server and sentinel by PID.
func (s *Sentinel) Stop() {
	for _, n := range s.Sentinels {
		n.Stop()
	}
	for _, n := range s.Replicas {
		n.Stop()
	}
	if s.Primary != nil {
		s.Primary.Stop()
	}
}

// nodes returns the deployment's Redis servers, the first primary first.
func (s *Sentinel) nodes() []*Server { return append([]*Server{s.Primary}, s.Replicas...) }

// Addrs returns the sentinels' addresses: a client's seed list.
func (s *Sentinel) Addrs() []string {
	out := make([]string, len(s.Sentinels))
	for i, n := range s.Sentinels {
		out[i] = n.Addr
	}
	return out
}

// Client returns a rueidis Sentinel client for SentinelMaster with
// client-side caching off, closed when tb ends.
func (s *Sentinel) Client(tb testing.TB) rueidis.Client {
	tb.Helper()
	c, err := rueidis.NewClient(rueidis.ClientOption{InitAddress: s.Addrs(), DisableCache: true,
		Sentinel: rueidis.SentinelOption{MasterSet: SentinelMaster}})
	if err != nil {
		tb.Fatalf("redistest: connect sentinels: %v", err)
	}
	tb.Cleanup(c.Close)
	return c
}

// Master returns the server every running sentinel names as the primary
// (SENTINEL GET-MASTER-ADDR-BY-NAME), or an error when they disagree or
// name none of the deployment's servers.
func (s *Sentinel) Master() (*Server, error) {
	var addr string
	for _, sn := range s.Sentinels {
		if sn.PID() == 0 {
			continue
		}
		out, err := do(sn.Addr, "SENTINEL", "GET-MASTER-ADDR-BY-NAME", SentinelMaster)
		if err != nil {
			return nil, err
		}
		f := strings.Fields(strings.Trim(out, "[]"))
		if len(f) != 2 {
			return nil, fmt.Errorf("sentinel %s answered %q", sn.Addr, out)
		}
		a := net.JoinHostPort(f[0], f[1])
		if addr != "" && a != addr {
			return nil, fmt.Errorf("sentinels disagree: %s and %s", addr, a)
		}
		addr = a
	}
	for _, n := range s.nodes() {
		if n.Addr == addr {
			return n, nil
		}
	}
	return nil, fmt.Errorf("sentinels name %q, not a server of this deployment", addr)
}

// WaitFailover waits until every running sentinel names a primary other
// than old and that server answers INFO replication with role:master, and
// returns it. Kill old first (Stop, or SIGSTOP for longer than 1 s) or
// ask for a failover with SENTINEL FAILOVER.
func (s *Sentinel) WaitFailover(old *Server, timeout time.Duration) (*Server, error) {
	var m *Server
	err := poll(timeout, 100*time.Millisecond, func() (err error) {
		if m, err = s.Master(); err != nil {
			return err
		}
		if m == old {
			return errors.New("the sentinels still name the old primary")
		}
		if out, err := do(m.Addr, "INFO", "replication"); err != nil || !strings.Contains(out, "role:master") {
			return fmt.Errorf("%s is not a primary yet (%v)", m.Addr, err)
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("no failover within %v: %w", timeout, err)
	}
	return m, nil
}

// WaitReplica waits until r is a replica of the primary the sentinels
// name, with its link up, and every sentinel counts it (as after a
// restart of an old primary, which the sentinels turn into a replica of
// the new one). Should the sentinels meanwhile have promoted r again (a
// second failover: on a loaded machine the new primary can miss
// down-after-milliseconds), it waits until every other node replicates r
// instead: either way the deployment is whole again.
func (s *Sentinel) WaitReplica(r *Server, timeout time.Duration) error {
	err := poll(timeout, 100*time.Millisecond, func() error {
		m, err := s.Master()
		if err != nil {
			return err
		}
		for _, n := range s.nodes() {
			if n == m || (m != r && n != r) {
				continue
			}
			out, err := do(n.Addr, "INFO", "replication")
			if err != nil {
				return err
			}
			if !strings.Contains(out, "master_port:"+strconv.Itoa(m.Port)+"\r\n") || !strings.Contains(out, "master_link_status:up") {
				return fmt.Errorf("%s is not yet a replica of %s in sync", n.Addr, m.Addr)
			}
		}
		return s.sentinelsReady()
	})
	if err != nil {
		return fmt.Errorf("not a replica within %v: %w", timeout, err)
	}
	return nil
}
