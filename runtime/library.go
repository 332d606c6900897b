package runtime

import (
	"context"
	"crypto/sha1"
	"encoding/hex"
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// FunctionExecutor is an [Executor] that also runs Redis Functions (Redis
// 7.0+): [Script.Exec] of a script that belongs to a [Library] calls it with
// FCALL instead of EVALSHA when its executor implements this interface, and
// falls back to EVALSHA/EVAL when it does not (WithoutShebang, a plain
// fault injector). [Rueidis], runtime/goredis and luatest implement it.
//
// As for Executor, error replies must be *[ReplyError] and nothing may be
// retried by the implementation.
type FunctionExecutor interface {
	Executor
	// FCall sends FCALL (FCALL_RO for a read-only script) of
	// s.FunctionName() with keys and args. A server without the library
	// answers "Function not found", which Exec handles.
	FCall(ctx context.Context, s *Script, keys, args []string) (Value, error)
	// LoadLibrary runs [Library.LoadOn] on every primary (Redis
	// replicates functions to replicas and keeps them in RDB/AOF): FUNCTION
	// LOAD REPLACE l.Code() where the version rule of [Library] allows,
	// *[LibraryVersionError] where it does not. Every primary is tried
	// and the errors joined.
	LoadLibrary(ctx context.Context, l *Library) error
}

// Library is a package's scripts compiled into one Redis function library,
// each script a registered function. Create it with [NewLibrary] at package
// initialisation; it is immutable and safe for concurrent use.
//
// # Versions
//
// A library has a fixed name (the package's, "stock") and a version made
// of two parts: a revision, a number the package raises whenever its
// scripts change (luagen generate -functions -revision N), which orders
// versions; and a hash, the first 16 hex digits of a SHA1 over the
// scripts' names and sources (and the format of the wrapping), which
// tells two codes apart. Every function name ends in the hash
// ("Deduct_3f2a…"), so a binary only ever calls the exact code it was
// built with; the library also registers a read-only function
// "<name>_version" that answers "<revision> <hash>".
//
// Loading ([Library.Load], a call that meets "Function not found") follows
// one rule per node ([Library.LoadOn]): a node without the library gets it
// (FUNCTION LOAD); a node with a lower revision gets it with FUNCTION LOAD
// REPLACE, which removes the older one, so at most one version per package
// is ever loaded and nothing is left to prune; a node with this very
// version is left alone; a node with a higher revision, with the same
// revision and other code, or with a library of that name luagen did not
// make, is left alone too and the load fails with *[LibraryVersionError]
// (errors.Is [ErrLibraryNewer] or [ErrLibraryConflict]). So an old deploy
// never downgrades a newer library: its calls fail with that typed error
// instead, and do not run. Two binaries meeting an empty node at the same
// moment end with the newer library (the loser's FUNCTION LOAD finds the
// library there and decides again); two replacing the same older revision
// at the same moment can leave the lower of theirs, and the next call of
// the higher one meets "Function not found" and replaces it.
type Library struct {
	name     string
	revision int64
	hash     string
	code     string
	scripts  []*Script
}

// LibrarySpec describes a library to [NewLibrary].
type LibrarySpec struct {
	// Name is the library's name, e.g. the Go package ("stock").
	// Characters other than letters, digits and underscores become
	// underscores (Redis allows no others).
	Name string
	// Revision orders the library's versions (see [Library]): raise it
	// whenever the scripts change. It must not be negative.
	Revision int64
	// Scripts become the library's functions, each named by the last
	// element of its Go name and the hash ("stock.Deduct" →
	// "Deduct_<hash>").
	Scripts []*Script
}

// libraryFormat changes whenever the wrapping below changes, so that a new
// wrapping is a new version even for unchanged scripts.
const libraryFormat = "luagen-library-2"

// NewLibrary builds the library of spec.Scripts and attaches each script
// to it: from then on their Exec calls FCALL on a [FunctionExecutor]. It
// must run before the scripts are used (generated packages call it in a
// package-level variable). It panics when a script already belongs to a
// library, two scripts map to one function name or the revision is
// negative: generator bugs, never user input.
func NewLibrary(spec LibrarySpec) *Library {
	if spec.Revision < 0 {
		panic(fmt.Sprintf("luagen: library %s has a negative revision %d", spec.Name, spec.Revision))
	}
	h := sha1.New()
	h.Write([]byte(libraryFormat))
	for _, s := range spec.Scripts {
		fmt.Fprintf(h, "\x00%s\x00%s", s.name, s.source)
	}
	hash := hex.EncodeToString(h.Sum(nil))[:16]
	l := &Library{name: redisName(spec.Name), revision: spec.Revision, hash: hash}
	var b strings.Builder
	b.WriteString("#!lua name=" + l.name + "\n")
	line := 2
	seen := map[string]bool{}
	for _, s := range spec.Scripts {
		if s.lib != nil {
			panic("luagen: " + s.name + " belongs to two libraries")
		}
		short := s.name[strings.LastIndexByte(s.name, '.')+1:]
		fn := redisName(short) + "_" + hash
		if seen[strings.ToLower(fn)] {
			panic("luagen: two scripts of library " + spec.Name + " are named " + short)
		}
		seen[strings.ToLower(fn)] = true
		s.lib, s.fn, s.fnLine = l, fn, line
		text := wrapFunction(fn, s.source)
		b.WriteString(text)
		line += strings.Count(text, "\n")
		l.scripts = append(l.scripts, s)
	}
	// The version function: a script's function name ends in 16 hex
	// digits, so it cannot take this one.
	fmt.Fprintf(&b, "redis.register_function{function_name=%s, description='luagen library version: revision and hash', "+
		"flags={'no-writes', 'allow-stale'}, callback=function() return %s end}\n", luaQuote(l.versionFunction()), luaQuote(l.Version()))
	l.code = b.String()
	return l
}

// Function bodies are wrapped as [wrapBody] wraps EVAL bodies, inside a
// registration whose callback names its parameters KEYS and ARGV, so the
// script reads its keys and args exactly as under EVAL:
//
//	redis.register_function{function_name='Deduct_<hash>', description='…', flags={'no-writes'}, callback=function(KEYS, ARGV) local r = (function() ⏎
//	<line 2 of the .lua file> …
//	<last line>
//	end)() <the reply check> return r end}
//
// The registration goes on the line of the shebang (or before the first
// code line when there is none), so line N of the .lua file is line
// FunctionLine()+N-1 of the library and Exec maps "@user_function:L" back
// to file.lua:N. The reply check marks a returned error reply that reads
// as the server's "Function not found", and every code the EVAL wrapping
// marks (NOSCRIPT, MOVED, ASK, ..., the mark itself) exactly as it does, so
// Exec's load-and-retry never runs a function twice and no client follows a
// function's own redirect.
var (
	fnPrologue = "callback=function(KEYS, ARGV) local r = (function(%s) "
	fnEpilogue = "end)() " + replyCheck("elseif e:find('^Function not found') or e:find('^ERR Function not found') then "+
		"rawset(r, 'err', '"+scriptReplyMark+" ' .. e) ") + "return r end}\n"
)

func wrapFunction(fn, source string) string {
	head, code, ok := splitShebang(source)
	if !ok {
		head, code = source, "" // a shebang line alone
	}
	var flags []string
	if head != "" {
		for _, f := range strings.Fields(head) {
			if list, ok := strings.CutPrefix(f, "flags="); ok && list != "" {
				flags = append(flags, strings.Split(list, ",")...)
			}
		}
		code = "\n" + code
	}
	var b strings.Builder
	b.WriteString("redis.register_function{function_name=" + luaQuote(fn))
	if d := description(source); d != "" {
		b.WriteString(", description=" + luaQuote(d))
	}
	b.WriteString(", flags={")
	for i, f := range flags {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(luaQuote(f))
	}
	b.WriteString("}, ")
	writeWrapped(&b, code, fnPrologue, fnEpilogue, "...")
	return b.String()
}

// description is the script header's doc comment: the "--- " lines before
// the first "---@" tag, joined by newlines.
func description(source string) string {
	var doc []string
	for i, l := range strings.Split(source, "\n") {
		if i == 0 && strings.HasPrefix(l, "#!") {
			continue
		}
		if !strings.HasPrefix(l, "---") || strings.HasPrefix(l, "---@") {
			break
		}
		doc = append(doc, strings.TrimSpace(strings.TrimPrefix(l, "---")))
	}
	return strings.TrimSpace(strings.Join(doc, "\n"))
}

// luaQuote returns s as a one-line Lua string literal.
func luaQuote(s string) string {
	var b strings.Builder
	b.WriteByte('\'')
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c == '\\' || c == '\'':
			b.WriteByte('\\')
			b.WriteByte(c)
		case c == '\n':
			b.WriteString(`\n`)
		case c < ' ' || c == 0x7f:
			fmt.Fprintf(&b, "\\%03d", c)
		default:
			b.WriteByte(c)
		}
	}
	b.WriteByte('\'')
	return b.String()
}

