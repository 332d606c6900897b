package gen

import (
	"fmt"
	"go/build"
	"go/token"
	"go/types"
	"io"
	"path"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Config says how to generate one Go package.
type Config struct {
	// Package is the Go package name of the output.
	Package string
	// New is the name of the constructor of Scripts; "" means "New".
	New string
	// Command is the command that regenerates the output, recorded in the
	// first line of every generated file, e.g. "luagen generate ../lua/stock".
	Command string
	// Version is luagen's version, recorded under the first line as sqlc
	// records its own: a module version such as "v0.4.0", or "(devel)"
	// (also what "" means) for a build from a checkout. It must not vary
	// between machines, or the generated files would.
	Version string
	// Functions also compiles the scripts into one Redis function library
	// (see library.go): calls use FCALL where the executor supports it.
	Functions bool
	// UnsafeKeys says that keys are the callers' business for every
	// script of the package (luagen generate -unsafe-keys): they run on
	// one node, or their callers keep each call's keys on one slot. Each
	// script is checked as if its header said ---@unsafe-keys, so the
	// cluster-safety lint and the check that a script's keys share a hash
	// slot are off; a script's own ---@unsafe-keys line is then
	// redundant and accepted. The run-time slot check stays.
	UnsafeKeys bool
	// GoFiles are the Go files of the output directory (see
	// [LoadGoFiles]); the names its hand-written files declare are
	// checked against those luagen generates.
	GoFiles []GoFile
}

// DevelVersion is the version recorded for a luagen built from a checkout
// rather than from a module version: the word Go itself uses for it
// (runtime/debug.BuildInfo).
const DevelVersion = "(devel)"

func (c Config) version() string {
	if c.Version == "" {
		return DevelVersion
	}
	return c.Version
}

// ConfigError is a Config field that cannot give a package that compiles.
type ConfigError struct {
	Field  string // "Package" or "New"
	Value  string
	Reason string
}

func (e *ConfigError) Error() string {
	what := "package name"
	if e.Field == "New" {
		what = "constructor name"
	}
	return fmt.Sprintf("%s %q %s", what, e.Value, e.Reason)
}

// importNames are the package names the generated files import; a
// package-level name equal to one does not compile.
var importNames = []string{"context", "luagenimpl", "runtime", "strconv", "time"}

// Check reports a package or constructor name the generated code could not
// be compiled with, as a *ConfigError. An empty New means "New".
func (c Config) Check() error {
	bad := func(field, value, reason string) error {
		return &ConfigError{Field: field, Value: value, Reason: reason}
	}
	switch {
	case !token.IsIdentifier(c.Package):
		return bad("Package", c.Package, "is not a Go identifier")
	case c.Package == "_":
		return bad("Package", c.Package, "is not allowed: _ is the blank identifier")
	}
	n := c.New
	switch {
	case n == "":
		return nil
	case !token.IsIdentifier(n):
		return bad("New", n, "is not a Go identifier")
	case n == "_":
		return bad("New", n, "cannot be called: _ is the blank identifier")
	case n == scriptsType:
		return bad("New", n, "is taken by the Scripts type luagen generates")
	case n == allFunc:
		return bad("New", n, "is taken by the All variable luagen generates")
	case c.Functions && (n == libraryFunc || n == libraryVar):
		return bad("New", n, "is taken by the function library luagen -functions generates")
	case n == "main" && c.Package == "main":
		return bad("New", n, "is reserved in package main: func main takes no arguments")
	}
	if reason := reservedReason(n); reason != "" {
		return bad("New", n, reason)
	}
	return nil
}

// reservedReason says why a package-level name the generated code declares
// would break it in any package although the name is a Go identifier: init
// is Go's, and a predeclared name or an imported package would be hidden
// from the generated files. It returns "" for any other name. main, which
// only package main reserves, is the caller's to check.
func reservedReason(n string) string {
	switch {
	case n == "init":
		return "is reserved: Go calls func init itself, and it takes no arguments"
	case types.Universe.Lookup(n) != nil:
		return "would shadow Go's predeclared " + n + " in the whole package"
	case slices.Contains(importNames, n):
		return "is the name of package " + n + ", which the generated files import"
	}
	return ""
}

// Source is one .lua input.
type Source struct {
	Path string // as the user named it; used in diagnostics
	File string // relative to the module root (outside a module, to the current directory), forward slashes; recorded in ScriptSpec.File
	Src  []byte
	// ReadInclude reads a file an ---@include line names, given its path
	// joined with Path's directory (see include.go); [Load] sets it to
	// os.ReadFile. Without it an ---@include is a diagnostic. [Generate]
	// reads each included path once, for all the scripts that include it.
	ReadInclude func(path string) ([]byte, error)
}

// PackageFile is the name of the generated file that holds Scripts, the
// constructor, All and Preload.
const PackageFile = "scripts.lua.go"

// OutputName returns the generated file name for a script:
// deduct.lua → deduct.lua.go.
func OutputName(luaPath string) string { return scriptFileName(luaPath) + ".go" }

// scriptFileName returns the file name of a script's path, with either
// separator on any platform: deduct.lua.
func scriptFileName(luaPath string) string {
	return path.Base(strings.ReplaceAll(luaPath, "\\", "/"))
}

// Generate parses and checks every source and, when nothing is wrong,
// returns the generated files by name: one <file>.lua.go per script and
// PackageFile. It never touches the file system; see [Write] and [Plan].
// With diagnostics it returns no files.
//
// A Config that fails [Config.Check] gives one Diagnostic without a path
// or position.
func Generate(srcs []Source, cfg Config) (map[string][]byte, Diagnostics) {
	if cfg.New == "" {
		cfg.New = "New"
	}
	if err := cfg.Check(); err != nil {
		return nil, Diagnostics{{Msg: err.Error()}}
	}
	var diags Diagnostics
	var scripts []*Script
	incs := includeCache{} // a file several scripts include is read and checked once
	for _, src := range srcs {
		s, ds, _ := parseSource(src, incs, cfg.UnsafeKeys)
		diags = append(diags, ds...)
		if cfg.Functions && s != nil {
			diags = append(diags, s.functionLimits...)
		}
		scripts = append(scripts, s)
	}
	fams, ds := checkFamilies(scripts)
	diags = append(diags, ds...)
	diags = append(diags, familyNames(fams)...)
	decls := goDecls(cfg.GoFiles, cfg.Package)
	diags = append(diags, checkPackage(scripts, cfg, decls)...)
	diags = append(diags, checkIncluded(scripts)...)
	if len(diags) > 0 {
		return nil, diags.Sort()
	}
	pkg := newPackage(scripts)
	pkg.families = fams
	out := map[string][]byte{}
	for _, s := range scripts {
		b, err := emitScript(s, cfg, pkg)
		if err != nil {
			// jennifer's output failed go/format: a generator bug, not a user
			// error, but report it where the user can see which script.
			return nil, Diagnostics{{Path: s.Path, Pos: Pos{1, 1}, Msg: bugMessage(err)}}
		}
		out[OutputName(s.Path)] = b
	}
	b, err := emitPackage(scripts, cfg, pkg)
	if err != nil {
		return nil, Diagnostics{{Path: srcs[0].Path, Pos: Pos{1, 1}, Msg: bugMessage(err)}}
	}
	out[PackageFile] = b
	if ds := importCollisions(out, decls); len(ds) > 0 {
		return nil, ds.Sort()
	}
	return out, nil
}

// vetMethods are the method names go vet's stdmethods analyzer checks
// whatever their parameters, with the signature it wants. A script with
// one of these names would make the package fail go vet.
var vetMethods = map[string]string{
	"GobDecode":     "([]byte) error",
	"GobEncode":     "() ([]byte, error)",
	"MarshalJSON":   "() ([]byte, error)",
	"MarshalXML":    "(*xml.Encoder, xml.StartElement) error",
	"ReadByte":      "() (byte, error)",
	"ReadRune":      "() (rune, int, error)",
	"UnmarshalJSON": "([]byte) error",
	"UnmarshalXML":  "(*xml.Decoder, xml.StartElement) error",
	"UnreadByte":    "() error",
	"UnreadRune":    "() error",
	"WriteByte":     "(byte) error",
}

// bugMessage is the one-line diagnostic for output that go/format
// refused; jennifer's error goes on with the whole source, which would
// break the one-problem-a-line format.
func bugMessage(err error) string {
	first, _, _ := strings.Cut(err.Error(), "\n")
	return "luagen bug: the generated Go does not parse (" + strings.TrimSuffix(first, " while formatting source:") + "); please report it with this script"
}

// symbol is a Go name the generated package declares, and where from.
type symbol struct {
	s   *Script
	at  Pos
	tag string  // what declared it, e.g. "---@error nil NotHeld"
	gd  *goDecl // declared by a hand-written file of the package instead
}

// checkPackage reports generated names that collide across the package:
// two scripts with one name, two sentinels with one name, a tuple named
// like another script's Keys type, output file names, and names that the
// package's hand-written files (decls, from cfg.GoFiles) declare too.
func checkPackage(scripts []*Script, cfg Config, decls []goDecl) Diagnostics {
	var diags Diagnostics
	pkgScope := map[string]symbol{}
	methods := map[string]symbol{}
	files := map[string]symbol{} // by foldName of the output name; tag is the output name
	errDecls := map[string]declaredError{}
	famSeen := map[string]bool{}
	builtin := symbol{tag: "luagen"}
	for _, n := range packageDecls(cfg) {
		pkgScope[n] = builtin
	}
	pkgScope[cfg.New] = symbol{tag: "constructor"}
	methods[preloadMethod] = builtin
	// The hand-written files' names come next: one that luagen declares
	// itself is reported at the Go file, the others where a script
	// generates them (add).
	for _, d := range decls {
		scope, what := pkgScope, d.what()
		if d.method {
			scope = methods
		}
		switch prev, ok := scope[d.name]; {
		case ok && prev.gd != nil:
			// Declared twice by hand: go build says so.
		case ok && prev.tag == "constructor":
			diags = append(diags, Diagnostic{Path: d.file, Pos: d.at, Msg: fmt.Sprintf(
				"%s collides with the constructor of Scripts that luagen generates in %s (luagen -new %s); rename it, or choose another -new", what, PackageFile, cfg.New)})
		case ok:
			diags = append(diags, Diagnostic{Path: d.file, Pos: d.at, Msg: fmt.Sprintf(
				"%s collides with the %s that luagen generates in %s; rename it", what, what, PackageFile)})
		default:
			scope[d.name] = symbol{gd: &d}
		}
	}
	add := func(scope map[string]symbol, name string, sym symbol) bool {
		if prev, ok := scope[name]; ok {
			msg := fmt.Sprintf("%s (from %s) is already declared", name, sym.tag)
			switch {
			case prev.gd != nil:
				what := prev.gd.what()
				msg = fmt.Sprintf("%s's generated %s collides with %s declared at %s", scriptFileName(sym.s.Path), what, what, prev.gd.where())
			case prev.s == nil && prev.tag == "constructor":
				msg += " as the name of the constructor of Scripts (luagen -new); choose another name, or another -new"
			case prev.s == nil:
				msg += " by luagen itself; choose another name"
			default:
				msg += fmt.Sprintf(" by %s:%d:%d (%s); generated names must be unique in the package", prev.s.Path, prev.at.Line, prev.at.Col, prev.tag)
			}
			diags = append(diags, Diagnostic{Path: sym.s.Path, Pos: sym.at, Msg: msg})
			return false
		}
		scope[name] = sym
		return true
	}
	for _, s := range scripts {
		sym := func(at Pos, tag string) symbol { return symbol{s: s, at: at, tag: tag} }
		n := namesOf(s)
		from := nameTag(s)
		out := OutputName(s.Path)
		switch prev, taken := files[foldName(out)]; {
		case strings.EqualFold(out, PackageFile):
			msg := "the file name " + path.Base(s.Path) + " is reserved: luagen writes the package's " + PackageFile
			if out != PackageFile {
				msg += ", and Go refuses a package with file names that differ only in case"
			}
			diags = append(diags, Diagnostic{Path: s.Path, Pos: Pos{1, 1}, Msg: msg})
		case taken && prev.tag == out:
			diags = append(diags, Diagnostic{Path: s.Path, Pos: Pos{1, 1}, Msg: fmt.Sprintf(
				"%s (from the file name) is already declared by %s:1:1 (the file name); generated names must be unique in the package", out, prev.s.Path)})
		case taken:
			diags = append(diags, Diagnostic{Path: s.Path, Pos: Pos{1, 1}, Msg: fmt.Sprintf(
				"the output %s differs from %s (from %s) only in case: go build refuses the package (\"case-insensitive file name collision\"), and a case-insensitive file system keeps one of the two; rename a script",
				out, prev.tag, prev.s.Path)})
		default:
			files[foldName(out)] = symbol{s: s, at: Pos{1, 1}, tag: out}
		}
		if msg := goFileProblem(out); msg != "" {
			diags = append(diags, Diagnostic{Path: s.Path, Pos: Pos{1, 1}, Msg: msg})
		}
		if sig := vetMethods[n.Method]; sig != "" {
			diags = append(diags, Diagnostic{Path: s.Path, Pos: s.NamePos, Msg: fmt.Sprintf(
				"%s (from %s) would be a method of Scripts that go vet requires to have the standard signature %s%s; choose another name",
				n.Method, from, n.Method, sig)})
		}
		// When the script's name collides, the names derived from it collide
		// too; one report is enough.
		if add(methods, n.Method, sym(s.NamePos, from)) {
			for _, d := range n.fromName(s) {
				scope := pkgScope
				if d.method {
					scope = methods
				}
				add(scope, d.name, sym(d.at, d.tag))
			}
		}
		for _, f := range s.Families {
			if famSeen[f.Type] {
				continue // declared again; checkFamilies compares the two
			}
			famSeen[f.Type] = true
			tag := "---@keys " + f.Type + " " + f.Ctor + " " + f.Layout()
			if cfg.Package == "main" {
				for _, d := range []struct {
					name, what string
					at         Pos
				}{{f.Type, "type", f.Pos}, {f.Ctor, "constructor", f.CtorPos}} {
					if d.name == "main" {
						diags = append(diags, Diagnostic{Path: s.Path, Pos: d.at, Msg: fmt.Sprintf(
							"---@keys %s name \"main\" is reserved in package main: Go's main there is a func without arguments; choose another name", d.what)})
					}
				}
			}
			add(pkgScope, f.Type, sym(f.Pos, tag))
			add(pkgScope, f.Ctor, sym(f.CtorPos, tag))
		}
		if n.Tuple != "" {
			add(pkgScope, n.Tuple, sym(s.Return.Pos, "---@return tuple "+n.Tuple))
		}
		for i, e := range s.Errors {
			name := n.Errors[i]
			if prev, ok := errDecls[name]; ok {
				diags = append(diags, sameError(s, e, prev)...)
				continue
			}
			if add(pkgScope, name, sym(e.NamePos, "---@error "+e.Value+" "+e.Name)) {
				errDecls[name] = declaredError{s, e}
			}
		}
	}
	return diags
}

// declaredError is the first ---@error of a name in the package.
type declaredError struct {
	s *Script
	r *Reply
}

// sameError checks that e, declared by s, means what the first ---@error
// of its name, prev, means: the same reply value and the same description
// (or none, which takes prev's). Then the scripts share one sentinel.
func sameError(s *Script, e *Reply, prev declaredError) Diagnostics {
	switch {
	case e.Value != prev.r.Value:
		return Diagnostics{{Path: s.Path, Pos: e.ValuePos, Msg: fmt.Sprintf(
			"error %s is %s here but %s in %s: scripts of one package share a sentinel per error name, so its value must be the same; rename one of them",
			e.Name, e.Value, prev.r.Value, where(prev.s, prev.r.ValuePos))}}
	case e.Desc != "" && prev.r.Desc != "" && e.Desc != prev.r.Desc:
		return Diagnostics{{Path: s.Path, Pos: e.NamePos, Msg: fmt.Sprintf(
			"error %s is described differently in %s (%q): scripts of one package share one sentinel, and so one message; repeat that description word for word, or leave this one empty",
			e.Name, where(prev.s, prev.r.NamePos), prev.r.Desc)}}
	}
	return nil
}

// foldName returns a form of s that is equal for two strings exactly when
// strings.EqualFold says they are: each rune becomes the smallest rune of
// its case-folding orbit. The go command rejects packages with two such
// file names.
func foldName(s string) string {
	var b strings.Builder
	for _, r := range s {
		for {
			next := unicode.SimpleFold(r)
			if next <= r {
				r = next
				break
			}
			r = next
		}
		b.WriteRune(r)
	}
	return b.String()
}

// anywhere is a build context that no file-name constraint matches, so a
// generated file it rejects would be left out on some platform.
var anywhere = func() *build.Context {
	c := build.Default
	c.GOOS, c.GOARCH = "luagen", "luagen"
	c.BuildTags, c.ToolTags, c.ReleaseTags = nil, nil, nil
	c.OpenFile = func(string) (io.ReadCloser, error) {
		return io.NopCloser(strings.NewReader("package p\n")), nil
	}
	return &c
}()

// goFileProblem says why the go command would not build the generated file
// name on every platform, or returns "".
func goFileProblem(name string) string {
	c := name[0]
	switch {
	case !utf8.ValidString(name):
		return "the file name " + commentSafe(name) + " is not valid UTF-8, and the go command cannot open such a file; rename the script"
	case c == '_' || c == '.':
		return fmt.Sprintf("go build ignores files whose names start with %q, so %s would be left out of the package; rename the script", c, name)
	case !('0' <= c && c <= '9' || 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || c >= 0x80):
		return fmt.Sprintf("go build refuses a file name that starts with %q (\"invalid input file name %s\"); rename the script", c, name)
	}
	if ok, err := anywhere.MatchFile(".", name); err == nil && !ok {
		suffix := constraintSuffix(name)
		return fmt.Sprintf("go build reads the %s in %s as a build constraint, so the file would build only for %s; rename the script",
			suffix, name, strings.ReplaceAll(suffix[1:], "_", "/"))
	}
	return ""
}

// constraintSuffix returns the _GOOS, _GOARCH or _GOOS_GOARCH suffix of
// the part of name before its first dot, which go/build matches against
// the target platform.
func constraintSuffix(name string) string {
	stem, _, _ := strings.Cut(name, ".")
	words := strings.Split(stem, "_")
	if n := len(words); n > 1 && words[n-1] == "test" {
		words = words[:n-1]
	}
	constrains := func(w string) bool {
		ok, err := anywhere.MatchFile(".", "x_"+w+".go")
		return err == nil && !ok
	}
	n := len(words)
	if n >= 3 && constrains(words[n-2]) && constrains(words[n-1]) {
		return "_" + words[n-2] + "_" + words[n-1]
	}
	return "_" + words[n-1]
}
