package runtime

import (
	"cmp"
	"context"
	"crypto/sha1"
	"encoding/hex"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/luagen/luagen/internal/lualines"
)

// FunctionExecutor is an [Executor] that also runs Redis Functions (Redis
// 7.0+): [Script.Exec] of a script that belongs to a [Library] calls it with
// FCALL instead of EVALSHA when its executor implements this interface, and
// falls back to EVALSHA/EVAL when it does not (WithoutShebang, a plain
// fault injector). [NewRueidisExecutor], runtime/goredis and luatest implement it.
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
	// replicates functions to replicas and keeps them in RDB/AOF; an
	// executor that cannot tell primaries from replicas may try both, and
	// ignore the replicas' READONLY and any failure of a replica, such as
	// one that is down):
	// FUNCTION LOAD where the node does not hold the library, then the
	// package's older versions pruned (see [Library]). Every primary is
	// tried and the errors joined.
	LoadLibrary(ctx context.Context, l *Library) error
	// LoadLibraryFor runs [Library.LoadOn] for l on the one node that
	// serves key's hash slot (its primary; on a single server, that
	// server). key is what the call that met "Function not found" is
	// routed by: its first key, or its function name for a call without
	// keys (as FCall routes it). So a call's load waits on no other node
	// (a stalled primary of another shard would hold it otherwise).
	LoadLibraryFor(ctx context.Context, l *Library, key string) error
}

// Library is a package's scripts compiled into one Redis function library,
// each script a registered function. Create it with [NewLibrary] at package
// initialisation; its code is fixed, and it is safe for concurrent use.
//
// # Deploys: one library per content, side by side
//
// A library is named after its package and its content: "stock_<hash>",
// where the hash is the first 16 hex digits of a SHA1 over the scripts'
// Go names and sources (and the format of the wrapping). Every function
// name ends in the same hash ("Deduct_<hash>"), so a binary only ever
// calls the exact code it was built with, and two binaries built from
// different scripts never touch each other's library. This is EVALSHA
// mode's rule (the script cache is keyed by SHA1) carried over to
// functions: during a rolling deploy old and new binaries run side by
// side, each its own version, in any order, and a rollback is one more
// deploy. Nothing is numbered by hand: a changed script is a new hash.
//
// Loading is FUNCTION LOAD without REPLACE: [Library.Load] (and Preload)
// on every node, a call that meets "Function not found" on its own node
// only (the primary of its first key's slot, see
// [FunctionExecutor.LoadLibraryFor]). A node that already holds
// the library keeps it ("Library ... already exists" is success); nothing
// is ever replaced, so no binary can take another's functions away.
//
// # Bounded server state
//
// A loaded library also registers a read-only function "<library>_version"
// whose description records when it was loaded, by the node's clock
// (TIME), and the load's number in its process, which orders one process's
// loads within a microsecond ("luagen library stock, loaded at <Unix ns>
// (Unix ns), load <n> of its process"). Right after a FUNCTION LOAD that added a
// library, the loader lists the package's luagen libraries on that node
// (FUNCTION LIST LIBRARYNAME stock_<16 characters>) and deletes all but
// the [LibraryVersionsKept] most recently loaded, never its own. So after
// any number of deploys a node holds at most that many versions of a
// package. Libraries without that version function (another tool's, or an
// operator's under a similar name) are never touched.
//
// Removing a version never fails a call of a binary that still runs it:
// its next call meets "Function not found", loads its library again (which
// makes it the most recently loaded) and calls again; the function had not
// run, so it runs once. When the library keeps vanishing (a FUNCTION FLUSH
// storm, more live versions than kept) or cannot be loaded at all (ACLs,
// a node down during the load), the call runs the binary's own script with
// EVALSHA/EVAL instead, after at most three loads: no call ever
// fails because of what the server's function libraries hold.
//
// # Costs and edge cases
//
//   - The first call after a deploy takes 6 round trips on its node
//     (FCALL, TIME, FUNCTION LOAD, FUNCTION LIST, FUNCTION DELETE once the
//     package has [LibraryVersionsKept] versions there, FCALL); later calls
//     one. Concurrent calls on one executor and hash slot share the load in
//     flight; calls on other slots load for themselves ("already exists").
//   - A batch loads once per library for all its calls, on every node
//     ([FunctionExecutor.LoadLibrary]), so a stalled node holds a batch's
//     first calls after a deploy until ctx ends: Preload at start-up.
//   - Right after a slot moved or a failover, a client whose slot map is
//     stale loads on the old owner ("already exists", or READONLY) and the
//     call runs with EVALSHA/EVAL until the map is refreshed.
//   - Two different Go packages of one name on one server count as versions
//     of one package: they run side by side but share the kept count
//     (give one another name with luagen's -pkg).
//   - ACLs that refuse FUNCTION LIST or FUNCTION DELETE leave old versions
//     in place: [Library.Load] (and Preload) returns [ErrLibraryPrune];
//     calls are not affected. ACLs that refuse FCALL itself fail calls.
//   - A body given to [NewScript] without luagen's check can raise an error
//     table that passes for "Function not found" (see wire.go); it then runs
//     again after each load and each wait for another call's load, a
//     bounded number of times. luagen check refuses such scripts.
type Library struct {
	pkg     string // the package part of the name, "stock"
	name    string // pkg + "_" + hash
	hash    string
	code    string // "#!lua name=" and the scripts' registrations
	scripts []*Script

	mu      sync.Mutex
	flights map[flightKey]*loadFlight // loads in flight
}

