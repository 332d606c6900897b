package redistest_test

import (
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/luagen/luagen/redistest"
)

// TestSentinel starts a primary, a replica and three sentinels, checks
// that the sentinels name the primary, and that killing it makes them
// promote the replica.
func TestSentinel(t *testing.T) {
	s := redistest.StartSentinel(t, 1)
	require.Len(t, s.Sentinels, 3)
	m, err := s.Master()
	require.NoError(t, err)
	assert.Same(t, s.Primary, m)
	assert.Contains(t, s.Replicas[0].Do(t, "INFO", "replication"), "master_link_status:up")

	s.Primary.Stop()
	m, err = s.WaitFailover(s.Primary, 60*time.Second)
	require.NoError(t, err)
	assert.Same(t, s.Replicas[0], m)
	assert.True(t, strings.Contains(m.Do(t, "INFO", "replication"), "role:master"))
	assert.Equal(t, "OK", m.Do(t, "SET", "k", "v"), "the promoted replica takes writes")
}
