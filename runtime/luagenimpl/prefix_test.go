package luagenimpl

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/luagen/luagen/runtime"
)

// A key prefix passes only with a hash tag on its family key's slot; a
// variadic key of the family needs at least one value.
func TestCheckPrefix(t *testing.T) {
	const key = "bull:{q}:wait"
	for _, ok := range []string{"bull:{q}:", "{q}", "other:{q}:x"} {
		assert.NoError(t, CheckPrefix("s.X", "prefix", ok, "wait", key), ok)
	}
	for _, bad := range []string{"", "bull:q:", "bull:{}:", "bull:{other}:", "bull:｛q｝:"} {
		err := CheckPrefix("s.X", "prefix", bad, "wait", key)
		require.ErrorIs(t, err, runtime.ErrBadArg, "%q", bad)
		var e *runtime.BadArgError
		require.ErrorAs(t, err, &e)
		assert.Equal(t, "prefix", e.Arg)
	}
	assert.NoError(t, CheckPrefixIn("s.X", "prefix", "bull:{q}:", "jobs", []string{"bull:{q}:1", "bull:{q}:2"}))
	require.ErrorIs(t, CheckPrefixIn("s.X", "prefix", "bull:{q}:", "jobs", nil), runtime.ErrBadArg)
	require.ErrorIs(t, CheckPrefixIn("s.X", "prefix", "bull:{r}:", "jobs", []string{"bull:{q}:1"}), runtime.ErrBadArg)
}