// flightKey is what concurrent calls share a load by: the executor and
// the hash slot the load is routed by, so a call waits only for a load to
// its own node (a load stuck on another shard holds no call here).
type flightKey struct {
	e    FunctionExecutor
	slot uint16
}

// loadFlight is one call's load of the library that concurrent calls on
// the same executor and slot wait for instead of loading too: after a
// deploy, every goroutine's first call meets "Function not found" at once,
// and a hot key's calls share one load.
type loadFlight struct {
	done chan struct{}
}

// LibrarySpec describes a library to [NewLibrary].
type LibrarySpec struct {
	// Name is the package's name ("stock"); the library is named
	// "<Name>_<hash>". Characters other than letters, digits and
	// underscores become underscores (Redis allows no others).
	Name string
	// Scripts become the library's functions, each named by the last
	// element of its Go name and the hash ("stock.Deduct" →
	// "Deduct_<hash>").
	Scripts []*Script
}

// LibraryVersionsKept is how many versions of one package's library a
// load leaves on a node: the one it loaded and the most recently loaded
// others (see [Library]). A rolling deploy has two versions live, a
// rollback or a canary during it three or four; eight leaves room for
// more, since a binary whose version was removed must load it again, and
// with more versions live than kept every call of theirs pays loads (a
// library costs the server about 19 KB for lua/stock's three scripts).
const LibraryVersionsKept = 8

// libraryFormat changes whenever the wrapping below changes, so that a new
// wrapping is a new version even for unchanged scripts.
const libraryFormat = "luagen-library-3"

// NewLibrary builds the library of spec.Scripts and attaches each script
// to it: from then on their Exec calls FCALL on a [FunctionExecutor]. It
// must run before the scripts are used (generated packages call it in a
// package-level variable). It panics when a script already belongs to a
// library or two scripts map to one function name: programming errors
// made at package initialisation, which generated code never makes.
func NewLibrary(spec LibrarySpec) *Library {
	h := sha1.New()
	h.Write([]byte(libraryFormat))
	for _, s := range spec.Scripts {
		fmt.Fprintf(h, "\x00%s\x00%s", s.name, s.source)
	}
	hash := hex.EncodeToString(h.Sum(nil))[:16]
	pkg := redisName(spec.Name)
	l := &Library{pkg: pkg, name: pkg + "_" + hash, hash: hash}
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
		// Lua's count of line breaks, not the "\n"s: a lone "\r" (a
		// .lua file saved with old Mac line endings) ends a line too, and
		// "\r\n" is one break (issue 34).
		n, _ := lualines.Breaks(text)
		line += n
		l.scripts = append(l.scripts, s)
	}
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

// Name returns the library's name on the server, "<package>_<hash>"
// (see [Library]), as FUNCTION LIST and FUNCTION DELETE take it.
func (l *Library) Name() string { return l.name }

