package main

import (
	"flag"
	"fmt"
	"go/token"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/luagen/luagen/gen"
)

func init() {
	register(&command{
		name:  "generate",
		args:  "[-pkg name] [-new name] [-out dir] [-functions] dir|file.lua...",
		short: "write the Go package for the scripts",
		run:   func(e *env, args []string) int { return runGenerate(e, "generate", args) },
	})
	register(&command{
		name:  "diff",
		args:  "[-pkg name] [-new name] [-out dir] [-functions] dir|file.lua...",
		short: "report generated files that are missing, stale or extra (exit 1 if any)",
		run:   func(e *env, args []string) int { return runGenerate(e, "diff", args) },
	})
	register(&command{
		name:  "check",
		args:  "[-new name] [-functions] dir|file.lua...",
		short: "check the scripts' annotations and Lua, generating nothing",
		run:   func(e *env, args []string) int { return runGenerate(e, "check", args) },
	})
}

// genFlags are the flags of generate and diff; check takes -new and
// -functions only (the latter adds function mode's checks).
type genFlags struct {
	pkg, newName, out string
	functions         bool
}

func (f *genFlags) register(fs *flag.FlagSet, full bool) {
	fs.StringVar(&f.newName, "new", "New", "`name` of the generated constructor of Scripts")
	fs.BoolVar(&f.functions, "functions", false, "also compile the scripts into one Redis function library; calls use FCALL where the executor runs functions")
	if full {
		fs.StringVar(&f.pkg, "pkg", "", "Go package `name` (default $GOPACKAGE, else the output directory's name)")
		fs.StringVar(&f.out, "out", ".", "output `dir`ectory")
	}
}

func runGenerate(e *env, name string, args []string) int {
	fs := newFlagSet(e, name)
	var f genFlags
	f.register(fs, name != "check")
	for _, a := range args {
		if a == "-revision" || a == "--revision" || strings.HasPrefix(a, "-revision=") || strings.HasPrefix(a, "--revision=") {
			fmt.Fprintf(e.stderr, "luagen %s: -revision is gone: a function library is named by a hash of its scripts, "+
				"so a changed script is a new version with no number to raise (see runtime.Library); remove -revision from the command\n", name)
			return exitUsage
		}
	}
	inputs, status, ok := parseFlags(fs, args)
	if !ok {
		return status
	}
	for _, in := range inputs {
		if len(in) > 1 && in[0] == '-' {
			fmt.Fprintf(e.stderr, "luagen %s: flag %s after the scripts: flags go before them\n", name, strings.SplitN(in, "=", 2)[0])
			return exitUsage
		}
	}
	if len(inputs) == 0 {
		fmt.Fprintf(e.stderr, "luagen %s: no scripts: name .lua files or directories\n", name)
		fs.Usage()
		return exitUsage
	}
	outAbs, err := filepath.Abs(f.out)
	if err != nil {
		fmt.Fprintf(e.stderr, "luagen %s: %v\n", name, err)
		return exitFail
	}
	dirPkg := packageName(filepath.Base(outAbs))
	pkg := f.pkg
	if pkg == "" {
		pkg = e.getenv("GOPACKAGE")
	}
	if pkg == "" {
		pkg = dirPkg
	}
	if f.newName == "" {
		fmt.Fprintf(e.stderr, "luagen %s: -new needs a name; leave it out for New\n", name)
		return exitUsage
	}
	if err := (gen.Config{Package: pkg, New: f.newName, Functions: f.functions}).Check(); err != nil {
		flag := "-new"
		if ce, ok := err.(*gen.ConfigError); ok && ce.Field == "Package" {
			flag = "-pkg"
		}
		fmt.Fprintf(e.stderr, "luagen %s: %v; choose another with %s\n", name, err, flag)
		return exitUsage
	}
	srcs, err := gen.Load(inputs)
	if err != nil {
		fmt.Fprintf(e.stderr, "luagen %s: %v\n", name, err)
		return exitFail
	}
	cfg := gen.Config{Package: pkg, New: f.newName, Functions: f.functions,
		Command: headerCommand(pkg, dirPkg, f.newName, f.functions, outAbs, inputs), Version: version()}
	files, diags := gen.Generate(srcs, cfg)
	if len(diags) > 0 {
		for _, d := range diags {
			fmt.Fprintln(e.stderr, d)
		}
		return exitFail
	}
	switch name {
	case "check":
		return exitOK
	case "diff":
		plan, err := gen.Plan(f.out, files)
		if err != nil {
			fmt.Fprintf(e.stderr, "luagen diff: %v\n", err)
			return exitFail
		}
		for _, c := range plan {
			fmt.Fprintf(e.stdout, "%s: %s\n", filepath.Join(f.out, c.Name), c.Kind)
		}
		if len(plan) > 0 {
			return exitFail
		}
		return exitOK
	}
	if _, err := gen.Write(f.out, files); err != nil {
		for _, line := range strings.Split(err.Error(), "\n") {
			fmt.Fprintf(e.stderr, "luagen generate: %s\n", line)
		}
		return exitFail
	}
	return exitOK
}

// headerCommand is the command recorded in generated files: the generate
// command that reproduces them when run in the output directory.
func headerCommand(pkg, dirPkg, newName string, functions bool, outAbs string, inputs []string) string {
	parts := []string{"luagen", "generate"}
	if functions {
		parts = append(parts, "-functions")
	}
	if pkg != dirPkg {
		parts = append(parts, "-pkg", pkg)
	}
	if newName != "New" {
		parts = append(parts, "-new", newName)
	}
	for _, in := range inputs {
		p := in
		if abs, err := filepath.Abs(in); err == nil {
			if rel, err := filepath.Rel(outAbs, abs); err == nil {
				p = rel
			}
		}
		parts = append(parts, quoteArg(filepath.ToSlash(p)))
	}
	return strings.Join(parts, " ")
}

// quoteArg quotes an argument that a shell would split or that would end
// the header comment.
func quoteArg(s string) string {
	for _, r := range s {
		if !(r == '/' || r == '.' || r == '-' || r == '_' || r == '+' || r == ',' || r == '=' || r == ':' || r == '@' ||
			'a' <= r && r <= 'z' || 'A' <= r && r <= 'Z' || '0' <= r && r <= '9') {
			return strconv.Quote(s)
		}
	}
	if s == "" {
		return `""`
	}
	return s
}

// packageName makes a package name from a directory name the way people
// usually do: lower case, with other characters dropped (my-pkg → mypkg).
func packageName(dir string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(dir) {
		if r == '_' || 'a' <= r && r <= 'z' || '0' <= r && r <= '9' && b.Len() > 0 {
			b.WriteRune(r)
		}
	}
	if b.Len() == 0 || b.String() == "_" || token.IsKeyword(b.String()) {
		return "scripts"
	}
	return b.String()
}
