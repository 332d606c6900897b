package luatest

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// TestHelpersRefuseMisuse calls the rewrite's helpers the way a script
// could, by name and with any arguments: they answer, never panic.
func TestHelpersRefuseMisuse(t *testing.T) {
	r := New()
	defer r.Close()
	for script, want := range map[string]string{
		"return __luatest_concat('', 1, 2, 3)":      "123",
		"return __luatest_concat('x')":              "nil",
		"return __luatest_concat('a\\0b\\0c', 'x')": "x",
		"return __luatest_fornum('12') + 1":         "13",
		"return __luatest_setn('gn', 1, 2)":         "2",
		"return __luatest_setg(1)":                  "Attempt to modify a readonly table",
	} {
		got := r.Command(2, "EVAL", script, "0")
		require.Contains(t, got.String(), want, script)
	}
	got := r.Command(2, "EVAL", "return __luatest_concat('', nil, 1)", "0")
	require.Contains(t, got.String(), "attempt to concatenate a nil value", "the script error")
}

// TestRewriteKeepsLineNumbers: errors after a rewritten concatenation or
// numeric for still point at the script's own lines.
func TestRewriteKeepsLineNumbers(t *testing.T) {
	r := New()
	defer r.Close()
	got := r.Command(2, "EVAL", "local s = 'a' .. 1\nfor i = '1', 2 do end\nlocal t\nreturn s .. t.x", "0")
	require.Contains(t, got.String(), "user_script:4: attempt to index local 't' (a nil value)")
}
