// Package goredis runs luagen scripts on a go-redis v9 client: NewExecutor adapts a
// redis.UniversalClient (*redis.Client, *redis.ClusterClient, or the
// *redis.Client of redis.NewFailoverClient) to [runtime.Executor].
//
//	rdb := redis.NewUniversalClient(&redis.UniversalOptions{Addrs: addrs})
//	s := stock.New(goredis.NewExecutor(rdb))
//
// It lives in its own package so that a program that only uses the rueidis
// executor (runtime.NewRueidisExecutor) never compiles go-redis. The reverse does not
// hold: package runtime holds the rueidis executor and classifies rueidis'
// errors ([runtime.IsTransient]), so a program that uses only go-redis still
// compiles rueidis.
//
// # No retries
//
// go-redis resends a command after a connection error, a timeout and some
// error replies (LOADING, READONLY, CLUSTERDOWN, TRYAGAIN, ...), up to
// Options.MaxRetries times (error.go shouldRetry; redis.go
// processWithRetry; osscluster.go ClusterClient.process). A script that may
// have run must not be sent again: a second deduct would take the units
// twice. The executor therefore sends EVALSHA and EVAL as commands whose
// NoRetry method answers true, the per-command switch every go-redis retry
// loop consults before a resend (redis.go processWithRetry: `cmd.NoRetry()
// && !forced`; osscluster.go ClusterClient.process: `shouldRetry(...) &&
// !cmd.NoRetry()`; ring.go likewise). The user's client and its options are
// left as they are, and other commands keep go-redis' retries.
//
// go-redis still sends such a command again where it provably did not run:
// after a MOVED or ASK redirect (the key's slot lives elsewhere), after
// READONLY from a cluster replica (a script refused before it ran, or
// stopped at its first write, which a replica refuses), after LOADING from a
// replica (ClusterOptions.ReadOnly), when the connection was found broken
// before the command was written (redis.go _process, "forced"), or when the
// node's pool was closed. What a script with ---@idempotent may do after a
// transient failure is [runtime.Script.Exec]'s decision, not the executor's.
//
// # Replies
//
// Error replies become *[runtime.ReplyError] (without a leading "ERR ", as
// rueidis reports them), a nil reply a nil [runtime.Value] and no error.
// RESP2 and RESP3 replies convert as [runtime.FromRueidis] converts them:
// integers, strings, arrays with nil and error entries, RESP3 maps (sorted
// by key, since go-redis returns a Go map), doubles, booleans and big
// numbers.
//
// One go-redis quirk shows through: go-redis v9.23.0 reads an array reply
// holding an error entry whose text starts with one of the codes it gives
// a type of its own (LOADING, READONLY, MOVED, ASK, CLUSTERDOWN, TRYAGAIN,
// MASTERDOWN, NOREPLICAS, NOAUTH, NOPERM, EXECABORT, OOM) as if the whole
// reply were that error (internal/proto/reader.go readSlice keeps only a
// plain proto.RedisError as an entry), and drops the connection. So a
// script returning, say, {1, redis.pcall('SET', k, v)} under maxmemory
// comes back as an OOM error reply although it ran; rueidis returns the
// array with its error entry. A cluster client even resends a script whose
// reply holds a READONLY, MOVED or ASK entry, taking it for the node's
// answer (osscluster.go ClusterClient.process checks those before NoRetry). Entries with other codes (WRONGTYPE, ERR,
// the script's own) arrive as they should.
package goredis

import (
	"context"
	"errors"
	"fmt"
	"math/big"
	"reflect"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/luagen/luagen/runtime"
)

// Executor is the [runtime.Executor] for a go-redis v9 client. It is safe
// for concurrent use; each call is one command on one of the client's pooled
// connections.
type Executor struct {
	c       redis.UniversalClient
	cluster *redis.ClusterClient // c, when it is a cluster client
	hook    runtime.Hook         // runtime.WithHook; nil for none
	addr    string               // the one server of a *redis.Client, for the hook
}

var (
	_ runtime.Executor  = (*Executor)(nil)
	_ runtime.Hooked    = (*Executor)(nil)
	_ runtime.Addressed = (*Executor)(nil)
)

