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
// so the failures come from the versions alone.
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

	for _, tc := range []struct {
		name  string
		set   string // the luagenimpl constant changed, "" for none
		value int
		line  int // the guard line that must fail
	}{
		{"same versions", "", 0, 0},
		{"runtime older than the generated code", "MaxVersion", GenVersion - 1, maxLine},
		{"runtime newer than the generated code", "MinVersion", GenVersion + 1, minLine},
	} {
		t.Run(tc.name, func(t *testing.T) {
			mod := copyModule(t, goBin, root, tc.set, tc.value)
			got, err := buildApp(t, goBin, mod, map[string]map[string][]byte{"ping": out})
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

// TestVersionsTheRuntimeRuns builds, against this module's runtime, what
// the generator of every version wrote: testdata/version<N>/<archive>/ is
// what the first generator of version N made of its golden archives (see
// testdata/version<N>/SOURCE). Every version from luagenimpl.MinVersion to
// MaxVersion must have its testdata, and all of it builds; a version below
// MinVersion must fail in every file at the file's own guard line, before
// any other error in the file (issue 34: code of the first version-1
// generator was accepted and failed with "unknown field Coalesce in struct
// literal of type runtime.ScriptSpec").
func TestVersionsTheRuntimeRuns(t *testing.T) {
	goBin, root := goCommand(t)
	mod := copyModule(t, goBin, root, "", 0)
	dirs, err := filepath.Glob(filepath.Join("testdata", "version*"))
	require.NoError(t, err)
	have := map[int]string{}
	for _, d := range dirs {
		v, err := strconv.Atoi(strings.TrimPrefix(filepath.Base(d), "version"))
		require.NoError(t, err, "%s: testdata/version<N>", d)
		have[v] = d
	}
	for v := luagenimpl.MinVersion; v <= luagenimpl.MaxVersion; v++ {
		require.Contains(t, have, v, "the runtime runs version %d: add testdata/version%d, written by that version's generator", v, v)
	}
	for v, dir := range have {
		t.Run(filepath.Base(dir), func(t *testing.T) {
			pkgs := map[string]map[string][]byte{}
			guards := map[string]int{} // file → line of its MinVersion guard
			archives, err := os.ReadDir(dir)
			require.NoError(t, err)
			for _, a := range archives {
				if !a.IsDir() {
					continue
				}
				files, err := filepath.Glob(filepath.Join(dir, a.Name(), "*.go"))
				require.NoError(t, err)
				pkg := map[string][]byte{}
				for _, f := range files {
					data, err := os.ReadFile(f)
					require.NoError(t, err)
					pkg[filepath.Base(f)] = data
					guards[a.Name()+"/"+filepath.Base(f)] = lineOf(t, data, fmt.Sprintf("const _ = luagenimpl.EnforceVersion(%d - luagenimpl.MinVersion)", v))
				}
				pkgs[a.Name()] = pkg
			}
			require.NotEmpty(t, pkgs)
			got, err := buildApp(t, goBin, mod, pkgs)
			if v >= luagenimpl.MinVersion && v <= luagenimpl.MaxVersion {
				require.NoError(t, err, "go build of version %d code:\n%s", v, got)
				return
			}
			require.Error(t, err, "go build passed with version %d code", v)
			// The first error of every file is its guard's.
			errLine := regexp.MustCompile(`^(\S+\.go):(\d+):\d+: (.*)$`)
			first := map[string]string{}
			for _, l := range strings.Split(string(got), "\n") {
				if m := errLine.FindStringSubmatch(l); m != nil {
					if _, ok := first[m[1]]; !ok {
						first[m[1]] = m[2] + ": " + m[3]
					}
				}
			}
			want := map[string]string{}
			for f, line := range guards {
				want[f] = strconv.Itoa(line) + ": constant -1 overflows luagenimpl.EnforceVersion"
			}
			assert.Equal(t, want, first, "go build:\n%s", got)
		})
	}
}

// copyModule copies the packages of this module (at root) that luagenimpl
// needs into a temporary directory, with luagenimpl's constant set (when
// not "") changed to value, and returns the copy's directory.
func copyModule(t *testing.T, goBin, root, set string, value int) string {
	t.Helper()
	list := exec.Command(goBin, "list", "-deps", "-f", `{{with .Module}}{{if eq .Path "github.com/luagen/luagen"}}{{$.Dir}}{{end}}{{end}}`, "./runtime/luagenimpl")
	list.Dir = root
	dirs, err := list.Output()
	require.NoError(t, err)
	mod := filepath.Join(t.TempDir(), "luagen")
	for _, d := range strings.Fields(string(dirs)) {
		rel, err := filepath.Rel(root, d)
		require.NoError(t, err)
		copyGoFiles(t, d, filepath.Join(mod, rel))
	}
	for _, f := range []string{"go.mod", "go.sum"} {
		copyFile(t, filepath.Join(root, f), filepath.Join(mod, f))
	}
	if set != "" {
		v := filepath.Join(mod, "runtime", "luagenimpl", "version.go")
		src, err := os.ReadFile(v)
		require.NoError(t, err)
		re := regexp.MustCompile(`(?m)^(\t` + set + ` = )\d+$`)
		require.Len(t, re.FindAll(src, -1), 1, "%s in %s", set, v)
		src = re.ReplaceAll(src, []byte("${1}"+strconv.Itoa(value)))
		require.NoError(t, os.WriteFile(v, src, 0o644))
	}
	return mod
}

// buildApp writes pkgs (directory → file name → content) into a new
// module that requires the luagen module at mod, runs go build ./... in it
// and returns its output, with paths relative to the module's root.
func buildApp(t *testing.T, goBin, mod string, pkgs map[string]map[string][]byte) ([]byte, error) {
	t.Helper()
	app := filepath.Join(t.TempDir(), "app")
	gomod := "module example.com/app\n\ngo 1.26.0\n\nrequire github.com/luagen/luagen v0.0.0\n\nreplace github.com/luagen/luagen => " + mod + "\n"
	require.NoError(t, os.MkdirAll(app, 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(app, "go.mod"), []byte(gomod), 0o644))
	copyFile(t, filepath.Join(mod, "go.sum"), filepath.Join(app, "go.sum"))
	for dir, files := range pkgs {
		require.NoError(t, os.MkdirAll(filepath.Join(app, dir), 0o755))
		for name, data := range files {
			require.NoError(t, os.WriteFile(filepath.Join(app, dir, name), data, 0o644))
		}
	}
	cmd := exec.Command(goBin, "build", "./...")
	cmd.Dir = app
	cmd.Env = append(os.Environ(), "GOFLAGS=-mod=mod -buildvcs=false", "GOPROXY=off", "GOWORK=off")
	return cmd.CombinedOutput()
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
