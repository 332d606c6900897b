// Package lua51 holds what luagen ports from Lua 5.1's C core as Redis 7
// bundles it (deps/lua/src), so that the generator and luatest judge a
// script as the server does, from one copy: the parser's syntax check
// ([Check], from lparser.c and llex.c, with its messages), the chunk names
// of its messages ([ChunkID], luaO_chunkid) and its string-to-number
// conversion ([Str2d], luaO_str2d over C's strtod).
package lua51
