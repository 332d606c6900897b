package luatest

import (
	"sort"
	"strings"
	"testing"

	rediscmd "github.com/luagen/luagen/internal/commands"
	"github.com/stretchr/testify/require"
)

// TestScriptCallableCoverage pins which commands redis-server 7.0.15 lets a
// script call (199 commands or command families) and requires luatest to
// implement every one, so README.md's count stays true.
func TestScriptCallableCoverage(t *testing.T) {
	tops := map[string]bool{}
	for _, n := range rediscmd.Names() {
		info, _ := rediscmd.Lookup(n)
		if info.Subcommands || info.Has(rediscmd.NoScript) {
			continue
		}
		tops[strings.SplitN(n, "|", 2)[0]] = true
	}
	var missing []string
	for n := range tops {
		if commandTable[n] == nil {
			missing = append(missing, n)
		}
	}
	sort.Strings(missing)
	require.Equal(t, 199, len(tops))
	require.Empty(t, missing)
}
