package gen

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/luagen/luagen/internal/lualines"
)

// mapRead reads included files from a map, as Load reads them from disk.
func mapRead(files map[string]string) func(string) ([]byte, error) {
	return func(p string) ([]byte, error) {
		if s, ok := files[filepath.ToSlash(p)]; ok {
			return []byte(s), nil
		}
		return nil, &os.PathError{Op: "open", Path: p, Err: os.ErrNotExist}
	}
}

// Every line of a combined body maps back to the same text in the file it
// came from, whatever the files' line breaks: a file that ends without
// one, "\r" and "\r\n" breaks meeting "\n" ones (which Lua would read as
// one break if they were simply joined), a script with no code after its
// header.
func TestIncludeLinesMapBack(t *testing.T) {
	for _, tc := range []struct {
		name, script string
		files        map[string]string
		lines        int // of the combined body
	}{
		{"no final line break", "---@include lib/a.lua\nreturn a()\n",
			map[string]string{"lib/a.lua": "local function a()\n  return 1\nend"}, 5},
		{"CR helper after LF header", "---@include lib/a.lua\nreturn a()\n",
			map[string]string{"lib/a.lua": "\rlocal function a() return 1 end\r"}, 4},
		{"LF helper after CR header", "---@include lib/a.lua\rreturn a()\r",
			map[string]string{"lib/a.lua": "\nlocal function a() return 1 end\n"}, 4},
		{"CRLF and LF", "#!lua\r\n---@include lib/a.lua\r\n---@include lib/b.lua\r\n\r\nreturn a() + b()\r\n",
			map[string]string{"lib/a.lua": "local function a() return 1 end\n", "lib/b.lua": "\r\nlocal function b()\r\n return 2\r\nend"}, 10},
		{"nested, header only", "---@include lib/a.lua",
			map[string]string{"lib/a.lua": "---@include b.lua\nlocal x = 1\n", "lib/b.lua": "local y = 2\n"}, 4},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s, diags := ParseSource(Source{Path: "t.lua", File: "lua/t.lua", Src: []byte(tc.script), ReadInclude: mapRead(tc.files)})
			require.Empty(t, diags)
			require.NotNil(t, s.Spans)
			files := map[string]string{"t.lua": tc.script}
			for p, text := range tc.files {
				files[p] = text
			}
			body, _ := splitLines(s.Body)
			n, _ := lualines.Breaks(s.Body)
			if !strings.HasSuffix(s.Body, "\n") && !strings.HasSuffix(s.Body, "\r") {
				n++
			}
			assert.Equal(t, tc.lines, n, "lines of %q", s.Body)
			for i, text := range body {
				path, line := s.Position(i + 1)
				fl, _ := splitLines(files[path])
				require.LessOrEqual(t, line, len(fl), "body line %d maps to %s:%d", i+1, path, line)
				// A blank line may have become " " (see expander.write).
				assert.Equal(t, strings.TrimSpace(fl[line-1]), strings.TrimSpace(text), "body line %d maps to %s:%d", i+1, path, line)
			}
			assert.Equal(t, "lua/t.lua", s.Spans[0].File)
			for _, sp := range s.Spans {
				assert.Equal(t, "lua/"+sp.Path, sp.File, "module-relative, as the script's")
			}
		})
	}
}

// A file reached twice is inlined once, where it is first reached; an
// include names a path relative to the file that holds the line.
func TestIncludeOnce(t *testing.T) {
	files := map[string]string{
		"lib/a.lua":   "---@include b.lua\nlocal function a() return b() end\n",
		"lib/b.lua":   "local function b() return 2 end\n",
		"lib/c/c.lua": "---@include ../b.lua\nlocal function c() return b() end\n",
	}
	s, diags := ParseSource(Source{Path: "t.lua", File: "lua/t.lua", ReadInclude: mapRead(files),
		Src: []byte("---@include lib/b.lua\n---@include lib/a.lua\n---@include lib/c/c.lua\n---@include lib/b.lua\nreturn a() + c()\n")})
	require.Empty(t, diags)
	assert.Equal(t, 1, strings.Count(s.Body, "local function b()"), s.Body)
	assert.Less(t, strings.Index(s.Body, "local function b()"), strings.Index(s.Body, "local function a()"))
	assert.Less(t, strings.Index(s.Body, "local function a()"), strings.Index(s.Body, "local function c()"))
	assert.Equal(t, []string{"lua/lib/b.lua", "lua/lib/a.lua", "lua/lib/c/c.lua"}, s.inlinedFiles())
}

