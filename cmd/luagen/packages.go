package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"go/build"
	"go/parser"
	"go/token"
	"io"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
)

// Package mode: diff and check given Go package patterns (./..., ./lock/...,
// a directory holding no .lua files) run every luagen generate line that
// go generate would run in those packages, with that line's own arguments
// resolved from its package's directory, and print paths relative to the
// current directory.

// isPackageArg reports whether a diff or check argument names Go packages
// rather than scripts: a pattern with "...", or a directory with no .lua
// files in it. A directory of scripts keeps meaning its scripts, as before
// package patterns were accepted (examples/ratelimit's "." is both).
func isPackageArg(arg string) bool {
	if strings.Contains(arg, "...") {
		return true
	}
	if strings.HasSuffix(arg, ".lua") {
		return false
	}
	ents, err := os.ReadDir(arg)
	if err != nil {
		return false // not a directory: gen.Load says what is wrong with it
	}
	for _, e := range ents {
		n := e.Name()
		if !e.IsDir() && strings.HasSuffix(n, ".lua") && !strings.HasPrefix(n, ".") && !strings.HasPrefix(n, "_") {
			return false
		}
	}
	return true
}

// selfGenerating returns the luagen generate lines that name their own
// directory, when every input is a directory whose Go files hold one (a
// package whose scripts sit beside its //go:generate go tool luagen
// generate .): check and diff given no flags then run those lines, with
// their flags, as they do for ./..., instead of checking the scripts with
// none. A user who runs luagen check . there means the package the line
// generates. It returns nil otherwise.
func selfGenerating(inputs []string, getenv func(string) string) []generateLine {
	var all []generateLine
	for _, in := range inputs {
		lines := generatesItself(in, getenv)
		if lines == nil {
			return nil
		}
		all = append(all, lines...)
	}
	return all
}

// generatesItself returns the luagen generate lines in dir's Go files
// that name dir among their inputs, or nil. Files that build constraints
// exclude (with the generate tag set, as go generate lists them) are
// skipped, as go generate skips them.
func generatesItself(dir string, getenv func(string) string) []generateLine {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil
	}
	ents, err := os.ReadDir(dir)
	if err != nil {
		return nil
	}
	wd, _ := os.Getwd()
	var out []generateLine
	for _, e := range ents {
		if e.IsDir() || !strings.HasSuffix(e.Name(), ".go") {
			continue
		}
		file := filepath.Join(abs, e.Name())
		ctx := build.Default
		ctx.BuildTags = append(ctx.BuildTags, "generate") // as go generate lists files
		if ok, err := ctx.MatchFile(abs, e.Name()); err != nil || !ok {
			continue // go generate does not run this file's lines
		}
		lines, err := scanGenerateLines(file, relTo(wd, file), getenv)
		if err != nil {
			continue
		}
		for _, l := range lines {
			_, inputs, err := parseLine(l.args)
			if err != nil {
				continue
			}
			for _, in := range inputs {
				if join(l.dir, in) == abs {
					out = append(out, l)
					break
				}
			}
		}
	}
	return out
}

// listedPackage is what luagen reads of `go list -json`.
type listedPackage struct {
	Dir, ImportPath, Name                        string
	GoFiles, CgoFiles, TestGoFiles, XTestGoFiles []string
	Match                                        []string
	Module                                       *struct{ Main bool }
	Error                                        *struct{ Err string }
}

// listPackages expands patterns with go list as go generate does: the
// build tag "generate" set, dependencies not loaded (-find), every
// package's Go and test files. It runs the go command, not
// golang.org/x/tools/go/packages, which does the same but would add two
// modules (x/sync, x/mod) to the go.mod of every module that pins luagen
// as a tool.
func listPackages(patterns []string) ([]listedPackage, error) {
	args := append([]string{"list", "-e", "-find", "-tags=generate",
		"-json=Dir,ImportPath,Name,GoFiles,CgoFiles,TestGoFiles,XTestGoFiles,Match,Module,Error", "--"}, patterns...)
	cmd := exec.Command("go", args...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("go list: %v\n%s", err, strings.TrimSpace(stderr.String()))
	}
	var pkgs []listedPackage
	for dec := json.NewDecoder(bytes.NewReader(out)); ; {
		var p listedPackage
		if err := dec.Decode(&p); err == io.EOF {
			break
		} else if err != nil {
			return nil, fmt.Errorf("go list: %v", err)
		}
		pkgs = append(pkgs, p)
	}
	return pkgs, nil
}

// generateLine is one //go:generate line that runs luagen generate.
type generateLine struct {
	file      string   // the Go file, as it is shown
	line      int      // 1-based
	dir       string   // the package's directory, absolute
	gopackage string   // $GOPACKAGE: the file's package clause, as go generate sets it
	args      []string // after "luagen generate"
}

