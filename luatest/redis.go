package luatest

import (
	"errors"
	"fmt"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	rediscmd "github.com/luagen/luagen/internal/commands"
	"github.com/luagen/luagen/luatest/internal/engine"
	"github.com/luagen/luagen/luatest/resp"
	"github.com/luagen/luagen/runtime"
)

// Redis is an in-memory Redis 7.0 that runs Lua scripts in gopher-lua. It
// implements [runtime.Executor], so generated wrappers run on it unchanged.
// It is safe for concurrent use: like the real server it runs one command
// or script at a time.
type Redis struct {
	mu        sync.Mutex
	tb        testing.TB // nil when made with New
	now       time.Time
	dbs       [numDBs]map[string]*entry
	db        map[string]*entry  // dbs[dbIndex]: the database commands act on
	dbIndex   int                // the selected database: a script's SELECT moves it for the rest of its run
	clientDB  int                // the database SELECT chose for the callers of Do and Command
	scripts   map[string]*script // SHA1 → script: the script cache
	vm        *luaVM
	closed    bool       // Close ran: the Executor methods answer runtime.ErrClientClosed
	funcs     *functions // FUNCTION LOAD's libraries and their interpreter
	rand      rand48
	keysCheck KeysCheck
	timeout   time.Duration
	hook      runtime.Hook        // WithHook; nil for none
	wallClock bool                // WithWallClock
	cmdStats  map[string]*cmdStat // INFO commandstats, by command name
	ahead     time.Duration       // what Advance added, kept ahead of the wall clock
	// observer sees writes and published messages for a wire server
	// (package luatest/server); nil without one.
	observer engine.Observer

	run *runCtx // the script running now, if any
	// runSlot is the context of every run: runs never nest (a script
	// cannot EVAL or FCALL) and nothing keeps a run's context past its
	// end, so one is enough (newRun).
	runSlot  runCtx
	calls    []Call // the call log, a ring of up to callsMax (see callsOldest)
	callsMax int
	events   []Event
	logs     []LogEntry
	faults   faults

	argBlock []string // where newArgv cuts redis.call's arguments from
	// callsOldest is the index of the oldest call in a full call log.
	callsOldest int
}

// Option configures a [Redis].
type Option func(*Redis)

// WithTime starts the virtual clock at t instead of the wall-clock time of
// creation. Only milliseconds are kept, as Redis keeps them.
func WithTime(t time.Time) Option { return func(r *Redis) { r.now = t.Truncate(time.Millisecond) } }

// WithKeysCheck sets how keys a script touches are checked against the
// KEYS it was given; the default is [KeysDeclared] (one of KEYS, or built
// from one's text up to its hash tag).
func WithKeysCheck(mode KeysCheck) Option { return func(r *Redis) { r.keysCheck = mode } }

// WithScriptTimeout stops a script that runs longer than d (wall-clock
// time) with an error reply, so a test of a script with an endless loop
// fails instead of hanging. The default is no limit: the real server has
// none either (it only starts answering BUSY to other clients).
func WithScriptTimeout(d time.Duration) Option { return func(r *Redis) { r.timeout = d } }

// WithCallLog keeps the most recent max redis.call/redis.pcall calls in
// the call log ([Redis.Calls]); 0 turns the log off. The default is
// [DefaultCallLog]. A bound keeps long offline load tests from spending
// their time growing the log.
func WithCallLog(max int) Option { return func(r *Redis) { r.callsMax = max } }

// WithHook attaches h to the server as an executor: h sees every script
// call runtime.Script.Exec and runtime.Batch run on it, as it would on
// runtime.NewRueidisExecutor(c, runtime.WithHook(h)), so a
// [runtime.Hook] such as package luagenotel's is tested offline. Its
// CallEnd.Mode says EVALSHA, EVAL (after NOSCRIPT) or FCALL as against a
// server; CallStart.Server is "" (there is no address). A nil h means no
// hook.
func WithHook(h runtime.Hook) Option { return func(r *Redis) { r.hook = h } }

// Hook implements [runtime.Hooked]: the hook given with [WithHook], or nil.
func (r *Redis) Hook() runtime.Hook { return r.hook }

// WithWallClock makes the clock follow the wall clock instead of standing
// still: before each command, script run or inspection it moves to the
// current time (plus what [Redis.Advance] added, and never back), so keys
// expire as time passes, as on a server. It is for servers that other
// processes use (package luatest/server, luagen serve); a test that
// controls time keeps the default and moves the clock itself.
func WithWallClock() Option { return func(r *Redis) { r.wallClock = true } }

// DefaultCallLog is how many calls the call log keeps by default.
const DefaultCallLog = 10_000