// NewExecutor returns an Executor that runs scripts on c: a *redis.Client (one
// server, or a Sentinel-managed primary from redis.NewFailoverClient), a
// *redis.ClusterClient (also from redis.NewFailoverClusterClient), or
// whatever redis.NewUniversalClient built. c's options are not changed and
// need no particular setting: EVALSHA and EVAL are never retried by go-redis
// (see the package documentation), whatever MaxRetries says. A
// *redis.Ring works but is not tested, and a keyless script's EVAL may land
// on another shard than its EVALSHA.
//
// A *redis.ClusterClient loads its slot map (CLUSTER SLOTS) and command
// table (COMMAND) on its first call, asking the nodes one after another
// in random order (osscluster.go loadState, cmdsInfo): a node that is up
// but not answering (paused, overloaded) holds that first call until its
// context ends or ReadTimeout passes. Later reloads run in the background.
//
// Options: [runtime.WithHook] attaches a [runtime.Hook] that sees every
// call.
//
// It panics when c is nil (or a nil *redis.Client or *redis.ClusterClient):
// a programming error, reported where it is made.
func NewExecutor(c redis.UniversalClient, opts ...runtime.ExecutorOption) *Executor {
	if c == nil || reflect.ValueOf(c).Kind() == reflect.Pointer && reflect.ValueOf(c).IsNil() {
		panic(fmt.Sprintf("goredis.NewExecutor: the redis.UniversalClient is nil (%T)", c))
	}
	e := &Executor{c: c, hook: runtime.NewExecutorConfig(opts...).Hook}
	e.cluster, _ = c.(*redis.ClusterClient)
	// redis.NewFailoverClient names its primary "FailoverClient" in Addr
	// (sentinel.go clientOptions): the real one changes with failovers.
	if one, ok := c.(*redis.Client); ok && one.Options().Addr != "FailoverClient" {
		e.addr = one.Options().Addr
	}
	return e
}

// Hook implements [runtime.Hooked]: the hook given with
// [runtime.WithHook], or nil.
func (e *Executor) Hook() runtime.Hook { return e.hook }

// ServerAddress implements [runtime.Addressed]: the Addr of a
// *redis.Client, "" for a cluster, a Sentinel-managed primary or a ring.
func (e *Executor) ServerAddress() string { return e.addr }

// Client returns the go-redis client the executor wraps.
func (e *Executor) Client() redis.UniversalClient { return e.c }

// EvalSha implements [runtime.Executor] with EVALSHA, or EVALSHA_RO for a
// read-only script.
func (e *Executor) EvalSha(ctx context.Context, s *runtime.Script, keys, args []string) (runtime.Value, error) {
	return e.run(ctx, false, s, keys, args)
}

// Eval implements [runtime.Executor] with EVAL, or EVAL_RO for a read-only
// script.
func (e *Executor) Eval(ctx context.Context, s *runtime.Script, keys, args []string) (runtime.Value, error) {
	return e.run(ctx, true, s, keys, args)
}

// oneShot is a command go-redis must not send a second time: it answers
// NoRetry with true and is otherwise the *redis.Cmd it embeds. It is one
// pointer wide, so passing it as a redis.Cmder allocates nothing.
type oneShot struct{ *redis.Cmd }

// NoRetry tells go-redis' retry loops not to resend the command.
func (oneShot) NoRetry() bool { return true }

// pipelineCommand returns the command of a pipelined call: FCALL (FCALL_RO) when
// c.FCall is set, else EVALSHA or EVAL as command builds them.
func (e *Executor) pipelineCommand(ctx context.Context, c *runtime.PipelineCall) oneShot {
	if c.FCall {
		return e.fcallCommand(ctx, c.Script, c.Keys, c.Args)
	}
	return e.command(ctx, c.Script, c.Keys, c.Args, c.Eval)
}

// command returns EVALSHA (EVALSHA_RO) for s, or EVAL (EVAL_RO) when eval
// is set, as a command go-redis never resends. A call with keys is routed
// by KEYS[1]; on a cluster an EVALSHA without keys by its SHA1 (see run).
func (e *Executor) command(ctx context.Context, s *runtime.Script, keys, args []string, eval bool) oneShot {
	switch {
	case eval && s.ReadOnly():
		return e.newCmd(ctx, cmdEvalRO, s.Body(), keys, args, false)
	case eval:
		return e.newCmd(ctx, cmdEval, s.Body(), keys, args, false)
	case s.ReadOnly():
		return e.newCmd(ctx, cmdEvalShaRO, s.SHA1(), keys, args, true)
	}
	return e.newCmd(ctx, cmdEvalSha, s.SHA1(), keys, args, true)
}

