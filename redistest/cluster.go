package redistest

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redis/rueidis"
)

// Cluster is a local Redis Cluster: 3 primaries and 3 replicas, each a
// [Server] on a free loopback port.
type Cluster struct {
	Nodes []*Server
}

// StartCluster starts a 3-primary/3-replica cluster, joined with
// `redis-cli --cluster create … --cluster-replicas 1 --cluster-yes`, waits
// for cluster_state:ok on every node and for every replica to be in sync,
// and stops all nodes by PID when tb ends.
func StartCluster(tb testing.TB) *Cluster {
	tb.Helper()
	c, err := NewCluster(tb.TempDir())
	if err != nil {
		tb.Fatalf("redistest: %v", err)
	}
	tb.Cleanup(c.Stop)
	return c
}

// NewCluster is [StartCluster] without a testing.TB: nodes live in
// subdirectories of dir and the caller must call Stop.
func NewCluster(dir string) (*Cluster, error) {
	c := &Cluster{}
	for i := range 6 {
		d := filepath.Join(dir, "node"+strconv.Itoa(i))
		if err := os.MkdirAll(d, 0o755); err != nil {
			return nil, err
		}
		s, err := NewServer(d, "--cluster-enabled", "yes", "--cluster-config-file", "nodes.conf",
			// A short node timeout makes failure detection and failover fast
			// enough for tests; 2 s still tolerates a loaded CI machine.
			"--cluster-node-timeout", "2000",
			// Redis 7.0 leaves a replica out of CLUSTER SLOTS while its
			// replication offset is 0 (cluster.c, isReplicaAvailable), and
			// on an idle primary only the replication PING moves it, every
			// 10 s by default. Clients (rueidis) learn replicas from CLUSTER
			// SLOTS, so a fresh test cluster would hide them that long.
			"--repl-ping-replica-period", "1")
		if err != nil {
			c.Stop()
			return nil, err
		}
		c.Nodes = append(c.Nodes, s)
	}
	args := append([]string{"--cluster", "create"}, c.Addrs()...)
	args = append(args, "--cluster-replicas", "1", "--cluster-yes")
	if out, err := exec.Command("redis-cli", args...).CombinedOutput(); err != nil {
		c.Stop()
		return nil, fmt.Errorf("redis-cli --cluster create: %v\n%s", err, out)
	}
	if err := c.WaitHealthy(30 * time.Second); err != nil {
		c.Stop()
		return nil, err
	}
	return c, nil
}

// Stop kills every node by PID.
func (c *Cluster) Stop() {
	for _, n := range c.Nodes {
		n.Stop()
	}
}

// Addrs returns every node's address, usable as a seed list.
func (c *Cluster) Addrs() []string {
	out := make([]string, len(c.Nodes))
	for i, n := range c.Nodes {
		out[i] = n.Addr
	}
	return out
}

// Client returns a rueidis cluster client seeded with every node, with
// client-side caching off, closed when tb ends.
func (c *Cluster) Client(tb testing.TB) rueidis.Client {
	tb.Helper()
	cl, err := rueidis.NewClient(rueidis.ClientOption{InitAddress: c.Addrs(), DisableCache: true})
	if err != nil {
		tb.Fatalf("redistest: connect cluster: %v", err)
	}
	if cl.Mode() != rueidis.ClientModeCluster {
		cl.Close()
		tb.Fatalf("redistest: client mode %v, want cluster", cl.Mode())
	}
	tb.Cleanup(cl.Close)
	return cl
}

// WaitHealthy waits until every running node reports cluster_state:ok with
// all 16384 slots assigned, knows all 6 nodes, every replica's link to its
// primary is up, and every node's CLUSTER SLOTS lists a replica per range.
func (c *Cluster) WaitHealthy(timeout time.Duration) error {
	if err := poll(timeout, 100*time.Millisecond, c.healthy); err != nil {
		return fmt.Errorf("cluster not healthy after %v: %w", timeout, err)
	}
	return nil
}

// poll calls check every interval until it succeeds or timeout has
// passed, and returns check's last error: nil once it succeeded.
func poll(timeout, interval time.Duration, check func() error) error {
	deadline := time.Now().Add(timeout)
	for {
		err := check()
		if err == nil || time.Now().After(deadline) {
			return err
		}
		time.Sleep(interval)
	}
}

func (c *Cluster) healthy() error {
	for _, n := range c.Nodes {
		if n.PID() == 0 {
			continue
		}
		info, err := do(n.Addr, "CLUSTER", "INFO")
		if err != nil {
			return err
		}
		for _, want := range []string{"cluster_state:ok", "cluster_slots_ok:16384", "cluster_known_nodes:6"} {
			if !strings.Contains(info, want) {
				return fmt.Errorf("%s: no %s", n.Addr, want)
			}
		}
		repl, err := do(n.Addr, "INFO", "replication")
		if err != nil {
			return err
		}
		if strings.Contains(repl, "role:slave") && !strings.Contains(repl, "master_link_status:up") {
			return fmt.Errorf("%s: replica link down", n.Addr)
		}
		if err := slotsListReplicas(n.Addr); err != nil {
			return err
		}
	}
	return nil
}