// New returns an empty fake server whose virtual clock starts at the
// current wall-clock time (see [WithTime]). Call Close when done to free
// the Lua interpreter.
func New(opts ...Option) *Redis {
	r := &Redis{
		now:      time.Now().Truncate(time.Millisecond),
		scripts:  map[string]*script{},
		rand:     rand48{x: rand48Default},
		callsMax: DefaultCallLog,
	}
	for i := range r.dbs {
		r.dbs[i] = map[string]*entry{}
	}
	r.db = r.dbs[0]
	for _, o := range opts {
		o(r)
	}
	return r
}

// numDBs is how many databases the server has (the "databases" default).
const numDBs = 16

// selectDB makes database i the one commands act on.
func (r *Redis) selectDB(i int) {
	r.dbIndex = i
	r.db = r.dbs[i]
}

// Start returns a fake server for one test: like [New], closed when tb
// ends, and [Redis.MustDo] fails tb instead of returning errors.
func Start(tb testing.TB, opts ...Option) *Redis {
	tb.Helper()
	r := New(opts...)
	r.tb = tb
	tb.Cleanup(r.Close)
	return r
}

var (
	_ runtime.Executor = (*Redis)(nil)
	_ runtime.Hooked   = (*Redis)(nil)
)

// Close frees the Lua interpreter. The keyspace stays readable (Do, Get
// and the other inspection methods), but the [runtime.Executor] methods
// return an error matching [runtime.ErrClientClosed] from then on, as a
// closed rueidis or go-redis client does.
func (r *Redis) Close() {
	r.lock()
	defer r.mu.Unlock()
	r.closed = true
	if r.vm != nil {
		r.vm.L.Close()
		r.vm = nil
	}
	r.funcs.close()
}

// errClosed is what the Executor methods return after Close.
var errClosed = fmt.Errorf("luatest: %w", runtime.ErrClientClosed)

// Now returns the virtual clock.
func (r *Redis) Now() time.Time {
	r.lock()
	defer r.mu.Unlock()
	return r.now
}

// Advance moves the virtual clock forward by d (milliseconds are kept);
// keys whose expiry passes are gone from then on. A negative d is ignored:
// Redis' clock does not go back.
func (r *Redis) Advance(d time.Duration) {
	r.lock()
	defer r.mu.Unlock()
	if d > 0 {
		r.now = r.now.Add(d).Truncate(time.Millisecond)
		r.ahead += d
	}
}

func (r *Redis) nowMs() int64 { return r.now.UnixMilli() }

// lock takes r.mu and, with [WithWallClock], moves the clock to the wall
// clock's time: once per command or script run, so time stands still
// while one runs, as the server's does (its cached mstime).
func (r *Redis) lock() {
	r.mu.Lock()
	if r.wallClock {
		if t := time.Now().Add(r.ahead).Truncate(time.Millisecond); t.After(r.now) {
			r.now = t
		}
	}
}

// Do runs one command as a RESP3 client (such as rueidis) would and
// returns its reply, with an error reply as a *[runtime.ReplyError] whose
// leading "ERR " is stripped like every [runtime.Executor] strips it. It
// is how tests seed and inspect the keyspace: Do("SET", "k", "v"),
// Do("HGETALL", "h"). Scripts run with it too (EVAL, EVALSHA, SCRIPT LOAD).
// Commands luatest does not implement answer an "unknown command" error.
func (r *Redis) Do(args ...string) (runtime.Value, error) {
	return FromRESP(r.Command(3, args...))
}

// MustDo is Do for test set-up: on an error reply it fails the test given
// to [Start] (or, for a Redis made by [New], returns the zero Value
// after printing nothing — check errors with Do there).
func (r *Redis) MustDo(args ...string) runtime.Value {
	v, err := r.Do(args...)
	if err != nil && r.tb != nil {
		r.tb.Helper()
		r.tb.Fatalf("luatest: %s: %v", strings.Join(args, " "), err)
	}
	return v
}

// Command runs one command as a client speaking protocol proto (2 or 3,
// like redis-cli without and with -3) and returns the reply with every
// RESP distinction kept. A wrong proto is answered with an error reply.
func (r *Redis) Command(proto int, args ...string) (reply resp.Reply) {
	if proto != 2 && proto != 3 {
		return resp.ErrorReply(fmt.Sprintf("NOPROTO unsupported protocol version %d", proto))
	}
	if len(args) == 0 {
		return resp.ErrorReply("ERR luatest: empty command")
	}
	r.lock()
	defer r.mu.Unlock()
	return r.command(proto, args)
}

