package lua51

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestChunkID pins luaO_chunkid's forms (LUA_IDSIZE 60), which loadstring
// error positions use.
func TestChunkID(t *testing.T) {
	require.Equal(t, `[string "return 1"]`, ChunkID("return 1"))
	require.Equal(t, `[string "local t..."]`, ChunkID("local t\nreturn t.x"))
	require.Equal(t, `[string "`+strings.Repeat("x", 43)+`..."]`, ChunkID(strings.Repeat("x", 100)))
	require.Equal(t, `[string "`+strings.Repeat("x", 43)+`"]`, ChunkID(strings.Repeat("x", 43)))
	require.Equal(t, "mychunk", ChunkID("=mychunk"))
	require.Equal(t, "file.lua", ChunkID("@file.lua"))
	require.Equal(t, "[string \"\x1bLuaQ\"]", ChunkID("\x1bLuaQ\x00\x01"))
}
