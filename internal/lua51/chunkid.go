package lua51

import "strings"

// ChunkID is luaO_chunkid with LUA_IDSIZE 60: how Lua 5.1 shows a chunk
// name in runtime errors.
func ChunkID(source string) string { return ChunkIDLen(source, 60) }

// ChunkIDLen is luaO_chunkid(out, source, bufflen): "=name" as is, "@file"
// with its start cut to fit, a source string as [string "first line..."].
// The lexer's messages use a bufflen of 80 (MAXSRC in llex.c).
func ChunkIDLen(source string, bufflen int) string {
	if i := strings.IndexByte(source, 0); i >= 0 {
		source = source[:i] // a C string
	}
	switch {
	case strings.HasPrefix(source, "="):
		if len(source)-1 > bufflen-1 {
			return source[1:bufflen]
		}
		return source[1:]
	case strings.HasPrefix(source, "@"):
		s := source[1:]
		if max := bufflen - len(" '...' ") - 1; len(s) > max {
			return "..." + s[len(s)-max:]
		}
		return s
	}
	n := strings.IndexAny(source, "\n\r")
	if n < 0 {
		n = len(source)
	}
	if max := bufflen - len(` [string "..."] `) - 1; n > max {
		n = max
	}
	if n < len(source) {
		return `[string "` + source[:n] + `..."]`
	}
	return `[string "` + source + `"]`
}