func (l generateLine) String() string { return fmt.Sprintf("%s:%d", l.file, l.line) }

// runPackages runs diff or check (name) for the luagen generate lines of
// the packages matching patterns.
func runPackages(e *env, name string, patterns []string) int {
	wd, err := os.Getwd()
	if err != nil {
		fmt.Fprintf(e.stderr, "luagen %s: %v\n", name, err)
		return exitFail
	}
	patterns = slices.Clone(patterns)
	for i, p := range patterns {
		// A directory is a pattern relative to the current directory
		// ("stock" would be an import path, in the standard library).
		if !strings.Contains(p, "...") {
			// go list reports a directory's pattern cleaned (no trailing
			// slash), and matches are looked up by it.
			p = filepath.ToSlash(filepath.Clean(p))
			patterns[i] = p
			if !filepath.IsAbs(p) && !build.IsLocalImport(p) {
				patterns[i] = "./" + p
			}
		}
	}
	pkgs, err := listPackages(patterns)
	if err != nil {
		fmt.Fprintf(e.stderr, "luagen %s: %v\n", name, err)
		return exitFail
	}
	status := exitOK
	fail := func(format string, args ...any) {
		fmt.Fprintf(e.stderr, "luagen %s: "+format+"\n", append([]any{name}, args...)...)
		status = exitFail
	}
	matched := map[string]bool{}
	var lines []generateLine
	for _, p := range pkgs {
		for _, m := range p.Match {
			matched[m] = true
		}
		files := concat(p.GoFiles, p.CgoFiles, p.TestGoFiles, p.XTestGoFiles)
		if p.Error != nil && len(files) == 0 {
			// A pattern that names no directory, or a directory without
			// Go files: go generate stops on it too.
			fail("%s", p.Error.Err)
			continue
		}
		if p.Module != nil && !p.Module.Main {
			continue // go generate leaves packages of dependencies alone
		}
		for _, f := range files {
			ls, err := scanGenerateLines(filepath.Join(p.Dir, f), relTo(wd, filepath.Join(p.Dir, f)), e.getenv)
			if err != nil {
				fail("%v", err)
			}
			lines = append(lines, ls...)
		}
	}
	for _, pat := range patterns {
		if !matched[pat] {
			fail("pattern %s matched no packages", pat)
		}
	}
	if len(lines) == 0 && status == exitOK {
		// Say so rather than pass: a CI check that checks nothing.
		fail("no //go:generate line in the packages matching %s runs luagen generate", strings.Join(patterns, " "))
	}
	if runLines(e, name, wd, lines) != exitOK {
		status = exitFail
	}
	return status
}

// runLines runs check or diff for each luagen generate line, with the
// line's flags and its inputs and output directory taken relative to the
// line's file.
func runLines(e *env, name, wd string, lines []generateLine) int {
	status := exitOK
	fail := func(format string, args ...any) {
		fmt.Fprintf(e.stderr, "luagen %s: "+format+"\n", append([]any{name}, args...)...)
		status = exitFail
	}
	for _, l := range lines {
		f, inputs, err := parseLine(l.args)
		if err != nil {
			fail("%s: %v", l, err)
			continue
		}
		f.out = relTo(wd, join(l.dir, f.out))
		for i, in := range inputs {
			inputs[i] = relTo(wd, join(l.dir, in))
		}
		j := job{cmd: name, flags: f, inputs: inputs, gopackage: l.gopackage, origin: l.String()}
		if j.run(e) != exitOK {
			status = exitFail
		}
	}
	return status
}

