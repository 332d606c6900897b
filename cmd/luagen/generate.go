package main

import (
	"cmp"
	"errors"
	"flag"
	"fmt"
	"go/token"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/luagen/luagen/gen"
)

func init() {
	register(&command{
		name:  "generate",
		args:  "[-pkg name] [-new name] [-out dir] [-functions] [-unsafe-keys] dir|file.lua...",
		short: "write the Go package for the scripts",
		run:   func(e *env, args []string) int { return runGenerate(e, "generate", args) },
	})
	register(&command{
		name:  "diff",
		args:  "[-pkg name] [-new name] [-out dir] [-functions] [-unsafe-keys] dir|file.lua... | packages",
		short: "report generated files that are missing, stale or extra (exit 1 if any)",
		long: "Given Go packages (./..., ./lock/..., or a directory with no .lua files)\n" +
			"instead of scripts, diff runs every //go:generate line of those packages\n" +
			"that runs luagen generate, with that line's own flags and scripts, taken\n" +
			"from its package's directory as go generate would, and prints paths\n" +
			"relative to the current directory. A pattern that matches no package is\n" +
			"an error, and so is finding no such line. The flags below go with scripts\n" +
			"only. In CI: go tool luagen diff ./...",
		run: func(e *env, args []string) int { return runGenerate(e, "diff", args) },
	})
	register(&command{
		name:  "check",
		args:  "[-new name] [-functions] [-unsafe-keys] dir|file.lua... | packages",
		short: "check the scripts' annotations and Lua, generating nothing",
		long: "The scripts named are checked together as the one package generate\n" +
			"would make of them. Given Go packages (./..., ./lock/..., or a directory\n" +
			"with no .lua files) instead, check checks the scripts of every\n" +
			"//go:generate line of those packages that runs luagen generate, with that\n" +
			"line's own flags, and prints paths relative to the current directory;\n" +
			"then it also checks the names of the hand-written Go files of each\n" +
			"line's output directory against the generated ones, as generate and\n" +
			"diff do. The flags below go with scripts only.",
		run: func(e *env, args []string) int { return runGenerate(e, "check", args) },
	})
}

// genFlags are the flags of generate and diff; check takes -new,
// -functions (which adds function mode's checks) and -unsafe-keys only.
type genFlags struct {
	pkg, newName, out     string
	functions, unsafeKeys bool
}

func (f *genFlags) register(fs *flag.FlagSet, full bool) {
	fs.StringVar(&f.newName, "new", "New", "`name` of the generated constructor of Scripts")
	fs.BoolVar(&f.functions, "functions", false, "also compile the scripts into one Redis function library; calls use FCALL where the executor runs functions")
	fs.BoolVar(&f.unsafeKeys, "unsafe-keys", false, "keys are the callers' business (one node, or callers keep one slot): check every script as if it said ---@unsafe-keys")
	if full {
		fs.StringVar(&f.pkg, "pkg", "", "Go package `name` (default $GOPACKAGE, else the output directory's name)")
		fs.StringVar(&f.out, "out", ".", "output `dir`ectory")
	}
}

func runGenerate(e *env, name string, args []string) int {
	fs := newFlagSet(e, name)
	var f genFlags
	f.register(fs, name != "check")
	if err := revisionArg(args); err != nil {
		fmt.Fprintf(e.stderr, "luagen %s: %v\n", name, err)
		return exitUsage
	}
	inputs, status, ok := parseFlags(fs, args)
	if !ok {
		return status
	}
	if err := flagAfterInputs(inputs); err != nil {
		fmt.Fprintf(e.stderr, "luagen %s: %v\n", name, err)
		return exitUsage
	}
	if len(inputs) == 0 {
		if name == "generate" {
			fmt.Fprintf(e.stderr, "luagen %s: no scripts: name .lua files or directories\n", name)
		} else {
			fmt.Fprintf(e.stderr, "luagen %s: no scripts: name .lua files or directories, or Go packages (./...)\n", name)
		}
		fs.Usage()
		return exitUsage
	}
	if name != "generate" {
		pkgs, err := packageArgs(inputs)
		if err != nil {
			fmt.Fprintf(e.stderr, "luagen %s: %v\n", name, err)
			return exitUsage
		}
		if !pkgs && fs.NFlag() == 0 {
			if lines := selfGenerating(inputs, e.getenv); lines != nil {
				wd, err := os.Getwd()
				if err != nil {
					fmt.Fprintf(e.stderr, "luagen %s: %v\n", name, err)
					return exitFail
				}
				return runLines(e, name, wd, lines)
			}
		}
		if pkgs {
			if fs.NFlag() > 0 {
				fmt.Fprintf(e.stderr, "luagen %s: flags go with scripts, not with Go packages: each go:generate line's own flags apply\n", name)
				return exitUsage
			}
			return runPackages(e, name, inputs)
		}
	}
	return job{cmd: name, flags: f, inputs: inputs, gopackage: e.getenv("GOPACKAGE")}.run(e)
}

// revisionArg refuses -revision wherever it stands in args.
func revisionArg(args []string) error {
	for _, a := range args {
		if a == "-revision" || a == "--revision" || strings.HasPrefix(a, "-revision=") || strings.HasPrefix(a, "--revision=") {
			return errors.New("-revision is gone: a function library is named by a hash of its scripts, " +
				"so a changed script is a new version with no number to raise (see runtime.Library); remove -revision from the command")
		}
	}
	return nil
}

// flagAfterInputs refuses a flag after the first script: Go's flag package
// stops there, and would take "-out" for a script.
func flagAfterInputs(inputs []string) error {
	for _, in := range inputs {
		if len(in) > 1 && in[0] == '-' {
			return fmt.Errorf("flag %s after the scripts: flags go before them", strings.SplitN(in, "=", 2)[0])
		}
	}
	return nil
}