// Without a reader (Parse, or a Source built by hand) an include is a
// diagnostic, not a script that silently lacks its helper.
func TestIncludeNeedsReader(t *testing.T) {
	_, diags := Parse("t.lua", "t.lua", []byte("---@include lib/a.lua\nreturn 1\n"))
	require.Len(t, diags, 1)
	assert.Contains(t, diags[0].String(), "t.lua:1:13: cannot include lib/a.lua: gen.Parse reads no files")
}

// Load reads included files from disk relative to the including file,
// takes only the scripts of a directory (not lib/), and the generated code
// records module-relative files; a missing file is reported with the
// system's error.
func TestLoadIncludes(t *testing.T) {
	root := t.TempDir()
	write := func(p, s string) {
		require.NoError(t, os.MkdirAll(filepath.Dir(filepath.Join(root, p)), 0o755))
		require.NoError(t, os.WriteFile(filepath.Join(root, p), []byte(s), 0o644))
	}
	write("go.mod", "module example.com/m\n")
	write("lua/x/take.lua", "---@key k the key\n---@include lib/get.lua\nreturn get()\n")
	write("lua/x/lib/get.lua", "local function get()\n  return redis.call('GET', KEYS[1]) or ''\nend\n")
	write("lua/y/bad.lua", "---@include lib/none.lua\nreturn 1\n")
	srcs, err := Load([]string{filepath.Join(root, "lua", "x")})
	require.NoError(t, err)
	require.Len(t, srcs, 1, "lib/ holds no scripts")
	out, diags := Generate(srcs, Config{Package: "x"})
	require.Empty(t, diags)
	code := string(out["take.lua.go"])
	assert.Contains(t, code, `{Body: 3, File: "lua/x/lib/get.lua", Line: 1}`)
	assert.Contains(t, code, `{Body: 6, File: "lua/x/take.lua", Line: 3}`)
	assert.Contains(t, code, "// Includes: lua/x/lib/get.lua\n")

	srcs, err = Load([]string{filepath.Join(root, "lua", "y")})
	require.NoError(t, err)
	_, diags = Generate(srcs, Config{Package: "y"})
	require.Len(t, diags, 1)
	assert.Equal(t, filepath.Join(root, "lua", "y", "bad.lua"), diags[0].Path)
	assert.Equal(t, Pos{1, 13}, diags[0].Pos)
	assert.Contains(t, diags[0].Msg, "cannot include lib/none.lua: open "+filepath.Join(root, "lua", "y", "lib", "none.lua")+": no such file or directory")
}

// Expand, what luagen eval sends, is the body Generate embeds.
func TestExpandIsTheBody(t *testing.T) {
	src := Source{Path: "t.lua", File: "lua/t.lua", ReadInclude: mapRead(map[string]string{"lib/a.lua": "local a = 1\n"}),
		Src: []byte("---@key k the key\n---@include lib/a.lua\nreturn redis.call('GET', KEYS[1]) or a\n")}
	s, diags := ParseSource(src)
	require.Empty(t, diags)
	body, spans, diags := Expand(src)
	require.Empty(t, diags)
	assert.Equal(t, s.Body, body)
	assert.Equal(t, s.Spans, spans)

	src.ReadInclude = mapRead(nil)
	_, _, diags = Expand(src)
	require.Len(t, diags, 1)
	assert.Equal(t, "t.lua:2:13: cannot include lib/a.lua: open lib/a.lua: file does not exist", diags[0].String())

	plain := Source{Path: "p.lua", Src: []byte("return 1\n")}
	body, spans, diags = Expand(plain)
	assert.Equal(t, "return 1\n", body)
	assert.Nil(t, spans)
	assert.Empty(t, diags)
}

// A value the reply check follows from an included file is named by that
// file and line, not by a line of the combined body.
func TestIncludeLineReference(t *testing.T) {
	files := map[string]string{"lib/v.lua": "-- v is a fraction\nlocal v = 1.5\n"}
	_, diags := ParseSource(Source{Path: "t.lua", File: "t.lua", ReadInclude: mapRead(files),
		Src: []byte("---@return int64 n\n---@include lib/v.lua\nreturn v\n")})
	require.NotEmpty(t, diags)
	assert.Contains(t, diags.Error(), "t.lua:3:8: ")
	assert.Contains(t, diags.Error(), "(lib/v.lua:2)")
}