// The command names newCmd sends, as the interface values go-redis takes:
// made once here, where a string variable made into an interface in each
// call would be an allocation per call.
var (
	cmdEvalSha   any = "evalsha"
	cmdEvalShaRO any = "evalsha_ro"
	cmdEval      any = "eval"
	cmdEvalRO    any = "eval_ro"
	cmdFCall     any = "fcall"
	cmdFCallRO   any = "fcall_ro"
)

// newCmd builds name payload numkeys keys... args... (EVALSHA, EVAL, FCALL
// and their _RO forms; name is one of the cmd* values) as a command
// go-redis never resends. A call with keys is routed by KEYS[1]; on a
// cluster a keyless one by the slot of its payload (a SHA1 or a function
// name) when byPayload is set.
func (e *Executor) newCmd(ctx context.Context, name any, payload string, keys, args []string, byPayload bool) oneShot {
	a := make([]any, 3+len(keys)+len(args))
	a[0], a[1], a[2] = name, payload, len(keys)
	for i, k := range keys {
		a[3+i] = k
	}
	for i, v := range args {
		a[3+len(keys)+i] = v
	}
	cmd := oneShot{redis.NewCmd(ctx, a...)}
	switch {
	case len(keys) > 0:
		cmd.SetFirstKeyPos(3) // KEYS[1] picks the cluster node
	case e.cluster != nil && byPayload:
		// A script without keys touches no key, so any node could run
		// it; go-redis would pick a random one, replicas included, where
		// Redis 7 refuses a script that may write. Routing by the SHA1's
		// (function name's) slot sends it to a primary, the same one for
		// every call of one script (wherever failovers moved that slot),
		// and spreads different scripts over the shards: what
		// runtime.NewRueidisExecutor does.
		cmd.SetFirstKeyPos(1)
	}
	return cmd
}

// run sends EVALSHA, or EVAL when eval is set.
func (e *Executor) run(ctx context.Context, eval bool, s *runtime.Script, keys, args []string) (runtime.Value, error) {
	if err := e.checkSlots(s, keys); err != nil {
		return runtime.Value{}, err
	}
	cmd := e.command(ctx, s, keys, args, eval)
	var c processor = e.c
	if e.cluster != nil && len(keys) == 0 && eval {
		// EVAL carries the body, not the SHA1, so ask the cluster for the
		// SHA1's primary itself: the EVAL must land where the EVALSHA did
		// (it caches the script there). No MOVED can come back, since the
		// command has no key.
		node, err := e.cluster.MasterForKey(ctx, s.SHA1())
		if err != nil {
			return runtime.Value{}, err
		}
		c = node
	}
	return e.process(ctx, c, cmd)
}

// checkSlots refuses, on a cluster client, a call whose keys hash to
// several slots with *[runtime.CrossSlotError] (OnCluster set for a script
// with flags=allow-cross-slot-keys), as [runtime.NewRueidisExecutor] does, before
// anything is sent: Redis Cluster would answer CROSSSLOT whatever the
// script's flags, and the same failure has the same type on every
// executor.
func (e *Executor) checkSlots(s *runtime.Script, keys []string) error {
	if e.cluster == nil {
		return nil
	}
	err := runtime.CheckSlots(s.Name(), keys)
	if err != nil {
		err.(*runtime.CrossSlotError).OnCluster = s.AllowCrossSlot()
	}
	return err
}

// process sends cmd with c (the client, or a cluster node) and converts its
// reply, asking for a slot-map refresh after a connection error (see lost).
func (e *Executor) process(ctx context.Context, c processor, cmd oneShot) (runtime.Value, error) {
	err := c.Process(ctx, cmd)
	if err != nil {
		e.lost(ctx, err)
	}
	return FromGoRedis(cmd.Val(), err)
}

// processor is what process sends with: a go-redis client or node.
type processor interface {
	Process(context.Context, redis.Cmder) error
}

// lost handles a failed command: a connection error may mean the node is
// gone (a killed primary); go-redis refreshes its slot map on MOVED and
// READONLY but not here, since the command is not retried. Ask for a
// refresh so that the caller's next try reaches the new primary.
func (e *Executor) lost(ctx context.Context, err error) {
	if e.cluster != nil && !isReply(err) && ctx.Err() == nil {
		e.cluster.ReloadState(ctx)
	}
}

