package gen

import (
	"errors"
	"go/parser"
	"go/token"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
)

// TestDiagnosticsBytes is TestDiagnostics for inputs that a txtar archive
// would hide or that git would mangle: NUL, invalid UTF-8, a byte order
// mark, lone carriage returns.
func TestDiagnosticsBytes(t *testing.T) {
	for _, tc := range []struct {
		name, src, want string
	}{{
		name: "nul in doc",
		src:  "--- doc with a \x00 NUL\nreturn 1\n",
		want: "t.lua:1:16: the header holds a NUL byte; its text is copied into Go comments, where Go does not allow it",
	}, {
		name: "latin-1 in key description",
		src:  "---@key k caf\xe9 au lait\nreturn KEYS[1]\n",
		want: "t.lua:1:14: the header is not valid UTF-8 (byte 0xe9); its text is copied into Go comments, which must be UTF-8: save the file as UTF-8",
	}, {
		name: "byte order mark in a status value",
		src:  "---@return string s\n---@status \ufeffOK Ok fine\nreturn 'OK'\n",
		want: "t.lua:2:12: the header holds a byte order mark (U+FEFF); its text is copied into Go comments, where Go does not allow it",
	}, {
		name: "one report per line",
		src:  "--- \xff\xfe\x00\n--- fine\n--- \x00\nreturn 1\n",
		want: "t.lua:1:5: the header is not valid UTF-8 (byte 0xff); its text is copied into Go comments, which must be UTF-8: save the file as UTF-8\n" +
			"t.lua:3:5: the header holds a NUL byte; its text is copied into Go comments, where Go does not allow it",
	}, {
		name: "shebang without a line feed",
		src:  "#!lua flags=no-writes",
		want: `t.lua:1:22: Redis rejects this shebang: "Invalid script shebang": it reads the shebang up to the first line feed, and this file has none`,
	}, {
		name: "shebang alone",
		src:  "#!lua",
		want: `t.lua:1:6: Redis rejects this shebang: "Invalid script shebang": it reads the shebang up to the first line feed, and this file has none`,
	}, {
		name: "shebang ended by a lone carriage return",
		src:  "#!lua\r---@return int64\rreturn 1\n",
		want: `t.lua:1:6: Redis reads the shebang up to the first line feed, but line 1 ends with a carriage return alone, so lines 1-3 would be the shebang; end line 1 with \n or \r\n`,
	}, {
		name: "shebang ended by CRLF",
		src:  "#!lua flags=no-writes\r\n---@return int64 n\r\nreturn 1\r\n",
	}, {
		name: "lone carriage returns without a shebang",
		src:  "---@key k key\r---@return int64 n\rreturn redis.call('INCR', KEYS[1]) + ARGV[1]\r",
		want: "t.lua:3:38: ARGV[1] is not declared: the header declares 0 args (add ---@arg lines, or ---@arg ...name for a variable number)",
	}, {
		name: "byte order mark",
		src:  "\ufeff---@key k key\n---@arg a int64 a\nreturn KEYS[1] .. KEYS[2]\n",
		want: "t.lua:1:1: the file starts with a UTF-8 byte order mark, which Redis' Lua cannot parse: save it without one\n" +
			"t.lua:2:9: arg \"a\" is declared but the script never reads ARGV[1]; if callers still pass it, keep it with ---@unused a reason\n" +
			"t.lua:3:19: KEYS[2] is not declared: the header declares 1 key (add ---@key lines, or ---@key ...name for a variable number)",
	}, {
		name: "byte order mark before a shebang",
		src:  "\ufeff#!lua\nreturn 1\n",
		want: "t.lua:1:1: the file starts with a UTF-8 byte order mark, which Redis' Lua cannot parse: save it without one\n" +
			"t.lua:1:4: the shebang must start the file: Redis reads #! only as its first two bytes, and Lua fails to compile it anywhere else",
	}, {
		name: "indented shebang",
		src:  "  #!lua\nreturn 1\n",
		want: "t.lua:1:3: the shebang must start the file: Redis reads #! only as its first two bytes, and Lua fails to compile it anywhere else",
	}, {
		name: "string continued after a backslash, CRLF",
		src:  "---@return string s\r\nlocal s = \"a\\\r\n---@key k is text\"\r\nreturn s\r\n",
	}, {
		name: "string continued after a backslash, LF CR",
		src:  "---@return string s\n\rlocal s = 'a\\\n\r---@key k is text'\n\rreturn s\n\r",
	}, {
		name: "code may hold anything",
		src:  "--- fine\nreturn '\xff\x00\ufeff' -- \xe9\n",
	}} {
		t.Run(tc.name, func(t *testing.T) {
			out, diags := Generate([]Source{{Path: "t.lua", File: "lua/p/t.lua", Src: []byte(tc.src)}}, Config{Package: "p", Command: "luagen generate ../lua/p"})
			var got []string
			for _, d := range diags {
				got = append(got, d.String())
			}
			assert.Equal(t, tc.want, strings.Join(got, "\n"))
			if tc.want == "" {
				assertParses(t, out)
			}
		})
	}
}

// TestFileNameNotUTF8: the go command cannot open a file whose name is
// not UTF-8 ("open a\ufffd.lua.go: no such file or directory").
func TestFileNameNotUTF8(t *testing.T) {
	out, diags := Generate([]Source{{Path: "a\xff.lua", File: "lua/p/a\xff.lua", Src: []byte("---@script A\nreturn 1\n")}},
		Config{Package: "p", Command: "luagen generate ../lua/p"})
	assert.Nil(t, out)
	assert.Equal(t, "a\xff.lua:1:1: the file name a\\xff.lua.go is not valid UTF-8, and the go command cannot open such a file; rename the script", diags.Error())
}

// TestOddPathsInComments: the file names that generated comments quote
// may hold bytes a Go comment cannot (a newline would end the comment and
// turn the rest into code); the output must still parse.
func TestOddPathsInComments(t *testing.T) {
	for _, file := range []string{"lua/new\nline/x.lua", "lua/caf\xe9/x.lua", "lua/\x00/x.lua", "lua/\ufeff/x.lua"} {
		out, diags := Generate([]Source{{Path: "x.lua", File: file, Src: []byte("return 1\n")}},
			Config{Package: "p", Command: "luagen generate \"../" + file + "\""})
		assert.Empty(t, diags, "%q", file)
		assertParses(t, out)
		assert.True(t, generatedHeader.Match(out["x.lua.go"][:strings.IndexByte(string(out["x.lua.go"]), '\n')]), "%q", file)
	}
}

func assertParses(t *testing.T, files map[string][]byte) {
	t.Helper()
	assert.NotEmpty(t, files)
	for name, b := range files {
		_, err := parser.ParseFile(token.NewFileSet(), name, b, parser.ParseComments|parser.AllErrors)
		assert.NoError(t, err, "%s:\n%s", name, b)
	}
}

func TestBugMessageIsOneLine(t *testing.T) {
	err := errors.New("Error 18:1: expected '}', found 2 (and 10 more errors) while formatting source:\npackage p\n\ntype T struct{\n2fa string\n}\n")
	assert.Equal(t, "luagen bug: the generated Go does not parse (Error 18:1: expected '}', found 2 (and 10 more errors)); please report it with this script", bugMessage(err))
}
