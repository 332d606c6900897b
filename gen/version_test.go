package gen

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/luagen/luagen/runtime/luagenimpl"
)

// The generator and the runtime of one module version agree: the code
// gen writes is the newest luagenimpl runs, and luagenimpl still runs it.
func TestGenVersionIsRuntimes(t *testing.T) {
	assert.Equal(t, GenVersion, luagenimpl.MaxVersion, "raise luagenimpl.MaxVersion with GenVersion")
	assert.LessOrEqual(t, luagenimpl.MinVersion, GenVersion)
}

// TestVersionGuard builds a generated package against a copy of this
// module whose luagenimpl runs another range of versions, as a user's
// module does after updating luagen without regenerating (or the
// reverse): the build must fail at the file's own guard line, with Go's
// overflow message, and nowhere else. The same copy left as it is builds,
// so the failures come from the versions alone; and it builds what the
// generator of version 1 wrote (testdata/version1, a script with a key and
// an argument, whose method recycles its call buffer through
// CallPool.Put), which luagenimpl's MinVersion promises to run.
func TestVersionGuard(t *testing.T) {
	goBin, root := goCommand(t)

	out, diags := Generate([]Source{{
		Path: "ping.lua", File: "lua/ping/ping.lua",
		Src: []byte("--- Ping answers 1.\n---@return int64 always 1\nreturn 1\n"),
	}}, Config{Package: "ping", Command: "luagen generate ../lua/ping"})
	require.Empty(t, diags, "diagnostics:\n%s", diags.Error())
	file := OutputName("ping.lua")
	minLine := lineOf(t, out[file], fmt.Sprintf("const _ = luagenimpl.EnforceVersion(%d - luagenimpl.MinVersion)", GenVersion))
	maxLine := lineOf(t, out[file], fmt.Sprintf("const _ = luagenimpl.EnforceVersion(luagenimpl.MaxVersion - %d)", GenVersion))

	// The packages of this module that luagenimpl needs, to copy.
	list := exec.Command(goBin, "list", "-deps", "-f", `{{with .Module}}{{if eq .Path "github.com/luagen/luagen"}}{{$.Dir}}{{end}}{{end}}`, "./runtime/luagenimpl")
	list.Dir = root
	dirs, err := list.Output()
	require.NoError(t, err)

	for _, tc := range []struct {
		name  string
		set   string // the luagenimpl constant changed, "" for none
		value int
		line  int  // the guard line that must fail
		v1    bool // build testdata/version1 rather than ping
	}{
		{"same versions", "", 0, 0, false},
		{"code generated for version 1", "", 0, 0, true},
		{"runtime older than the generated code", "MaxVersion", GenVersion - 1, maxLine, false},
		{"runtime newer than the generated code", "MinVersion", GenVersion + 1, minLine, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			mod := filepath.Join(dir, "luagen")
			for _, d := range strings.Fields(string(dirs)) {
				rel, err := filepath.Rel(root, d)
				require.NoError(t, err)
				copyGoFiles(t, d, filepath.Join(mod, rel))
			}
			for _, f := range []string{"go.mod", "go.sum"} {
				copyFile(t, filepath.Join(root, f), filepath.Join(mod, f))
			}
			if tc.set != "" {
				v := filepath.Join(mod, "runtime", "luagenimpl", "version.go")
				src, err := os.ReadFile(v)
				require.NoError(t, err)
				re := regexp.MustCompile(`(?m)^(\t` + tc.set + ` = )\d+$`)
				require.Len(t, re.FindAll(src, -1), 1, "%s in %s", tc.set, v)
				src = re.ReplaceAll(src, []byte("${1}"+strconv.Itoa(tc.value)))
				require.NoError(t, os.WriteFile(v, src, 0o644))
			}

			app := filepath.Join(dir, "app")
			gomod := "module example.com/app\n\ngo 1.26.0\n\nrequire github.com/luagen/luagen v0.0.0\n\nreplace github.com/luagen/luagen => " + mod + "\n"
			require.NoError(t, os.MkdirAll(filepath.Join(app, "ping"), 0o755))
			require.NoError(t, os.WriteFile(filepath.Join(app, "go.mod"), []byte(gomod), 0o644))
			copyFile(t, filepath.Join(root, "go.sum"), filepath.Join(app, "go.sum"))
			files := out
			if tc.v1 {
				require.LessOrEqual(t, luagenimpl.MinVersion, 1, "MinVersion dropped version 1: remove this case and testdata/version1")
				files = map[string][]byte{}
				for _, name := range []string{"add.lua.go", "scripts.lua.go"} {
					data, err := os.ReadFile(filepath.Join("testdata", "version1", name))
					require.NoError(t, err)
					files[name] = data
				}
			}
			for name, data := range files {
				require.NoError(t, os.WriteFile(filepath.Join(app, "ping", name), data, 0o644))
			}

			cmd := exec.Command(goBin, "build", "./...")
			cmd.Dir = app
			cmd.Env = append(os.Environ(), "GOFLAGS=-mod=mod -buildvcs=false", "GOPROXY=off", "GOWORK=off")
			got, err := cmd.CombinedOutput()
			if tc.line == 0 {
				require.NoError(t, err, "go build:\n%s", got)
				return
			}
			require.Error(t, err, "go build passed with %s = %d", tc.set, tc.value)
			want := fmt.Sprintf("ping/%s:%d:", file, tc.line)
			assert.Contains(t, string(got), want, "go build:\n%s", got)
			// Every error is the guard's: the file fails there and
			// nowhere else (scripts.lua.go holds the same guard).
			errLine := regexp.MustCompile(`^\S+\.go:\d+:\d+: `)
			guard := regexp.MustCompile(`^ping/\S+\.lua\.go:\d+:\d+: constant -1 overflows luagenimpl\.EnforceVersion$`)
			n := 0
			for _, l := range strings.Split(string(got), "\n") {
				if errLine.MatchString(l) {
					n++
					assert.Regexp(t, guard, l)
				}
			}
			assert.Equal(t, 2, n, "one failing guard per generated file:\n%s", got)
		})
	}
}

// lineOf returns the 1-based line of src that is exactly line.
func lineOf(t *testing.T, src []byte, line string) int {
	t.Helper()
	for i, l := range bytes.Split(src, []byte("\n")) {
		if string(l) == line {
			return i + 1
		}
	}
	require.Failf(t, "no guard line", "%q not in:\n%s", line, src)
	return 0
}

// copyGoFiles copies the non-test .go files of the directory from into to.
func copyGoFiles(t *testing.T, from, to string) {
	t.Helper()
	entries, err := os.ReadDir(from)
	require.NoError(t, err)
	require.NoError(t, os.MkdirAll(to, 0o755))
	for _, e := range entries {
		if n := e.Name(); e.Type().IsRegular() && strings.HasSuffix(n, ".go") && !strings.HasSuffix(n, "_test.go") {
			copyFile(t, filepath.Join(from, n), filepath.Join(to, n))
		}
	}
}

func copyFile(t *testing.T, from, to string) {
	t.Helper()
	data, err := os.ReadFile(from)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(to, data, 0o644))
}