var _ runtime.Pipeliner = (*Executor)(nil)

// Pipeline implements [runtime.Pipeliner] with one go-redis pipeline: one
// round trip on a single server; on a cluster, go-redis groups the calls by
// the node of their KEYS[1] and sends each node's share in one round trip,
// the nodes in parallel, following MOVED and ASK redirects. Like single
// calls, the commands are never resent after a connection error (a pipeline
// holding a NoRetry command is not retried, cmdsContainNoRetry in
// go-redis). On a cluster, an EVAL without keys cannot be routed to its
// SHA1's primary inside a pipeline, so it is sent on its own. Calls with
// FCall set go as FCALL (FCALL_RO), routed as [Executor.FCall] routes them.
func (e *Executor) Pipeline(ctx context.Context, calls []*runtime.PipelineCall) {
	pipe := e.c.Pipeline()
	cmds := make([]oneShot, 0, len(calls))
	sent := make([]*runtime.PipelineCall, 0, len(calls))
	for _, c := range calls {
		if err := e.checkSlots(c.Script, c.Keys); err != nil {
			c.Value, c.Err = runtime.Value{}, err
			continue
		}
		if e.cluster != nil && len(c.Keys) == 0 && c.Eval && !c.FCall {
			c.Value, c.Err = e.run(ctx, true, c.Script, c.Keys, c.Args)
			continue
		}
		cmd := e.pipelineCommand(ctx, c)
		_ = pipe.Process(ctx, cmd) // queues; errors arrive per command
		cmds = append(cmds, cmd)
		sent = append(sent, c)
	}
	if len(cmds) == 0 {
		return
	}
	_, _ = pipe.Exec(ctx) // the first error; each command has its own
	var lostErr error
	for i, cmd := range cmds {
		err := cmd.Err()
		sent[i].Value, sent[i].Err = FromGoRedis(cmd.Val(), err)
		if err != nil && !isReply(err) {
			lostErr = err
		}
	}
	if lostErr != nil {
		e.lost(ctx, lostErr)
	}
}

// isReply reports whether err is an error reply, or a nil reply.
func isReply(err error) bool {
	var re redis.Error
	return errors.As(err, &re)
}

// Load implements [runtime.Executor]: SCRIPT LOAD on every node go-redis
// knows that may run s. A *redis.ClusterClient loads it on every primary
// and replica (ForEachShard, which first reloads the slot map from CLUSTER
// SLOTS: Redis 7.0 leaves out a replica whose replication offset is still
// 0). A *redis.Client loads it on its one server; for a failover client
// that is the current primary only, since go-redis exposes no replica of a
// failover client: after a Sentinel failover the promoted replica answers
// NOSCRIPT once and [runtime.Script.Exec] falls back to EVAL. Every node is
// tried; the errors are joined, and a node answering another SHA1 than
// s.SHA1() is an error.
func (e *Executor) Load(ctx context.Context, s *runtime.Script) error {
	load := func(ctx context.Context, c redis.UniversalClient, addr string) error {
		sha, err := c.ScriptLoad(ctx, s.Body()).Result()
		if err != nil {
			return fmt.Errorf("SCRIPT LOAD %s on %s: %w", s.Name(), addr, convertErr(err))
		}
		if sha != s.SHA1() {
			return fmt.Errorf("SCRIPT LOAD %s on %s: server SHA1 %s, want %s", s.Name(), addr, sha, s.SHA1())
		}
		return nil
	}
	var forEach nodeLoop
	if shards, ok := e.c.(interface {
		ForEachShard(context.Context, func(context.Context, *redis.Client) error) error
	}); ok {
		forEach = shards.ForEachShard
	}
	return e.onEveryNode(ctx, forEach, "SCRIPT LOAD "+s.Name(), load)
}

// nodeLoop is ClusterClient.ForEachShard or ForEachMaster: it runs fn on
// each node concurrently and returns fn's first error or its own.
type nodeLoop func(context.Context, func(context.Context, *redis.Client) error) error