// command is Command with r.mu held and proto and args checked.
func (r *Redis) command(proto int, args []string) (reply resp.Reply) {
	defer func() {
		// A bug in a command must not take the test binary down with it.
		if p := recover(); p != nil {
			reply = resp.ErrorReply(fmt.Sprintf("ERR luatest: internal error in %s: %v", args[0], p))
		}
	}()
	rc, bad := check(args)
	switch {
	case bad != nil:
		return *bad
	case rc.impl == nil:
		return errNotImplemented(rc.info.Name)
	}
	return r.call(rc, &cmdCtx{r: r, proto: proto, name: rc.impl.name, argv0: args[0]}, args)
}

// check resolves args as processCommand does before running a command:
// an unknown command or subcommand, or a wrong number of arguments, is an
// error reply.
func check(args []string) (resolved, *resp.Reply) {
	rc, ok := resolve(args)
	switch {
	case !ok:
		bad := errUnknownCommand(args)
		if c, ok := rediscmd.Lookup(args[0]); ok && c.Subcommands {
			bad = resp.ErrorReply(fmt.Sprintf("ERR unknown subcommand '%.128s'. Try %s HELP.", args[1], strings.ToUpper(args[0])))
		}
		return rc, &bad
	case !rc.info.ArityOK(len(args)):
		bad := errArity(rc.info.Name)
		return rc, &bad
	}
	return rc, nil
}

// errUnknownCommand is the server's reply to an unknown command
// (processCommand in server.c): the name and up to 128 bytes of each
// argument, in single quotes.
func errUnknownCommand(args []string) resp.Reply {
	var b strings.Builder
	for _, a := range args[1:] {
		if len(a) > 128 {
			a = a[:128]
		}
		b.WriteString("'" + a + "' ")
	}
	name := args[0]
	if len(name) > 128 {
		name = name[:128]
	}
	return resp.ErrorReply(fmt.Sprintf("ERR unknown command '%s', with args beginning with: %s", name, b.String()))
}

// FromRESP converts a reply into the [runtime.Value] a RESP3 client such as
// rueidis decodes: status, bulk and verbatim strings become KindString, a
// top-level error reply becomes a *[runtime.ReplyError] with "ERR "
// stripped (nested ones KindError, stripped too), maps are sorted by key
// as runtime.FromRueidis sorts them, sets become arrays.
func FromRESP(r resp.Reply) (runtime.Value, error) {
	if r.Kind == resp.Error {
		return runtime.Value{}, &runtime.ReplyError{Msg: strings.TrimPrefix(r.Str, "ERR ")}
	}
	return toValue(r), nil
}

func toValue(r resp.Reply) runtime.Value {
	switch r.Kind {
	case resp.Nil:
		return runtime.Value{}
	case resp.Int:
		return runtime.IntValue(r.Int)
	case resp.Status, resp.Bulk, resp.Verbatim:
		return runtime.StringValue(r.Str)
	case resp.Error:
		return runtime.Value{Kind: runtime.KindError, Str: strings.TrimPrefix(r.Str, "ERR ")}
	case resp.Double:
		return runtime.Value{Kind: runtime.KindDouble, Float: r.Float}
	case resp.Bool:
		return runtime.Value{Kind: runtime.KindBool, Int: r.Int}
	case resp.BigNumber:
		return runtime.Value{Kind: runtime.KindBigNumber, Str: r.Str}
	case resp.Array, resp.Set:
		if len(r.Elems) == 0 {
			return runtime.Value{Kind: runtime.KindArray}
		}
		vs := make([]runtime.Value, len(r.Elems))
		for i, e := range r.Elems {
			vs[i] = toValue(e)
		}
		return runtime.Value{Kind: runtime.KindArray, Array: vs}
	case resp.Map:
		type kv struct {
			k string
			v runtime.Value
		}
		pairs := make([]kv, 0, len(r.Elems)/2)
		for i := 0; i+1 < len(r.Elems); i += 2 {
			pairs = append(pairs, kv{r.Elems[i].Str, toValue(r.Elems[i+1])})
		}
		sort.SliceStable(pairs, func(i, j int) bool { return pairs[i].k < pairs[j].k })
		vs := make([]runtime.Value, 0, len(r.Elems))
		for _, p := range pairs {
			vs = append(vs, runtime.StringValue(p.k), p.v)
		}
		return runtime.Value{Kind: runtime.KindMap, Array: vs}
	}
	return runtime.Value{}
}

// ErrReplyLost is returned by EvalSha and Eval when a fault injected with
// [Redis.LoseReply] fires: the script ran and its effects stay, but the
// caller never got the reply, as after a connection drop. Like a real
// connection error it is not a *[runtime.ReplyError] and
// [runtime.IsTransient] reports it true: runtime.Script.Exec returns it to
// the caller for a script that may not run twice, and sends a script
// declared ---@idempotent again (the script then runs a second time, as
// it would on a server).
var ErrReplyLost = errors.New("luatest: connection lost after the script ran (injected fault): the reply never arrived")
