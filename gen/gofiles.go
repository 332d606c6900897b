package gen

import (
	"bytes"
	"errors"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
)

// GoFile is a Go file of the output directory: the names it declares at
// top level share the package scope with those luagen generates, so a
// collision would fail go build after a generate that reported nothing.
type GoFile struct {
	Path string // as diagnostics name it, e.g. kv/kv.go
	Src  []byte
}

// LoadGoFiles reads the .go files of the output directory dir for
// Config.GoFiles: all of them but those whose names start with '.' or '_',
// which go build ignores too. Which of them are hand-written files of the
// package is decided by [Generate] (see goDecls). A dir that does not
// exist yet has none.
func LoadGoFiles(dir string) ([]GoFile, error) {
	ents, err := os.ReadDir(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var out []GoFile
	for _, e := range ents {
		n := e.Name()
		if !e.Type().IsRegular() || !strings.HasSuffix(n, ".go") || strings.HasPrefix(n, ".") || strings.HasPrefix(n, "_") {
			continue
		}
		p := filepath.Join(dir, n)
		b, err := os.ReadFile(p)
		if err != nil {
			return nil, err
		}
		out = append(out, GoFile{Path: p, Src: b})
	}
	return out, nil
}

// goDecl is a name a hand-written file declares at top level.
type goDecl struct {
	name   string
	method bool // a method of Scripts; else a package-level name
	file   string
	at     Pos
}

// where is the declaration as diagnostics quote it: kv/kv.go:3:5.
func (d goDecl) where() string { return fmt.Sprintf("%s:%d:%d", d.file, d.at.Line, d.at.Col) }

// what names the declared name as diagnostics quote it: Foo, or
// Scripts.Foo for a method.
func (d goDecl) what() string {
	if d.method {
		return scriptsType + "." + d.name
	}
	return d.name
}

// goDecls returns the top-level names declared by the files that share
// package pkg's scope with the generated ones, and the methods they
// declare on Scripts, in file order. It leaves out generated files (a
// first line "// Code generated", luagen's own among them: they are
// replaced, or are another generator's to check), files of another
// package (an external pkg_test package has its own scope) and files that
// do not parse (go build reports those better).
func goDecls(files []GoFile, pkg string) []goDecl {
	var out []goDecl
	for _, f := range files {
		if bytes.HasPrefix(f.Src, []byte("// Code generated ")) {
			continue
		}
		fset := token.NewFileSet()
		af, err := parser.ParseFile(fset, f.Path, f.Src, parser.SkipObjectResolution)
		if err != nil || af.Name.Name != pkg {
			continue
		}
		add := func(id *ast.Ident, method bool) {
			if id.Name == "_" || id.Name == "init" && !method {
				return // neither declares a name
			}
			p := fset.Position(id.Pos())
			out = append(out, goDecl{name: id.Name, method: method, file: f.Path, at: Pos{p.Line, p.Column}})
		}
		for _, d := range af.Decls {
			switch d := d.(type) {
			case *ast.FuncDecl:
				if d.Recv == nil {
					add(d.Name, false)
				} else if recvName(d.Recv) == scriptsType {
					add(d.Name, true)
				}
			case *ast.GenDecl:
				for _, s := range d.Specs {
					switch s := s.(type) {
					case *ast.TypeSpec:
						add(s.Name, false)
					case *ast.ValueSpec:
						for _, id := range s.Names {
							add(id, false)
						}
					}
				}
			}
		}
	}
	return out
}

// recvName returns the type name of a method's receiver: T for t T, *T
// and T[P].
func recvName(recv *ast.FieldList) string {
	if len(recv.List) == 0 {
		return ""
	}
	t := recv.List[0].Type
	for {
		switch x := t.(type) {
		case *ast.StarExpr:
			t = x.X
		case *ast.ParenExpr:
			t = x.X
		case *ast.IndexExpr:
			t = x.X
		case *ast.IndexListExpr:
			t = x.X
		case *ast.Ident:
			return x.Name
		default:
			return ""
		}
	}
}

// importCollisions reports the package-level names of decls that the
// generated files out import a package under: Go does not allow a name in
// both a file's imports and its package's scope. The imports are read
// from out itself, so only the packages a generated file uses count.
func importCollisions(out map[string][]byte, decls []goDecl) Diagnostics {
	names := make([]string, 0, len(out))
	for n := range out {
		names = append(names, n)
	}
	sort.Strings(names)
	imported := map[string]string{} // package name → the import, in the first file by name
	for _, n := range names {
		af, err := parser.ParseFile(token.NewFileSet(), n, out[n], parser.ImportsOnly)
		if err != nil {
			continue // Generate checked that its output parses
		}
		for _, im := range af.Imports {
			p, _ := strconv.Unquote(im.Path.Value)
			name := path.Base(p)
			if im.Name != nil {
				name = im.Name.Name
			}
			if _, ok := imported[name]; !ok {
				imported[name] = fmt.Sprintf("package %s in the generated %s", p, n)
			}
		}
	}
	var diags Diagnostics
	for _, d := range decls {
		if what, ok := imported[d.name]; ok && !d.method {
			diags = append(diags, Diagnostic{Path: d.file, Pos: d.at, Msg: fmt.Sprintf(
				"%s collides with the import of %s: Go allows no package-level name equal to the name of a file's import; rename it", d.name, what)})
		}
	}
	return diags
}
