package gen

import (
	"bytes"
	"fmt"
	"go/format"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// FuzzParse feeds arbitrary text to Parse (header, shebang, Lua parser and
// lint) and checks that it does not panic and that every diagnostic points
// into the file: a line that exists and a column at most one past its end.
func FuzzParse(f *testing.F) {
	seeds, _ := filepath.Glob("../lua/*/*.lua")
	for _, s := range seeds {
		b, err := os.ReadFile(s)
		if err == nil {
			f.Add(b)
		}
	}
	for _, s := range []string{
		"", "#!", "#!lua flags=", "#!lua flags=,,\n", "---@", "---@key", "---@arg ... int64",
		"---@return tuple X\n---@field a time.Duration", "---@error nil\n", "--[[", "'\\",
		"---@key k\nreturn redis.call('GET', KEYS[1] .. ARGV[1])",
		"---@return bool\nreturn false", "\r\n\r---@key k\r\nreturn KEYS[1]",
		"local KEYS = 1 return KEYS[9]", "redis.call(", "return redis.call('MSET', unpack(ARGV))",
		"---@keys T C p{t}\n---@key a {t}:a:<n:int64>.<m>\n---@key b {u}\nreturn KEYS[1]", "---@key a {t:<",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, src []byte) {
		lines, _ := splitLines(string(src))
		_, diags := Parse("f.lua", "f.lua", src)
		for _, d := range diags {
			if d.Line < 1 || d.Line > len(lines) {
				t.Fatalf("%s: line outside 1..%d", d, len(lines))
			}
			if d.Col < 1 || d.Col > len(lines[d.Line-1])+1 {
				t.Fatalf("%s: column outside 1..%d", d, len(lines[d.Line-1])+1)
			}
			if d.Path != "f.lua" || d.Msg == "" {
				t.Fatalf("bad diagnostic %#v", d)
			}
		}
	})
}

// longLines are sources with thousands of reported constructs on one line,
// each of which once made column lookups quadratic (fuzzing found stalls of
// seconds before matches were cached per line).
var longLines = map[string]string{
	"keys":  "---@key k\nreturn " + strings.Repeat("KEYS[2] .. ", 3000) + "1",
	"calls": "---@key k\n" + strings.Repeat("redis.call('GET', 'x' .. KEYS[1]) ", 3000),
	// Each distinct index scanned the whole line again (a minute for
	// 30000).
	"indexes": "return {" + func() string {
		var b strings.Builder
		for i := 1; i <= 30000; i++ {
			fmt.Fprintf(&b, "KEYS[%d],", i)
		}
		return b.String()
	}() + "}",
	// Each call's arguments were found by scanning to its closing
	// parenthesis: quadratic in the nesting (3s for 20000).
	"nested": "---@key k\nreturn " + strings.Repeat("redis.call('GET', 'x' .. ", 20000) + "KEYS[1]" + strings.Repeat(")", 20000),
}

// TestParseLongLines guards against quadratic column lookups by counting
// the bytes the locator scans, not by timing (BenchmarkParseLongLines
// times it): each regression above scanned the line once per construct,
// thousands of times its length; caching per line keeps it to a few.
func TestParseLongLines(t *testing.T) {
	for name, src := range longLines {
		_, diags, loc := parseCounted(Source{Path: "f.lua", File: "f.lua", Src: []byte(src)})
		assert.GreaterOrEqual(t, len(diags), 3000, name)
		require.NotNil(t, loc, name)
		assert.LessOrEqual(t, loc.work, 8*len(src), "%s: the locator scanned %d bytes of a %d-byte source", name, loc.work, len(src))
		t.Logf("%s: %d bytes scanned for %d bytes of source, %d diagnostics", name, loc.work, len(src), len(diags))
	}
}

func BenchmarkParseLongLines(b *testing.B) {
	for name, src := range longLines {
		b.Run(name, func(b *testing.B) {
			for b.Loop() {
				Parse("f.lua", "f.lua", []byte(src))
			}
		})
	}
}

// FuzzGenerate checks what FuzzParse cannot: when a script has no
// diagnostics, Generate must produce Go that parses and is gofmt-stable
// (go vet on real packages is TestGoldenCompiles' job). It found struct
// fields named "" and "2fa" from ---@key _ and ---@key _2fa, and comments
// broken by a NUL in a doc line.
func FuzzGenerate(f *testing.F) {
	seeds, _ := filepath.Glob("../lua/*/*.lua")
	for _, s := range seeds {
		if b, err := os.ReadFile(s); err == nil {
			f.Add("x.lua", b)
		}
	}
	for _, s := range []string{
		"---@key _ k\nreturn KEYS[1]",
		"--- doc\n---@arg a time.Duration ms d\n---@return tuple T t\n---@field f_1 int64? f\nreturn ARGV[1]",
		"---@return string s\n---@status OK Ok fine\n---@error nil Gone g\nreturn 'OK'",
		"---@key ...ks k\n---@arg ...as bool a\n---@return []time.Time s\nreturn {KEYS[1], ARGV[1]}",
		"#!lua flags=no-writes,allow-cross-slot-keys\n---@script X\n---@return map[string]string m\nreturn {}",
		"---@keys T C p{t} d\n---@key a {t}:a d\n---@key b {t}:b:<n:int64>.<m> d\n---@error -1 E e\nreturn redis.call('GET', KEYS[1]) .. redis.call('GET', KEYS[2])",
	} {
		f.Add("x.lua", []byte(s))
	}
	f.Add("get_ttl.lua", []byte("return 1"))
	f.Fuzz(func(t *testing.T, name string, src []byte) {
		if !strings.HasSuffix(name, ".lua") || strings.ContainsAny(name, "/\\") {
			return
		}
		out, diags := Generate([]Source{{Path: name, File: "lua/p/" + name, Src: src}}, Config{Package: "p", Command: "luagen generate ../lua/p"})
		if len(diags) > 0 {
			return
		}
		for n, b := range out {
			if _, err := parser.ParseFile(token.NewFileSet(), n, b, parser.ParseComments); err != nil {
				t.Fatalf("%s does not parse: %v\n%s", n, err, b)
			}
			if again, err := format.Source(b); err != nil || !bytes.Equal(again, b) {
				t.Fatalf("%s is not gofmt-stable (%v)\n%s", n, err, b)
			}
		}
	})
}
