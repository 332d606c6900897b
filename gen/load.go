package gen

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

// Load reads the scripts named by args: each a .lua file, or a directory
// whose *.lua files (not its subdirectories, and not files whose names
// start with '.' or '_', which go build ignores too) are taken in name
// order.
// Source.Path keeps the path as given (joined with the file name for a
// directory); Source.File is relative to the module root, found by looking
// for go.mod upward from the file, or relative to the current directory
// when there is none. Source.ReadInclude reads the files ---@include lines
// name (os.ReadFile); they are not scripts, so a directory keeps them in a
// subdirectory or under a name starting with '_'.
func Load(args []string) ([]Source, error) {
	var paths []string
	for _, a := range args {
		fi, err := os.Stat(a)
		if err != nil {
			return nil, err
		}
		if !fi.IsDir() {
			if !strings.HasSuffix(a, ".lua") {
				return nil, fmt.Errorf("%s: not a .lua file", a)
			}
			paths = append(paths, a)
			continue
		}
		ents, err := os.ReadDir(a)
		if err != nil {
			return nil, err
		}
		var found []string
		for _, e := range ents {
			n := e.Name()
			if strings.HasPrefix(n, ".") || strings.HasPrefix(n, "_") {
				continue // as go build does: editor lock files (.#x.lua), drafts
			}
			if !e.IsDir() && strings.HasSuffix(n, ".lua") {
				found = append(found, filepath.Join(a, e.Name()))
			}
		}
		if len(found) == 0 {
			return nil, fmt.Errorf("%s: no .lua files", a)
		}
		sort.Strings(found)
		paths = append(paths, found...)
	}
	seen := map[string]bool{}
	var srcs []Source
	for _, p := range paths {
		abs, err := filepath.Abs(p)
		if err != nil {
			return nil, err
		}
		if seen[abs] {
			continue
		}
		seen[abs] = true
		b, err := os.ReadFile(p)
		if err != nil {
			return nil, err
		}
		srcs = append(srcs, Source{Path: p, File: moduleRelative(abs, p), Src: b, ReadInclude: os.ReadFile})
	}
	return srcs, nil
}

// moduleRelative returns abs relative to the nearest directory above it
// holding go.mod, with forward slashes.
func moduleRelative(abs, given string) string {
	for dir := filepath.Dir(abs); ; dir = filepath.Dir(dir) {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			if rel, err := filepath.Rel(dir, abs); err == nil {
				return filepath.ToSlash(rel)
			}
		}
		if filepath.Dir(dir) == dir {
			// No module: relative to the current directory (where go
			// generate runs), so that no absolute path is recorded.
			if wd, err := os.Getwd(); err == nil {
				if rel, err := filepath.Rel(wd, abs); err == nil {
					return filepath.ToSlash(rel)
				}
			}
			return filepath.ToSlash(given)
		}
	}
}