// slotsListReplicas checks that CLUSTER SLOTS on addr lists a replica for
// every slot range: what clients see, and so what they preload and fail
// over to.
func slotsListReplicas(addr string) error {
	res, err := doResult(addr, "CLUSTER", "SLOTS")
	if err != nil {
		return err
	}
	ranges, err := res.ToArray()
	if err != nil {
		return fmt.Errorf("%s: CLUSTER SLOTS: %w", addr, err)
	}
	for _, r := range ranges {
		nodes, _ := r.ToArray()
		if len(nodes) < 4 { // start, end, primary, replica...
			return fmt.Errorf("%s: CLUSTER SLOTS lists no replica for %v", addr, r)
		}
	}
	return nil
}

// NodeInfo is one line of CLUSTER NODES.
type NodeInfo struct {
	ID      string
	Addr    string // 127.0.0.1:port
	Primary bool
	Of      string   // the primary's ID, for a replica
	Slots   [][2]int // owned slot ranges, inclusive
}

// Topology returns CLUSTER NODES as seen by the first running node.
func (c *Cluster) Topology() ([]NodeInfo, error) {
	for _, n := range c.Nodes {
		if n.PID() == 0 {
			continue
		}
		out, err := do(n.Addr, "CLUSTER", "NODES")
		if err != nil {
			return nil, err
		}
		return parseNodes(out), nil
	}
	return nil, errors.New("no node running")
}

func parseNodes(out string) []NodeInfo {
	var nodes []NodeInfo
	for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
		f := strings.Fields(line)
		if len(f) < 8 {
			continue
		}
		ni := NodeInfo{ID: f[0], Addr: strings.SplitN(f[1], "@", 2)[0], Primary: strings.Contains(f[2], "master")}
		if f[3] != "-" {
			ni.Of = f[3]
		}
		for _, r := range f[8:] {
			if strings.HasPrefix(r, "[") { // a slot being migrated
				continue
			}
			lo, hi, found := strings.Cut(r, "-")
			a, _ := strconv.Atoi(lo)
			b := a
			if found {
				b, _ = strconv.Atoi(hi)
			}
			ni.Slots = append(ni.Slots, [2]int{a, b})
		}
		nodes = append(nodes, ni)
	}
	return nodes
}

// node returns the Server listening on addr.
func (c *Cluster) node(addr string) *Server {
	for _, n := range c.Nodes {
		if n.Addr == addr {
			return n
		}
	}
	return nil
}

// PrimaryOf returns the primary serving slot and one of its replicas, as
// the first running node sees them.
func (c *Cluster) PrimaryOf(slot uint16) (primary, replica *Server, err error) {
	nodes, err := c.Topology()
	if err != nil {
		return nil, nil, err
	}
	return c.primaryIn(nodes, slot)
}

// primaryIn finds slot's primary and a replica of it in one node's view.
func (c *Cluster) primaryIn(nodes []NodeInfo, slot uint16) (primary, replica *Server, err error) {
	var pid string
	for _, n := range nodes {
		for _, r := range n.Slots {
			if n.Primary && int(slot) >= r[0] && int(slot) <= r[1] {
				primary, pid = c.node(n.Addr), n.ID
			}
		}
	}
	if primary == nil {
		return nil, nil, fmt.Errorf("no primary serves slot %d", slot)
	}
	for _, n := range nodes {
		if n.Of == pid {
			replica = c.node(n.Addr)
		}
	}
	if replica == nil {
		return nil, nil, fmt.Errorf("primary %s of slot %d has no replica", primary.Addr, slot)
	}
	return primary, replica, nil
}

// agree reports whether every running node sees want as slot's primary,
// with a replica.
func (c *Cluster) agree(slot uint16, want *Server) bool {
	return c.everyNode(func(nodes []NodeInfo) bool {
		p, _, err := c.primaryIn(nodes, slot)
		return err == nil && p == want
	})
}

// everyNode reports whether seen holds for the CLUSTER NODES of every
// running node (false when one does not answer).
func (c *Cluster) everyNode(seen func(nodes []NodeInfo) bool) bool {
	for _, n := range c.Nodes {
		if n.PID() == 0 {
			continue
		}
		out, err := do(n.Addr, "CLUSTER", "NODES")
		if err != nil || !seen(parseNodes(out)) {
			return false
		}
	}
	return true
}

