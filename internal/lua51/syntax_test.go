package lua51

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// TestCheck: what Lua 5.1 refuses and gopher-lua parses (goto, labels, a
// break that is not last in its block) is a *SyntaxError worded as Redis
// words it, with its line; valid Lua 5.1 passes, with goto as a name
// written GotoName for gopher-lua on the same line.
func TestCheck(t *testing.T) {
	for src, want := range map[string]SyntaxError{
		"local x = 1\nfor i = 1, 3 do\n  goto continue\n  ::continue::\nend\n": {"user_script:3: '=' expected near 'continue'", 3},
		"local x = 1\n::top::\nreturn x\n":                                     {"user_script:2: unexpected symbol near ':'", 2},
		"while true do\n  break\n  local y = 2\nend\n":                         {"user_script:3: 'end' expected (to close 'while' at line 1) near 'local'", 3},
		"return 'abc\n": {"user_script:1: unfinished string near ''abc'", 1},
	} {
		_, err := Check(src, "@user_script", 0)
		se, ok := err.(*SyntaxError)
		require.True(t, ok, "%q: %v", src, err)
		require.Equal(t, want, *se, "%q", src)
	}
	got, err := Check("local goto = 1\r\nreturn goto + 0x1p4", "@user_script", 0)
	require.NoError(t, err)
	require.Equal(t, "local "+GotoName+" = 1\r\nreturn "+GotoName+" + 16", got)
}
