package gen

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/tools/txtar"
)

var update = flag.Bool("update", false, "rewrite the expected output in testdata/golden and testdata/diag")

// archiveConfig reads "pkg: name" and "new: name" lines, and a
// "functions" line (luagen generate -functions) and an "unsafe-keys" line
// (-unsafe-keys), from an archive's comment.
func archiveConfig(a *txtar.Archive) Config {
	cfg := Config{Package: "scripts", New: "New"}
	for _, line := range strings.Split(string(a.Comment), "\n") {
		if v, ok := strings.CutPrefix(line, "pkg: "); ok {
			cfg.Package = strings.TrimSpace(v)
		}
		if v, ok := strings.CutPrefix(line, "new: "); ok {
			cfg.New = strings.TrimSpace(v)
		}
		switch strings.TrimSpace(line) {
		case "functions":
			cfg.Functions = true
		case "unsafe-keys":
			cfg.UnsafeKeys = true
		}
	}
	cfg.Command = "luagen generate ../lua/" + cfg.Package
	if cfg.New != "New" {
		cfg.Command = "luagen generate -new " + cfg.New + " ../lua/" + cfg.Package
	}
	if cfg.UnsafeKeys {
		cfg.Command = strings.Replace(cfg.Command, "generate ", "generate -unsafe-keys ", 1)
	}
	if cfg.Functions {
		cfg.Command = strings.Replace(cfg.Command, "generate ", "generate -functions ", 1)
	}
	return cfg
}

// archiveSources returns the .lua files of an archive as sources of
// lua/<pkg>/: those under lib/ only to be included (---@include), as Load
// would skip a subdirectory, the others as scripts (which can be included
// too).
func archiveSources(a *txtar.Archive, cfg Config) []Source {
	files := map[string][]byte{}
	for _, f := range a.Files {
		files[filepath.ToSlash(filepath.Clean(f.Name))] = f.Data
	}
	read := func(p string) ([]byte, error) {
		if b, ok := files[filepath.ToSlash(filepath.Clean(p))]; ok {
			return b, nil
		}
		return nil, &os.PathError{Op: "open", Path: p, Err: os.ErrNotExist}
	}
	var srcs []Source
	for _, f := range a.Files {
		if strings.HasSuffix(f.Name, ".lua") && !strings.HasPrefix(f.Name, "lib/") && !strings.HasPrefix(f.Name, "includes/") { // included files
			srcs = append(srcs, Source{Path: f.Name, File: "lua/" + cfg.Package + "/" + f.Name, Src: f.Data, ReadInclude: read})
		}
	}
	sort.Slice(srcs, func(i, j int) bool { return srcs[i].Path < srcs[j].Path })
	return srcs
}

func goldenFiles(t *testing.T, dir string) []string {
	files, err := filepath.Glob(filepath.Join("testdata", dir, "*.txtar"))
	require.NoError(t, err)
	require.NotEmpty(t, files)
	return files
}

// TestGolden generates each archive's .lua files and compares the output
// with the archive's .go files; -update rewrites them.
func TestGolden(t *testing.T) {
	for _, file := range goldenFiles(t, "golden") {
		t.Run(strings.TrimSuffix(filepath.Base(file), ".txtar"), func(t *testing.T) {
			a, err := txtar.ParseFile(file)
			require.NoError(t, err)
			cfg := archiveConfig(a)
			out, diags := Generate(archiveSources(a, cfg), cfg)
			require.Empty(t, diags, "diagnostics:\n%s", diags.Error())

			// Generating twice gives the same bytes.
			again, _ := Generate(archiveSources(a, cfg), cfg)
			require.Equal(t, out, again)

			if *update {
				var keep []txtar.File
				for _, f := range a.Files {
					if strings.HasSuffix(f.Name, ".lua") {
						keep = append(keep, f)
					}
				}
				names := make([]string, 0, len(out))
				for n := range out {
					names = append(names, n)
				}
				sort.Strings(names)
				for _, n := range names {
					keep = append(keep, txtar.File{Name: n, Data: out[n]})
				}
				a.Files = keep
				require.NoError(t, os.WriteFile(file, txtar.Format(a), 0o644))
				return
			}
			want := map[string][]byte{}
			for _, f := range a.Files {
				if strings.HasSuffix(f.Name, ".go") {
					want[f.Name] = f.Data
				}
			}
			require.ElementsMatch(t, keys(want), keys(out), "generated file names")
			for n, w := range want {
				assert.Equal(t, string(w), string(out[n]), "%s differs; run go test ./gen -run TestGolden -update", n)
			}
		})
	}
}

func keys(m map[string][]byte) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	return out
}

// TestRealScripts generates lua/stock and lua/lock the way their
// go:generate lines do and compares with the committed packages: the golden
// test for the real scripts, and a guard that nobody edited generated code.
func TestRealScripts(t *testing.T) {
	for _, tc := range []struct{ lua, pkg, dir, new, cmd string }{
		{"stock", "stock", "stock", "New", "luagen generate ../lua/stock"},
		{"lock", "scripts", "lock/internal/scripts", "New", "luagen generate ../../../lua/lock"},
	} {
		t.Run(tc.pkg, func(t *testing.T) {
			lua := tc.lua
			srcs, err := Load([]string{filepath.Join("..", "lua", lua)})
			require.NoError(t, err)
			for i := range srcs {
				assert.Equal(t, "lua/"+lua+"/"+filepath.Base(srcs[i].Path), srcs[i].File)
			}
			out, diags := Generate(srcs, Config{Package: tc.pkg, New: tc.new, Command: tc.cmd})
			require.Empty(t, diags, "diagnostics:\n%s", diags.Error())
			plan, err := Plan(filepath.Join("..", tc.dir), out)
			require.NoError(t, err)
			assert.Empty(t, plan, "run go generate ./%s", tc.dir)
			assert.True(t, bytes.HasPrefix(out[PackageFile], []byte("// Code generated by "+tc.cmd+"; DO NOT EDIT.\n")))
		})
	}
}

func TestFunctionsReserveLibrary(t *testing.T) {
	err := Config{Package: "p", New: "Library", Functions: true}.Check()
	require.Error(t, err)
	assert.Contains(t, err.Error(), "function library")
	require.NoError(t, Config{Package: "p", New: "Library"}.Check())
}