// Failover promotes a replica of the primary serving slot with CLUSTER
// FAILOVER (a coordinated, lossless manual failover) and waits until every
// node sees the replica as the slot's primary and the cluster is healthy. It
// returns the old and the new primary.
//
// A manual failover that has not completed within Redis' limit
// (CLUSTER_MF_TIMEOUT, 5 s: the replica did not reach the paused primary's
// replication offset in time, as on a loaded machine) is abandoned by the
// server without a word; Failover then sends CLUSTER FAILOVER again, every
// mfRetry while the replica is still a replica, until timeout.
func (c *Cluster) Failover(slot uint16, timeout time.Duration) (oldPrimary, newPrimary *Server, err error) {
	oldPrimary, newPrimary, err = c.PrimaryOf(slot)
	if err != nil {
		return nil, nil, err
	}
	deadline := time.Now().Add(timeout)
	var sent time.Time
	for {
		if time.Since(sent) >= mfRetry && isReplica(newPrimary.Addr) {
			if out, err := do(newPrimary.Addr, "CLUSTER", "FAILOVER"); err != nil || out != "OK" {
				return nil, nil, fmt.Errorf("CLUSTER FAILOVER on %s: %v %s", newPrimary.Addr, err, out)
			}
			sent = time.Now()
		}
		if c.agree(slot, newPrimary) && c.healthy() == nil {
			return oldPrimary, newPrimary, nil
		}
		if time.Now().After(deadline) {
			return nil, nil, fmt.Errorf("failover of slot %d to %s not done after %v", slot, newPrimary.Addr, timeout)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// mfRetry is how long Failover waits for a manual failover before it sends
// CLUSTER FAILOVER again: a little more than the server's own limit
// (CLUSTER_MF_TIMEOUT, 5 s in cluster.h), after which it has given up.
const mfRetry = 6 * time.Second

// isReplica reports whether the server at addr answers INFO replication
// with role:slave; false when it cannot be asked.
func isReplica(addr string) bool {
	out, err := do(addr, "INFO", "replication")
	return err == nil && strings.Contains(out, "role:slave")
}

// SharedCluster is one cluster shared by the tests of a package: starting
// one takes seconds, so the first test that needs it starts it and the
// package's TestMain stops it after m.Run:
//
//	var cluster redistest.SharedCluster
//
//	func TestMain(m *testing.M) {
//		code := m.Run()
//		cluster.Stop()
//		os.Exit(code)
//	}
//
// Tests that share it must use keys of their own; a test that fails a node
// over must leave the cluster healthy (Failover waits for that).
type SharedCluster struct {
	once sync.Once
	dir  string
	c    *Cluster
	err  error
}

// Get returns the shared cluster, starting it on first use, once it is
// healthy; it fails tb when the cluster cannot start or recover within 30 s.
func (s *SharedCluster) Get(tb testing.TB) *Cluster {
	tb.Helper()
	s.once.Do(func() {
		if s.dir, s.err = os.MkdirTemp("", "luagen-cluster-"); s.err == nil {
			s.c, s.err = NewCluster(s.dir)
		}
	})
	if s.err != nil {
		tb.Fatalf("redistest: shared cluster: %v", s.err)
	}
	if err := s.c.WaitHealthy(30 * time.Second); err != nil {
		tb.Fatalf("redistest: shared cluster: %v", err)
	}
	return s.c
}

// Stop stops the cluster, if it was started, and removes its directory.
func (s *SharedCluster) Stop() {
	if s.c != nil {
		s.c.Stop()
	}
	if s.dir != "" {
		os.RemoveAll(s.dir)
	}
}

// Takeover makes replica the primary of slot with CLUSTER FAILOVER
// TAKEOVER, which needs neither the old primary nor the other primaries'
// agreement (for a primary that is dead, before the cluster would fail it
// over itself), and waits until every running node sees replica as the
// slot's primary. Writes the old primary had not sent to replica are lost,
// as in any failover after a crash.
func (c *Cluster) Takeover(slot uint16, replica *Server, timeout time.Duration) error {
	if out, err := do(replica.Addr, "CLUSTER", "FAILOVER", "TAKEOVER"); err != nil || out != "OK" {
		return fmt.Errorf("CLUSTER FAILOVER TAKEOVER on %s: %v %s", replica.Addr, err, out)
	}
	deadline := time.Now().Add(timeout)
	for !c.serves(slot, replica) {
		if time.Now().After(deadline) {
			return fmt.Errorf("takeover of slot %d by %s not seen by every node after %v", slot, replica.Addr, timeout)
		}
		time.Sleep(50 * time.Millisecond)
	}
	return nil
}

// serves reports whether every running node sees want as slot's primary
// (whether or not it has a replica: agree asks for one).
func (c *Cluster) serves(slot uint16, want *Server) bool {
	return c.everyNode(func(nodes []NodeInfo) bool {
		found := false
		for _, info := range nodes {
			for _, r := range info.Slots {
				if info.Primary && int(slot) >= r[0] && int(slot) <= r[1] {
					found = info.Addr == want.Addr
				}
			}
		}
		return found
	})
}