// Package returns the package part of the name: [LibrarySpec]'s Name with
// characters Redis does not allow replaced.
func (l *Library) Package() string { return l.pkg }

// Hash returns the 16 hex digits of a SHA1 of the scripts that end the
// library's name and every function name (see [Library]).
func (l *Library) Hash() string { return l.hash }

// versionFunction is the name of the function that answers the hash and
// whose description records the load time.
func (l *Library) versionFunction() string { return l.name + "_version" }

// Code returns the FUNCTION LOAD payload for a load at time loaded: the
// "#!lua name=" line, one registration per script, and last the version
// function, whose description records loaded (see [Library]). Line N of a
// script's .lua file is line [Script.FunctionLine]()+N-1 of it.
func (l *Library) Code(loaded time.Time) string { return l.code + l.versionCode(loaded, 0) }

// versionCode registers the version function of a load at loaded, the
// process's seq-th.
func (l *Library) versionCode(loaded time.Time, seq int64) string {
	return fmt.Sprintf("redis.register_function{function_name=%s, description=%s, "+
		"flags={'no-writes', 'allow-stale'}, callback=function() return %s end}\n",
		luaQuote(l.versionFunction()), luaQuote(l.loadedDescription(loaded.UnixNano(), seq)), luaQuote(l.hash))
}

// loadedDescription is the version function's description for a load at
// ns (Unix nanoseconds), the seq-th of its process; sibling reads it back.
func (l *Library) loadedDescription(ns, seq int64) string {
	return l.loadedPrefix() + strconv.FormatInt(ns, 10) + " (Unix ns), load " + strconv.FormatInt(seq, 10) + " of its process"
}

func (l *Library) loadedPrefix() string { return "luagen library " + l.pkg + ", loaded at " }

// Scripts returns the library's scripts, in registration order, in a new
// slice.
func (l *Library) Scripts() []*Script { return append([]*Script(nil), l.scripts...) }