// packageArgs reports whether the arguments of diff or check name Go
// packages (see isPackageArg) rather than scripts; they must not mix.
func packageArgs(args []string) (bool, error) {
	var pkg, script string
	for _, a := range args {
		if isPackageArg(a) {
			pkg = cmp.Or(pkg, a)
		} else {
			script = cmp.Or(script, a)
		}
	}
	if pkg != "" && script != "" {
		return false, fmt.Errorf("%s names Go packages and %s scripts: give one or the other", pkg, script)
	}
	return pkg != "", nil
}

// parseLine parses the arguments of luagen generate in a go:generate line.
func parseLine(args []string) (genFlags, []string, error) {
	var f genFlags
	fs := flag.NewFlagSet("luagen generate", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	f.register(fs, true)
	if err := revisionArg(args); err != nil {
		return f, nil, err
	}
	if err := fs.Parse(args); err != nil {
		return f, nil, err
	}
	if err := flagAfterInputs(fs.Args()); err != nil {
		return f, nil, err
	}
	if fs.NArg() == 0 {
		return f, nil, errors.New("luagen generate names no scripts")
	}
	return f, fs.Args(), nil
}

// A job is one run of generate, diff or check on one set of scripts: a
// command line, or a go:generate line found by diff or check.
type job struct {
	cmd       string // generate, diff or check
	flags     genFlags
	inputs    []string
	gopackage string // $GOPACKAGE
	origin    string // the go:generate line, file:line, or "" for the command line
}

// errorf prints a message about the job, naming its go:generate line.
func (j job) errorf(e *env, format string, args ...any) {
	msg := fmt.Sprintf(format, args...)
	if j.origin != "" {
		msg = j.origin + ": " + msg
	}
	for _, line := range strings.Split(msg, "\n") {
		fmt.Fprintf(e.stderr, "luagen %s: %s\n", j.cmd, line)
	}
}

// run runs the job and returns the exit status.
func (j job) run(e *env) int {
	f := j.flags
	outAbs, err := filepath.Abs(f.out)
	if err != nil {
		j.errorf(e, "%v", err)
		return exitFail
	}
	dirPkg := packageName(filepath.Base(outAbs))
	pkg := cmp.Or(f.pkg, j.gopackage, dirPkg)
	if f.newName == "" {
		j.errorf(e, "-new needs a name; leave it out for New")
		return exitUsage
	}
	if err := (gen.Config{Package: pkg, New: f.newName, Functions: f.functions}).Check(); err != nil {
		flag := "-new"
		if ce, ok := err.(*gen.ConfigError); ok && ce.Field == "Package" {
			flag = "-pkg"
		}
		j.errorf(e, "%v; choose another with %s", err, flag)
		return exitUsage
	}
	srcs, err := gen.Load(j.inputs)
	if err != nil {
		j.errorf(e, "%v", err)
		return exitFail
	}
	cfg := gen.Config{Package: pkg, New: f.newName, Functions: f.functions, UnsafeKeys: f.unsafeKeys,
		Command: headerCommand(pkg, dirPkg, f, outAbs, j.inputs), Version: version()}
	if j.cmd != "check" || j.origin != "" {
		// The package's own Go files share its scope with the generated
		// names. check given scripts has no output directory (no -out);
		// given packages, each go:generate line has one.
		if cfg.GoFiles, err = gen.LoadGoFiles(f.out); err != nil {
			j.errorf(e, "%v", err)
			return exitFail
		}
	}
	files, diags := gen.Generate(srcs, cfg)
	if len(diags) > 0 {
		for _, d := range diags {
			fmt.Fprintln(e.stderr, d)
		}
		return exitFail
	}
	switch j.cmd {
	case "check":
		return exitOK
	case "diff":
		plan, err := gen.Plan(f.out, files)
		if err != nil {
			j.errorf(e, "%v", err)
			return exitFail
		}
		for _, c := range plan {
			fmt.Fprintf(e.stdout, "%s: %s\n", filepath.Join(f.out, c.Name), c.Kind)
		}
		if len(plan) > 0 {
			fmt.Fprintf(e.stderr, "luagen diff: %s out of date: run go generate (the generated files are never edited by hand; change the scripts)\n", plural(len(plan), "generated file is", "generated files are"))
			return exitFail
		}
		return exitOK
	}
	changes, err := gen.Write(f.out, files)
	if err != nil {
		j.errorf(e, "%v", err)
		return exitFail
	}
	if goFile := e.getenv("GOFILE"); goFile != "" {
		for _, c := range changes {
			if c.Kind == gen.Extra && filepath.Clean(f.out) == "." && c.Name > goFile {
				// go generate listed the package's files before this run
				// and will look for this one next.
				fmt.Fprintf(e.stderr, "luagen: removed %s, whose script is gone; if go generate now stops with \"open %s: no such file or directory\", run it again\n", c.Name, c.Name)
			}
		}
	}
	return exitOK
}

// headerCommand is the command recorded in generated files: the generate
// command that reproduces them when run in the output directory, with the
// flags that change what it generates or checks (f's, but -out).
func headerCommand(pkg, dirPkg string, f genFlags, outAbs string, inputs []string) string {
	parts := []string{"luagen", "generate"}
	if f.functions {
		parts = append(parts, "-functions")
	}
	if f.unsafeKeys {
		parts = append(parts, "-unsafe-keys")
	}
	if pkg != dirPkg {
		parts = append(parts, "-pkg", pkg)
	}
	if f.newName != "New" {
		parts = append(parts, "-new", f.newName)
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

// plural is "1 thing is" or "n things are", from the two forms.
func plural(n int, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return strconv.Itoa(n) + " " + many
}