// onEveryNode runs do on every node forEach visits, or, with forEach nil,
// on e's one server ("the server" when go-redis exposes no address). Every
// node is tried; their errors and forEach's own (wrapped with what) are
// joined, where go-redis would keep only the first.
func (e *Executor) onEveryNode(ctx context.Context, forEach nodeLoop, what string, do func(ctx context.Context, c redis.UniversalClient, addr string) error) error {
	if forEach == nil {
		addr := "the server"
		if c, ok := e.c.(*redis.Client); ok {
			addr = c.Options().Addr
		}
		return do(ctx, e.c, addr)
	}
	var (
		mu   sync.Mutex
		errs []error
	)
	err := forEach(ctx, func(ctx context.Context, c *redis.Client) error {
		if err := do(ctx, c, c.Options().Addr); err != nil {
			mu.Lock()
			errs = append(errs, err)
			mu.Unlock()
		}
		return nil
	})
	if err != nil {
		errs = append(errs, fmt.Errorf("%s: %w", what, convertErr(err)))
	}
	return errors.Join(errs...)
}

// FromGoRedis converts a go-redis reply (redis.Cmd's Val and Err) to a
// [runtime.Value] as [runtime.FromRueidis] does: an error reply becomes
// *[runtime.ReplyError] without a leading "ERR ", redis.Nil a nil Value
// and no error, redis.ErrClosed an error that also matches
// [runtime.ErrClientClosed]; any other error is returned unchanged.
// A scalar reply does not allocate.
func FromGoRedis(v any, err error) (runtime.Value, error) {
	if err != nil {
		if errors.Is(err, redis.Nil) {
			return runtime.Value{}, nil
		}
		return runtime.Value{}, convertErr(err)
	}
	return fromAny(v), nil
}

func convertErr(err error) error {
	var re redis.Error
	switch {
	case errors.As(err, &re):
		return &runtime.ReplyError{Msg: strings.TrimPrefix(re.Error(), "ERR ")}
	case errors.Is(err, redis.ErrClosed):
		return closedError{err}
	}
	return err
}

// closedError is go-redis' "client is closed", matching
// runtime.ErrClientClosed as well.
type closedError struct{ err error }

func (e closedError) Error() string   { return e.err.Error() }
func (e closedError) Unwrap() []error { return []error{e.err, runtime.ErrClientClosed} }

// fromAny converts what go-redis' proto.Reader.ReadReply returns.
func fromAny(v any) runtime.Value {
	switch v := v.(type) {
	case nil:
		return runtime.Value{}
	case int64:
		return runtime.Value{Kind: runtime.KindInt, Int: v}
	case string: // bulk, simple and verbatim strings
		return runtime.Value{Kind: runtime.KindString, Str: v}
	case []any: // arrays and RESP3 sets
		if len(v) == 0 {
			return runtime.Value{Kind: runtime.KindArray}
		}
		vs := make([]runtime.Value, len(v))
		for i, e := range v {
			vs[i] = fromAny(e)
		}
		return runtime.Value{Kind: runtime.KindArray, Array: vs}
	case map[any]any:
		// go-redis returns RESP3 maps as Go maps, so the server's pair order
		// is lost; sort by key as runtime.FromRueidis does.
		pairs := make([][2]runtime.Value, 0, len(v))
		for k, e := range v {
			pairs = append(pairs, [2]runtime.Value{fromAny(k), fromAny(e)})
		}
		slices.SortFunc(pairs, func(a, b [2]runtime.Value) int { return strings.Compare(sortKey(a[0]), sortKey(b[0])) })
		vs := make([]runtime.Value, 0, 2*len(pairs))
		for _, p := range pairs {
			vs = append(vs, p[0], p[1])
		}
		return runtime.Value{Kind: runtime.KindMap, Array: vs}
	case float64:
		return runtime.Value{Kind: runtime.KindDouble, Float: v}
	case bool:
		r := runtime.Value{Kind: runtime.KindBool}
		if v {
			r.Int = 1
		}
		return r
	case *big.Int:
		return runtime.Value{Kind: runtime.KindBigNumber, Str: v.String()}
	case error: // an error entry inside an array or map
		return runtime.Value{Kind: runtime.KindError, Str: strings.TrimPrefix(v.Error(), "ERR ")}
	}
	return runtime.Value{Kind: runtime.KindString, Str: fmt.Sprint(v)}
}

func sortKey(v runtime.Value) string {
	if v.Kind == runtime.KindString {
		return v.Str
	}
	return v.String()
}

// ReleasesArgs implements [runtime.ArgReleaser]: go-redis writes a
// command's arguments on the caller's goroutine and keeps none of them once
// it has the reply.
func (e *Executor) ReleasesArgs() bool { return true }