// Load loads the library on every node of e ([FunctionExecutor.LoadLibrary]:
// every primary; rueidis tries the replicas it knows too, which answer
// READONLY and get it by replication) (see [Library]): FUNCTION
// LOAD where a node does not hold it, nothing where it does, then the
// package's versions beyond [LibraryVersionsKept] are removed from the
// nodes where it was added. It is optional: a call that meets "Function
// not found" loads it and calls again. It returns the errors of the nodes
// where the load failed (a connection error, ACLs without FUNCTION); calls
// on those nodes run the script with EVALSHA/EVAL. An executor that does
// not run functions loads the scripts with SCRIPT LOAD instead.
func (l *Library) Load(ctx context.Context, e Executor) error {
	if err := usable(ctx, e); err != nil {
		return err
	}
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
// version removed by another binary's load, a server restarted without
// persistence) load the library on the call's node and FCALL again — safe, because the
// function did not run. A reply the function made itself never counts
// (see [wrapFunction]). The library can vanish again between the load and
// the call, so this repeats, at most [functionLoads] loads in all; when
// the function is still not found, or a load fails, the script runs as in
// EVAL mode (EVALSHA, EVAL on NOSCRIPT): the binary's own code, once.
func (s *Script) fcall(ctx context.Context, e FunctionExecutor, keys, args []string, t *callTrace) (Value, error) {
	t.sent(ModeFCall)
	v, err := e.FCall(ctx, s, keys, args)
	// A wait for another call's load is not one of this call's loads: that
	// load may have ended just before the FUNCTION FLUSH this call met.
	for loads, waits := 0, 0; loads < functionLoads && waits <= functionLoads && IsFunctionNotFound(err) && ctx.Err() == nil; {
		led, lerr := s.lib.loadFor(ctx, e, s, keys)
		if !loaded(lerr) {
			break
		}
		if led {
			loads++
		} else {
			waits++
		}
		t.libraryLoad()
		v, err = e.FCall(ctx, s, keys, args)
	}
	if IsFunctionNotFound(err) {
		t.fallback()
		return s.eval(ctx, e, keys, args, t)
	}
	return v, err
}

// loadFor loads the library for a call of s with keys
// ([FunctionExecutor.LoadLibraryFor]), unless another call on e is loading
// it for the same hash slot already: then it waits for that load and
// returns led false, and the call sends FCALL again (loading itself if
// the library is still missing). So a burst of first calls on a hot key
// after a deploy sends one FUNCTION LOAD, not one per call.
func (l *Library) loadFor(ctx context.Context, e FunctionExecutor, s *Script, keys []string) (led bool, err error) {
	route := s.fn
	if len(keys) > 0 {
		route = keys[0]
	}
	k := flightKey{e: e, slot: Slot(route)}
	// An executor that is not comparable, or not equal to itself (a NaN
	// field), cannot be a map key that finds its entry again.
	if !reflect.ValueOf(e).Comparable() || any(k) != any(k) {
		return true, e.LoadLibraryFor(ctx, l, route)
	}
	l.mu.Lock()
	if f := l.flights[k]; f != nil {
		l.mu.Unlock()
		select {
		case <-f.done:
			return false, nil
		case <-ctx.Done():
			return false, ctx.Err()
		}
	}
	f := &loadFlight{done: make(chan struct{})}
	if l.flights == nil {
		l.flights = map[flightKey]*loadFlight{}
	}
	l.flights[k] = f
	l.mu.Unlock()
	defer func() {
		l.mu.Lock()
		delete(l.flights, k)
		l.mu.Unlock()
		close(f.done)
	}()
	return true, e.LoadLibraryFor(ctx, l, route)
}

// functionLoads is how many times one call loads the library (and, apart,
// waits for another call's load) before it runs the script with
// EVALSHA/EVAL instead.
const functionLoads = 3

// IsFunctionNotFound reports whether err is the server's reply to FCALL of
// a function it does not have: exactly "Function not found" after an
// optional "ERR ". Replies a function returns with that text are marked
// by the wrapping (see [Library]), and raised errors end with the script
// suffix, so neither matches.
func IsFunctionNotFound(err error) bool {
	if err == nil {
		return false
	}
	// errors.AsType, not errors.As: no target escapes to the heap, so a
	// call in function mode allocates nothing for this check (issue 34).
	re, ok := errors.AsType[*ReplyError](err)
	return ok && strings.TrimPrefix(re.Msg, "ERR ") == "Function not found"
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

// loadTime is the time a load records: the node's clock (TIME), so that
// hosts with skewed clocks still order their loads as the node saw them,
// or the local clock when TIME fails.
func loadTime(ctx context.Context, do func(ctx context.Context, args ...string) (Value, error)) time.Time {
	v, err := do(ctx, "TIME")
	if err == nil && len(v.Array) == 2 {
		sec, err1 := strconv.ParseInt(v.Array[0].Str, 10, 64)
		usec, err2 := strconv.ParseInt(v.Array[1].Str, 10, 64)
		if err1 == nil && err2 == nil {
			return time.Unix(sec, usec*1000)
		}
	}
	return time.Now()
}

// loadSeq numbers this process's loads; a load records its number after
// its time, which orders one process's loads that the node's clock puts
// in the same microsecond (luatest's virtual clock stands still).
var loadSeq atomic.Int64

// LoadOn loads the library on one node (see [Library]). do sends one
// command to that node and returns its reply as an [Executor] would (error
// replies as *[ReplyError]). LoadOn sends FUNCTION LOAD of [Library.Code]
// at the node's time (TIME); a node that already holds the library answers
// "Library ... already exists", which is success. After a load that added
// the library, it lists the package's libraries on the node and deletes
// those beyond [LibraryVersionsKept] (FUNCTION LIST, FUNCTION DELETE); a
// failure there is [ErrLibraryPrune], with the library loaded, and the
// next load prunes again.
// [FunctionExecutor] implementations call it from LoadLibrary for every
// primary.
func (l *Library) LoadOn(ctx context.Context, do func(ctx context.Context, args ...string) (Value, error)) error {
	v, err := do(ctx, "FUNCTION", "LOAD", l.code+l.versionCode(loadTime(ctx, do), loadSeq.Add(1)))
	var re *ReplyError
	switch {
	case errors.As(err, &re) && strings.HasPrefix(strings.TrimPrefix(re.Msg, "ERR "), "Library '") &&
		strings.HasSuffix(re.Msg, "' already exists"):
		return nil
	case err != nil:
		return fmt.Errorf("FUNCTION LOAD %s: %w", l.name, err)
	case v.Str != l.name:
		return fmt.Errorf("FUNCTION LOAD %s: server loaded %q", l.name, v.Str)
	}
	return l.prune(ctx, do)
}

// ErrLibraryPrune matches the error [Library.Load] (and so Preload)
// returns when a load added the library but could not remove the
// package's versions beyond [LibraryVersionsKept] (ACLs without FUNCTION
// LIST or FUNCTION DELETE, a connection lost in between): the library is
// loaded and calls run; old versions stay until a load can remove them.
// It is not [IsTransient], and a call never returns it.
var ErrLibraryPrune = errors.New("runtime: old versions of the library were not removed")

// loaded reports whether a load's error still leaves the library loaded:
// none, or only a failed prune.
func loaded(err error) bool { return err == nil || errors.Is(err, ErrLibraryPrune) }

// prune deletes the package's luagen libraries on one node beyond the
// [LibraryVersionsKept] most recently loaded, never l itself. Another
// loader may have deleted the same library first ("Library not found"),
// which is no error; other failures are [ErrLibraryPrune].
func (l *Library) prune(ctx context.Context, do func(ctx context.Context, args ...string) (Value, error)) error {
	v, err := do(ctx, "FUNCTION", "LIST", "LIBRARYNAME", l.pkg+"_"+strings.Repeat("?", len(l.hash)))
	if err != nil {
		return fmt.Errorf("%w: FUNCTION LIST: %w", ErrLibraryPrune, err)
	}
	type version struct {
		name        string
		loaded, seq int64
	}
	var others []version
	for _, lib := range v.Array {
		name, loaded, seq, ok := l.sibling(lib)
		if ok && name != l.name {
			others = append(others, version{name, loaded, seq})
		}
	}
	// Newest first; the ones past the kept count go.
	slices.SortFunc(others, func(a, b version) int {
		return cmp.Or(cmp.Compare(b.loaded, a.loaded), cmp.Compare(b.seq, a.seq), strings.Compare(a.name, b.name))
	})
	var errs []error
	for _, o := range others[min(len(others), LibraryVersionsKept-1):] {
		_, err := do(ctx, "FUNCTION", "DELETE", o.name)
		var re *ReplyError
		if err != nil && !(errors.As(err, &re) && strings.TrimPrefix(re.Msg, "ERR ") == "Library not found") {
			errs = append(errs, fmt.Errorf("%w: FUNCTION DELETE %s: %w", ErrLibraryPrune, o.name, err))
		}
	}
	return errors.Join(errs...)
}

// sibling reads one entry of FUNCTION LIST (a map, or a flat array in
// RESP2): whether it is a luagen library of l's package, "<pkg>_<16 hex
// digits>" with a version function whose description records its load
// (see [Library.loadedDescription]), and that load's time and number.
func (l *Library) sibling(lib Value) (name string, loaded, seq int64, ok bool) {
	name = field(lib, "library_name").Str
	hash, found := strings.CutPrefix(name, l.pkg+"_")
	if !found || len(hash) != len(l.hash) || strings.Trim(hash, "0123456789abcdef") != "" {
		return "", 0, 0, false
	}
	for _, fn := range field(lib, "functions").Array {
		if field(fn, "name").Str != name+"_version" {
			continue
		}
		rest, found := strings.CutPrefix(field(fn, "description").Str, l.loadedPrefix())
		digits, rest, _ := strings.Cut(rest, " ")
		n, err := strconv.ParseInt(digits, 10, 64)
		if !found || err != nil {
			return "", 0, 0, false
		}
		_, rest, _ = strings.Cut(rest, ", load ")
		digits, _, _ = strings.Cut(rest, " ")
		seq, _ = strconv.ParseInt(digits, 10, 64) // 0 when missing
		return name, n, seq, true
	}
	return "", 0, 0, false
}

// field returns the value under key in a map reply (or a flat key-value
// array, as RESP2 sends maps), or Nil.
func field(m Value, key string) Value {
	for i := 0; i+1 < len(m.Array); i += 2 {
		if m.Array[i].Str == key {
			return m.Array[i+1]
		}
	}
	return Nil
}
