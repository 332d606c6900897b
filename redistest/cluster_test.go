package redistest

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestClusterStartsAndFailsOver(t *testing.T) {
	c := StartCluster(t)
	require.Len(t, c.Nodes, 6)
	nodes, err := c.Topology()
	require.NoError(t, err)
	primaries, slots := 0, 0
	for _, n := range nodes {
		assert.Regexp(t, "^[0-9a-f]{40}$", n.ID)
		if n.Primary {
			primaries++
			for _, r := range n.Slots {
				slots += r[1] - r[0] + 1
			}
		}
	}
	assert.Equal(t, 3, primaries)
	assert.Equal(t, 16384, slots)
	for _, n := range nodes {
		if n.Primary {
			_, replica, err := c.primaryIn(nodes, uint16(n.Slots[0][0]))
			require.NoError(t, err, "every primary has a replica")
			assert.NotEqual(t, n.Addr, replica.Addr)
		}
	}

	cl := c.Client(t)
	ctx := context.Background()
	require.NoError(t, cl.Do(ctx, cl.B().Set().Key("{user1000}.x").Value("1").Build()).Error())

	oldP, newP, err := c.Failover(3443, 30*time.Second) // slot of "user1000"
	require.NoError(t, err)
	assert.NotEqual(t, oldP.Addr, newP.Addr)
	assert.Contains(t, newP.Do(t, "INFO", "replication"), "role:master")
	assert.Equal(t, "1", newP.Do(t, "GET", "{user1000}.x"), "a coordinated failover loses nothing")
}