var _ runtime.ReplicaWaiter = (*Executor)(nil)

// EvalShaWait implements [runtime.ReplicaWaiter]: EVALSHA (EVALSHA_RO)
// and WAIT in one go-redis pipeline, which a *redis.Client (also a
// failover client's) sends on one pooled connection, so that WAIT covers
// the script's writes. A cluster client would route the keyless WAIT to
// a random node (osscluster.go cmdSlot), so on a cluster both go
// through the pipeline of the primary of KEYS[1]'s slot (MasterForKey);
// after a MOVED reply (the slot moved: a failover) the call waits for
// the reloaded slot map to name the reply's node and is sent once more,
// to the new primary, as go-redis itself follows MOVED. go-redis reads a pipeline's replies within the
// client's ReadTimeout (3 s by default), not WAIT's timeout: keep w.Timeout
// below it.
func (e *Executor) EvalShaWait(ctx context.Context, s *runtime.Script, keys, args []string, w *runtime.Wait) (runtime.Value, error) {
	return e.runWait(ctx, false, s, keys, args, w)
}

// EvalWait implements [runtime.ReplicaWaiter]: EVAL (EVAL_RO) and WAIT,
// as [Executor.EvalShaWait].
func (e *Executor) EvalWait(ctx context.Context, s *runtime.Script, keys, args []string, w *runtime.Wait) (runtime.Value, error) {
	return e.runWait(ctx, true, s, keys, args, w)
}

// maxRedirects bounds how often runWait follows MOVED on a cluster, as
// go-redis' ClusterOptions.MaxRedirects does by default.
const maxRedirects = 3

// movedWait bounds how long awaitPrimary waits for the slot map: a few
// of go-redis' reloads, which run at most every 200 ms (LazyReload's
// cooldown in osscluster.go).
const movedWait = time.Second

// awaitPrimary waits, within ctx and movedWait, until the cluster
// client's slot map names addr (a MOVED reply's) as the primary of key's
// slot. ReloadState only starts a reload in the background, so asking
// MasterForKey at once would find the demoted node again, and three quick
// MOVED replies would end the call as MOVED; go-redis' own commands
// follow the reply's address instead, which a pipeline of one node cannot.
func (e *Executor) awaitPrimary(ctx context.Context, key, addr string) {
	deadline := time.Now().Add(movedWait)
	for {
		e.cluster.ReloadState(ctx)
		if node, err := e.cluster.MasterForKey(ctx, key); err == nil && node.Options().Addr == addr {
			return
		}
		if !time.Now().Before(deadline) {
			return
		}
		t := time.NewTimer(10 * time.Millisecond)
		select {
		case <-ctx.Done():
			t.Stop()
			return
		case <-t.C:
		}
	}
}

func (e *Executor) runWait(ctx context.Context, eval bool, s *runtime.Script, keys, args []string, w *runtime.Wait) (runtime.Value, error) {
	if err := e.checkSlots(s, keys); err != nil {
		return runtime.Value{}, err
	}
	key := s.SHA1() // what routes the call on a cluster
	if len(keys) > 0 {
		key = keys[0]
	}
	for redirects := 0; ; redirects++ {
		var c redis.Pipeliner
		if e.cluster != nil {
			node, err := e.cluster.MasterForKey(ctx, key)
			if err != nil {
				return runtime.Value{}, err
			}
			c = node.Pipeline()
		} else {
			c = e.c.Pipeline()
		}
		cmd := e.command(ctx, s, keys, args, eval)
		_ = c.Process(ctx, cmd)
		wait := redis.NewIntCmd(ctx, "wait", w.Replicas, w.Millis())
		_ = c.Process(ctx, wait)
		_, _ = c.Exec(ctx) // each command has its own error
		err := cmd.Err()
		if err != nil {
			if addr, moved := redis.IsMovedError(err); moved && e.cluster != nil && redirects < maxRedirects {
				e.awaitPrimary(ctx, key, addr)
				continue // the script did not run: its slot is elsewhere
			}
			e.lost(ctx, err)
			return FromGoRedis(cmd.Val(), err)
		}
		v, err := FromGoRedis(cmd.Val(), nil)
		if err != nil {
			return v, err
		}
		w.Acked, w.Err = 0, nil
		if n, err := wait.Result(); err != nil {
			w.Err = convertErr(err)
		} else {
			w.Acked = n
		}
		return v, nil
	}
}