// redisName maps s to the characters Redis allows in library and function
// names: letters, digits and underscores.
func redisName(s string) string {
	b := []byte(s)
	for i, c := range b {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_') {
			b[i] = '_'
		}
	}
	if len(b) == 0 {
		return "lib"
	}
	return string(b)
}

// Name returns the library name FUNCTION LOAD registers: [LibrarySpec]'s
// Name with characters Redis does not allow replaced.
func (l *Library) Name() string { return l.name }

// Revision returns the revision [LibrarySpec] gave (see [Library]).
func (l *Library) Revision() int64 { return l.revision }

// Hash returns the 16 hex digits of a SHA1 of the scripts that end every
// function name (see [Library]).
func (l *Library) Hash() string { return l.hash }

// Version returns "<revision> <hash>", what the library's version function
// answers.
func (l *Library) Version() string { return strconv.FormatInt(l.revision, 10) + " " + l.hash }

// versionFunction is the name of the function that answers the version.
func (l *Library) versionFunction() string { return l.name + "_version" }

// Code returns the FUNCTION LOAD payload: the "#!lua name=" line and one
// registration per script.
func (l *Library) Code() string { return l.code }

// Scripts returns the library's scripts, in registration order, in a new
// slice.
func (l *Library) Scripts() []*Script { return append([]*Script(nil), l.scripts...) }