// scanGenerateLines returns the luagen generate lines of a Go file, read
// as go generate reads them (cmd/go/internal/generate): every line that
// starts with "//go:generate " split into words with Go's quoting,
// -command shorthands applied and $VARs expanded. shown names the file in
// messages.
func scanGenerateLines(file, shown string, getenv func(string) string) ([]generateLine, error) {
	src, err := os.ReadFile(file)
	if err != nil {
		return nil, err
	}
	if !bytes.Contains(src, []byte("//go:generate")) {
		return nil, nil
	}
	pkgName := ""
	if f, err := parser.ParseFile(token.NewFileSet(), file, src, parser.PackageClauseOnly); err == nil {
		pkgName = f.Name.Name
	}
	shorthands := map[string][]string{}
	var out []generateLine
	for i, text := range strings.Split(string(src), "\n") {
		text = strings.TrimSuffix(text, "\r")
		if !strings.HasPrefix(text, "//go:generate ") && !strings.HasPrefix(text, "//go:generate\t") {
			continue
		}
		n := i + 1
		words, err := splitGenerateLine(text[len("//go:generate "):])
		if err != nil {
			if strings.Contains(text, "luagen") {
				return out, fmt.Errorf("%s:%d: %v", shown, n, err)
			}
			continue // not ours; go generate reports it
		}
		if len(words) > 0 && shorthands[words[0]] != nil {
			words = append(append([]string(nil), shorthands[words[0]]...), words[1:]...)
		}
		vars := map[string]string{
			"GOFILE": filepath.Base(file), "GOLINE": strconv.Itoa(n), "GOPACKAGE": pkgName, "DOLLAR": "$",
			"GOOS": runtime.GOOS, "GOARCH": runtime.GOARCH,
		}
		expand := func(v string) string {
			switch v {
			case "GOFILE", "GOLINE", "GOPACKAGE", "DOLLAR":
				return vars[v]
			}
			if s := getenv(v); s != "" {
				return s
			}
			return vars[v]
		}
		for k, w := range words {
			words[k] = os.Expand(w, expand)
		}
		if len(words) > 1 && words[0] == "-command" {
			shorthands[words[1]] = words[2:]
			continue
		}
		if args, ok := luagenGenerateArgs(words); ok {
			out = append(out, generateLine{file: shown, line: n, dir: filepath.Dir(file), gopackage: pkgName, args: args})
		}
	}
	return out, nil
}

// splitGenerateLine splits a go:generate command into words as go
// generate does: separated by spaces and tabs, a word in double quotes
// unquoted with Go's rules.
func splitGenerateLine(line string) ([]string, error) {
	var words []string
	for {
		line = strings.TrimLeft(line, " \t")
		if line == "" {
			return words, nil
		}
		if line[0] != '"' {
			i := strings.IndexAny(line, " \t")
			if i < 0 {
				i = len(line)
			}
			words = append(words, line[:i])
			line = line[i:]
			continue
		}
		end := -1
		for i := 1; i < len(line) && end < 0; i++ {
			switch line[i] {
			case '\\':
				i++
			case '"':
				end = i + 1
			}
		}
		if end < 0 {
			return nil, errors.New("mismatched quoted string")
		}
		w, err := strconv.Unquote(line[:end])
		if err != nil {
			return nil, errors.New("bad quoted string")
		}
		words = append(words, w)
		line = line[end:]
		if line != "" && line[0] != ' ' && line[0] != '\t' {
			return nil, errors.New("expect space after quoted argument")
		}
	}
}

// luagenGenerateArgs returns the arguments after "generate" when words
// run luagen generate: "go tool luagen", "go tool <path>/luagen",
// "go run [flags] <path>/luagen[@version]", or a luagen binary.
func luagenGenerateArgs(words []string) ([]string, bool) {
	isLuagen := func(p string) bool {
		p, _, _ = strings.Cut(p, "@")
		return path.Base(filepath.ToSlash(p)) == "luagen"
	}
	i := 0
	if len(words) > 2 && words[0] == "go" && (words[1] == "tool" || words[1] == "run") {
		// go run -tags netgo ..., go tool -modfile=x luagen: skip the go
		// command's flags, and the value of those that take one (go help
		// build; go tool takes -modfile).
		i = 2
		for i < len(words) && strings.HasPrefix(words[i], "-") {
			flag := strings.TrimLeft(words[i], "-")
			i++
			if !strings.Contains(flag, "=") && goFlagTakesValue[flag] {
				i++
			}
		}
	}
	if i >= len(words)-1 || !isLuagen(words[i]) || words[i+1] != "generate" {
		return nil, false
	}
	return words[i+2:], true
}

// join resolves p, given in a go:generate line, from the line's package
// directory dir, as go generate, which runs the line there, would.
func join(dir, p string) string {
	if filepath.IsAbs(p) {
		return p
	}
	return filepath.Join(dir, p)
}

// relTo returns abs relative to wd, or abs when it has no relative form.
func relTo(wd, abs string) string {
	if rel, err := filepath.Rel(wd, abs); err == nil {
		return rel
	}
	return abs
}

func concat(lists ...[]string) []string {
	var out []string
	for _, l := range lists {
		out = append(out, l...)
	}
	return out
}

// goFlagTakesValue are the flags of go run and go tool that take a value
// as the next word (the build flags of go help build, and -modfile).
var goFlagTakesValue = map[string]bool{
	"C": true, "p": true, "covermode": true, "coverpkg": true, "asmflags": true, "buildmode": true,
	"buildvcs": false, "compiler": true, "gccgoflags": true, "gcflags": true, "installsuffix": true,
	"ldflags": true, "mod": true, "modfile": true, "overlay": true, "pgo": true, "pkgdir": true,
	"tags": true, "toolexec": true, "exec": true,
}