// Generate reads a file that several scripts include once, and a problem
// in it is reported once, in that file, whichever scripts reach it.
func TestGenerateReadsSharedIncludeOnce(t *testing.T) {
	reads := map[string]int{}
	files := map[string]string{"lib/a.lua": "---@key k oops\nlocal a = 1\n"}
	read := func(p string) ([]byte, error) {
		reads[filepath.ToSlash(p)]++
		return mapRead(files)(p)
	}
	var srcs []Source
	for _, n := range []string{"one.lua", "two.lua"} {
		srcs = append(srcs, Source{Path: n, File: "lua/x/" + n, ReadInclude: read,
			Src: []byte("---@include lib/a.lua\nreturn a\n")})
	}
	_, diags := Generate(srcs, Config{Package: "x"})
	assert.Equal(t, map[string]int{"lib/a.lua": 1}, reads)
	require.Len(t, diags, 1, "%v", diags)
	assert.Equal(t, "lib/a.lua", diags[0].Path)
	assert.Equal(t, Pos{1, 4}, diags[0].Pos)
}

// Load's includes read only regular files of at most 1 MiB inside the
// module, symbolic links resolved: a path or a link leading out of it, a
// named pipe (which would block the generator) and a link to /dev/zero
// (which would exhaust its memory) are each reported at the include line,
// and the script is generated from nothing they hold.
func TestLoadIncludesStayInTheModule(t *testing.T) {
	outside := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(outside, "x.lua"), []byte("local x = 1\n"), 0o644))
	root := t.TempDir()
	write := func(p, s string) {
		require.NoError(t, os.MkdirAll(filepath.Dir(filepath.Join(root, p)), 0o755))
		require.NoError(t, os.WriteFile(filepath.Join(root, p), []byte(s), 0o644))
	}
	write("go.mod", "module example.com/m\n")
	write("lua/lib/big.lua", "-- "+strings.Repeat("x", 1<<20)+"\n")
	write("lua/lib/ok.lua", "local ok = 1\n")
	require.NoError(t, os.Symlink(filepath.Join(outside, "x.lua"), filepath.Join(root, "lua", "lib", "out.lua")))
	require.NoError(t, os.Symlink("/dev/zero", filepath.Join(root, "lua", "lib", "zero.lua")))
	require.NoError(t, os.Symlink("ok.lua", filepath.Join(root, "lua", "lib", "in.lua"))) // inside: fine
	require.NoError(t, syscallMkfifo(filepath.Join(root, "lua", "lib", "pipe.lua")))
	rel, err := filepath.Rel(filepath.Join(root, "lua"), filepath.Join(outside, "x.lua"))
	require.NoError(t, err)
	for _, tc := range []struct{ inc, want string }{
		{rel, "outside the module"},
		{"lib/out.lua", "resolves to " + filepath.Join(outside, "x.lua") + ", outside the module"},
		{"lib/zero.lua", "outside the module"},
		{"lib/pipe.lua", "not a regular file (p"},
		{"lib/big.lua", "more than the 1048576 an included file may have"},
	} {
		t.Run(tc.inc, func(t *testing.T) {
			write("lua/t.lua", "---@include "+filepath.ToSlash(tc.inc)+"\nreturn 1\n")
			srcs, err := Load([]string{filepath.Join(root, "lua", "t.lua")})
			require.NoError(t, err)
			_, diags := Generate(srcs, Config{Package: "x"})
			require.Len(t, diags, 1, "%v", diags)
			assert.Equal(t, Pos{1, 13}, diags[0].Pos)
			assert.Contains(t, diags[0].Msg, "cannot include "+filepath.ToSlash(tc.inc)+": ")
			assert.Contains(t, diags[0].Msg, tc.want)
		})
	}
	write("lua/t.lua", "---@include lib/in.lua\nreturn ok\n")
	srcs, err := Load([]string{filepath.Join(root, "lua", "t.lua")})
	require.NoError(t, err)
	_, diags := Generate(srcs, Config{Package: "x"})
	assert.Empty(t, diags, "a link that stays in the module is read")
}