// Load loads the library on every primary of e under the version rule of
// [Library] (FUNCTION LOAD REPLACE where the node has no version or an
// older one; *[LibraryVersionError] where it has a newer one or other code
// under the same revision). It is optional: a call that meets "Function
// not found" loads it and retries. An executor that does not run functions
// loads the scripts with SCRIPT LOAD instead.
func (l *Library) Load(ctx context.Context, e Executor) error {
	if fe, ok := e.(FunctionExecutor); ok {
		return fe.LoadLibrary(ctx, l)
	}
	var errs []error
	for _, s := range l.scripts {
		if err := e.Load(ctx, s); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// FunctionName returns the name the script is registered under in its
// [Library] ("Deduct_<hash>"), or "" for a script in no library.
func (s *Script) FunctionName() string { return s.fn }

// FunctionLine returns the library line that holds line 1 of the script's
// .lua file (line N is FunctionLine()+N-1), or 0 for a script in no library.
func (s *Script) FunctionLine() int { return s.fnLine }

// Library returns the library the script belongs to, or nil.
func (s *Script) Library() *Library { return s.lib }

// fcall is one try in function mode: FCALL, and on the server's "Function
// not found" (a node that never had the library, a FUNCTION FLUSH, a
// server restarted without persistence) FUNCTION LOAD and FCALL again —
// safe, because the function did not run. A reply the function made itself
// never counts (see [wrapFunction]). The library can vanish again between
// the load and the call (another FUNCTION FLUSH), so this repeats, at most
// [functionLoads] loads in all.
func (s *Script) fcall(ctx context.Context, e FunctionExecutor, keys, args []string) (Value, error) {
	v, err := e.FCall(ctx, s, keys, args)
	for n := 0; n < functionLoads && err != nil && IsFunctionNotFound(err) && ctx.Err() == nil; n++ {
		if lerr := e.LoadLibrary(ctx, s.lib); lerr != nil {
			return Value{}, s.loadError(lerr)
		}
		v, err = e.FCall(ctx, s, keys, args)
	}
	return v, err
}

// loadError is what a call returns when the server did not have its
// function and loading the library failed: the load error, which may be a
// *[LibraryVersionError], wrapped with the script and library names.
func (s *Script) loadError(err error) error {
	return fmt.Errorf("%s: loading library %s after %q: %w", s.name, s.lib.name, "Function not found", err)
}

// functionLoads is how many times one call loads the library before it
// returns "Function not found" to the caller.
const functionLoads = 3

// IsFunctionNotFound reports whether err is the server's reply to FCALL of
// a function it does not have: exactly "Function not found" after an
// optional "ERR ". Replies a function returns with that text are marked
// by the wrapping (see [Library]), and raised errors end with the script
// suffix, so neither matches.
func IsFunctionNotFound(err error) bool {
	var re *ReplyError
	if !errors.As(err, &re) {
		return false
	}
	return strings.TrimPrefix(re.Msg, "ERR ") == "Function not found"
}

// functionLine returns the .lua line of an error raised in the script's
// function ("... on @user_function:L."), if msg has one.
func (s *Script) functionLine(msg string) (int, bool) {
	if s.lib == nil {
		return 0, false
	}
	n, ok := lineAfter(msg, "@user_function:")
	if !ok {
		return 0, false
	}
	return n - s.fnLine + 1, true
}

// ErrLibraryNewer matches a *[LibraryVersionError] for a node that holds a
// higher revision of the library: an old deploy meeting a newer one.
var ErrLibraryNewer = errors.New("runtime: the server holds a newer revision of the library")

// ErrLibraryConflict matches a *[LibraryVersionError] for a node that
// holds the same revision of the library with other code (the scripts
// changed and the revision was not raised), or a library of that name that
// luagen did not make (no version function, or a version it cannot read).
var ErrLibraryConflict = errors.New("runtime: the server holds other code under the library's revision")

// LibraryVersionError is returned by loading a library on a node that
// holds a version loading must not replace (see [Library]): a higher
// revision ([ErrLibraryNewer]), the same revision with another hash or a
// library luagen did not make ([ErrLibraryConflict]). Nothing was changed
// on the node. A call that
// met "Function not found" returns it wrapped; remove the library with
// FUNCTION DELETE, or deploy the newer binary, to go on.
type LibraryVersionError struct {
	Library  string // the library's name
	Revision int64  // the revision being loaded
	Hash     string // the hash being loaded
	// Found is what the node's version function answered, "<revision>
	// <hash>", or "" for a library without one.
	Found string
	newer bool
}

func (e *LibraryVersionError) Error() string {
	what := "other code under the same revision (" + e.Found + ")"
	switch {
	case e.newer:
		what = "a newer revision (" + e.Found + ")"
	case e.Found == "":
		what = "a library of that name that luagen did not make"
	}
	return fmt.Sprintf("library %s: the server holds %s, not replaced by revision %d (%s)", e.Library, what, e.Revision, e.Hash)
}

// Is matches [ErrLibraryNewer] or [ErrLibraryConflict].
func (e *LibraryVersionError) Is(target error) bool {
	return target == ErrLibraryNewer && e.newer || target == ErrLibraryConflict && !e.newer
}

// LoadOn loads the library on one node under the version rule of
// [Library]. do sends one command to that node and returns its reply as
// an [Executor] would (error replies as *[ReplyError]). LoadOn reads the
// node's version (FCALL_RO of the version function), then loads: FUNCTION
// LOAD where the node has no library of that name, FUNCTION LOAD REPLACE
// where it has a lower revision. When a FUNCTION LOAD meets a library that
// appeared since the read (another binary loading at the same moment),
// LoadOn reads again and decides again, so a load racing with a newer one
// on an empty node ends with the newer library. [FunctionExecutor]
// implementations call it from LoadLibrary for every primary.
func (l *Library) LoadOn(ctx context.Context, do func(ctx context.Context, args ...string) (Value, error)) error {
	for range 2 {
		v, err := do(ctx, "FCALL_RO", l.versionFunction(), "0")
		load := []string{"FUNCTION", "LOAD", "REPLACE", l.code}
		switch {
		case IsFunctionNotFound(err):
			// No library of this name (or one luagen did not make, which
			// the LOAD without REPLACE below refuses to replace).
			load = []string{"FUNCTION", "LOAD", l.code}
		case err != nil:
			return fmt.Errorf("reading the version of library %s: %w", l.name, err)
		case v.Str == l.Version():
			return nil
		default:
			rev, _, ok := strings.Cut(v.Str, " ")
			n, perr := strconv.ParseInt(rev, 10, 64)
			if !ok || perr != nil || n >= l.revision {
				return &LibraryVersionError{Library: l.name, Revision: l.revision, Hash: l.hash, Found: v.Str,
					newer: ok && perr == nil && n > l.revision}
			}
		}
		v, err = do(ctx, load...)
		var re *ReplyError
		if errors.As(err, &re) && strings.HasSuffix(re.Msg, "already exists") {
			continue // loaded by someone else since the read: decide again
		}
		if err != nil {
			return fmt.Errorf("FUNCTION LOAD %s: %w", l.name, err)
		}
		if v.Str != l.name {
			return fmt.Errorf("FUNCTION LOAD %s: server loaded %q", l.name, v.Str)
		}
		return nil
	}
	// Still a library of that name without a version function.
	return &LibraryVersionError{Library: l.name, Revision: l.revision, Hash: l.hash}
}
