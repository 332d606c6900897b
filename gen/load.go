package gen

import (
	"errors"
	"fmt"
	"io"
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
// when there is none. Source.ReadInclude reads the files include lines
// name: regular files of at most 1 MiB inside that module, symbolic links
// resolved (see includeReader); they are not scripts, so a directory keeps them in a
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
		root := moduleDir(abs)
		srcs = append(srcs, Source{Path: p, File: relativeTo(root, abs, p), Src: b, ReadInclude: includeReader(root)})
	}
	return srcs, nil
}

// maxInclude is the largest file an include line may name: far above any
// real helper (BullMQ's largest is 9 KB), far below what would take the
// generator down.
const maxInclude = 1 << 20

// includeReader returns the Source.ReadInclude of a script in the module
// at root (see moduleDir): it reads a regular file of at most maxInclude
// bytes inside root, after resolving symbolic links. An include
// could otherwise make the generated code depend on a file nobody reviews
// (../../../../x.lua, a link in lib/ pointing outside), or hang or exhaust
// the generator, and a project's CI with it (a named pipe, /dev/zero).
func includeReader(root string) func(string) ([]byte, error) {
	if real, err := filepath.EvalSymlinks(root); err == nil {
		root = real
	}
	return func(p string) ([]byte, error) {
		real, err := filepath.EvalSymlinks(p)
		if err != nil {
			var pe *os.PathError
			if errors.As(err, &pe) {
				err = pe.Err // name the file asked for, not the part that is missing
			}
			return nil, &os.PathError{Op: "open", Path: p, Err: err}
		}
		if real, err = filepath.Abs(real); err != nil {
			return nil, err
		}
		if rel, err := filepath.Rel(root, real); err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
			where := "it is " + real
			if real != p {
				where = "it resolves to " + real
			}
			return nil, fmt.Errorf("%s, outside the module (%s): the generated code would depend on a file the module does not hold", where, root)
		}
		fi, err := os.Stat(real)
		if err != nil {
			return nil, err
		}
		if !fi.Mode().IsRegular() {
			return nil, fmt.Errorf("not a regular file (%s)", fi.Mode().Type())
		}
		if fi.Size() > maxInclude {
			return nil, fmt.Errorf("%d bytes, more than the %d an included file may have", fi.Size(), maxInclude)
		}
		f, err := os.Open(real)
		if err != nil {
			return nil, err
		}
		defer f.Close()
		// The file may have grown since Stat: read one byte past the bound.
		b, err := io.ReadAll(io.LimitReader(f, maxInclude+1))
		if err == nil && len(b) > maxInclude {
			err = fmt.Errorf("more than the %d bytes an included file may have", maxInclude)
		}
		return b, err
	}
}

// moduleDir returns the nearest directory above abs holding go.mod, or the
// current directory (where go generate runs) when there is none: the
// module the generated code records files relative to and includes stay
// inside.
func moduleDir(abs string) string {
	for dir := filepath.Dir(abs); ; dir = filepath.Dir(dir) {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir
		}
		if filepath.Dir(dir) == dir {
			wd, _ := os.Getwd()
			return wd
		}
	}
}

// relativeTo returns abs relative to root with forward slashes, so that
// no absolute path is recorded, or given when it has no such path.
func relativeTo(root, abs, given string) string {
	if rel, err := filepath.Rel(root, abs); err == nil && root != "" {
		return filepath.ToSlash(rel)
	}
	return filepath.ToSlash(given)
}
