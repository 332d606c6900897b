package runtime

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"sync"

	"github.com/redis/rueidis"
)

// RueidisExecutor is the [Executor] for a rueidis.Client: single node,
// sentinel or cluster. Concurrent calls share rueidis' auto-pipelining.
type RueidisExecutor struct {
	c       rueidis.Client
	cluster bool   // c is a cluster client: rueidis panics on cross-slot keys
	hook    Hook   // WithHook; nil for none
	addr    string // the one server of a standalone client, for the hook
}

var (
	_ Executor  = (*RueidisExecutor)(nil)
	_ Hooked    = (*RueidisExecutor)(nil)
	_ Addressed = (*RueidisExecutor)(nil)
)

// NewRueidisExecutor returns an [Executor] that runs scripts on c. Commands are sent as
// rueidis builds them by default: EVALSHA and EVAL are not retried after a
// connection error, so a script never runs twice behind the caller's back.
//
// On a cluster client, a call whose KEYS hash to more than one slot fails
// with *[CrossSlotError] before anything is sent, even for a script with
// flags=allow-cross-slot-keys (the error then has OnCluster set): Redis
// Cluster refuses such a call whatever the flags (getNodeByQuery in
// cluster.c checks the declared KEYS; the flag only lets a script reach
// undeclared keys of other slots on the node it runs on), and rueidis'
// command builder would panic on it.
//
// Options: [WithHook] attaches a [Hook] that sees every call.
//
// It panics when c is nil: a programming error, reported where it is made.
func NewRueidisExecutor(c rueidis.Client, opts ...ExecutorOption) *RueidisExecutor {
	mustNotBeNil(c, "runtime.NewRueidisExecutor: the rueidis.Client")
	cfg := NewExecutorConfig(opts...)
	r := &RueidisExecutor{c: c, cluster: c.Mode() == rueidis.ClientModeCluster, hook: cfg.Hook}
	if c.Mode() == rueidis.ClientModeStandalone {
		if nodes := c.Nodes(); len(nodes) == 1 {
			for addr := range nodes {
				r.addr = addr
			}
		}
	}
	return r
}

// Hook implements [Hooked]: the hook given with [WithHook], or nil.
func (r *RueidisExecutor) Hook() Hook { return r.hook }

// ServerAddress implements [Addressed]: the "host:port" of a standalone
// client's server (as rueidis' Client.Nodes names it), "" on a cluster or
// Sentinel client, whose calls may go to several servers over time.
func (r *RueidisExecutor) ServerAddress() string { return r.addr }

// Client returns the rueidis.Client the executor wraps.
func (r *RueidisExecutor) Client() rueidis.Client { return r.c }

// EvalSha implements [Executor] with EVALSHA or EVALSHA_RO.
func (r *RueidisExecutor) EvalSha(ctx context.Context, s *Script, keys, args []string) (Value, error) {
	if err := r.checkSlots(s, keys); err != nil {
		return Value{}, err
	}
	return FromRueidis(r.c.Do(ctx, r.command(s, keys, args, false)))
}

// Eval implements [Executor] with EVAL or EVAL_RO.
func (r *RueidisExecutor) Eval(ctx context.Context, s *Script, keys, args []string) (Value, error) {
	if err := r.checkSlots(s, keys); err != nil {
		return Value{}, err
	}
	return FromRueidis(r.c.Do(ctx, r.command(s, keys, args, true)))
}

var _ Pipeliner = (*RueidisExecutor)(nil)

// Pipeline implements [Pipeliner] with one DoMulti: rueidis writes the
// commands of one node back to back on its connection, and on a cluster
// splits them by slot over the nodes, all in flight at once. Calls with
// FCall set go as FCALL (FCALL_RO), built and routed as [RueidisExecutor.FCall]
// builds them. A call with
// keys of several slots on a cluster gets *[CrossSlotError] and is not
// sent.
func (r *RueidisExecutor) Pipeline(ctx context.Context, calls []*PipelineCall) {
	cmds := make(rueidis.Commands, 0, len(calls))
	sent := make([]*PipelineCall, 0, len(calls))
	for _, c := range calls {
		if err := r.checkSlots(c.Script, c.Keys); err != nil {
			c.Value, c.Err = Value{}, err
			continue
		}
		if c.FCall {
			cmds = append(cmds, r.fcallCommand(c.Script, c.Keys, c.Args))
		} else {
			cmds = append(cmds, r.command(c.Script, c.Keys, c.Args, c.Eval))
		}
		sent = append(sent, c)
	}
	if len(cmds) == 0 {
		return
	}
	for i, res := range r.c.DoMulti(ctx, cmds...) {
		sent[i].Value, sent[i].Err = FromRueidis(res)
	}
}

var _ ReplicaWaiter = (*RueidisExecutor)(nil)

// EvalShaWait implements [ReplicaWaiter]: EVALSHA (EVALSHA_RO) and WAIT in
// one DoMulti. rueidis sends a DoMulti holding a blocking command (WAIT
// is one) on one dedicated connection of its pool (mux.go DoMulti,
// blockingMulti), so WAIT covers the script's writes and does not hold up
// the auto-pipelined connection while it blocks. On a cluster WAIT gets
// the slot of KEYS[1] (of the SHA1 for a keyless script, where EVALSHA
// goes too), so both commands go to that slot's primary on one
// connection.
func (r *RueidisExecutor) EvalShaWait(ctx context.Context, s *Script, keys, args []string, w *Wait) (Value, error) {
	return r.evalWait(ctx, s, keys, args, false, w)
}

// EvalWait implements [ReplicaWaiter]: EVAL (EVAL_RO) and WAIT, as
// [RueidisExecutor.EvalShaWait].
func (r *RueidisExecutor) EvalWait(ctx context.Context, s *Script, keys, args []string, w *Wait) (Value, error) {
	return r.evalWait(ctx, s, keys, args, true, w)
}

func (r *RueidisExecutor) evalWait(ctx context.Context, s *Script, keys, args []string, eval bool, w *Wait) (Value, error) {
	if err := r.checkSlots(s, keys); err != nil {
		return Value{}, err
	}
	wait := r.c.B().Wait().Numreplicas(w.Replicas).Timeout(w.Millis()).Build()
	if r.cluster {
		if len(keys) > 0 {
			wait = wait.SetSlot(keys[0])
		} else {
			wait = wait.SetSlot(s.sha1)
		}
	}
	res := r.c.DoMulti(ctx, r.command(s, keys, args, eval), wait)
	v, err := FromRueidis(res[0])
	if err != nil {
		return Value{}, err
	}
	w.Acked, w.Err = 0, nil
	if n, err := res[1].AsInt64(); err != nil {
		w.Err = convertErr(err)
	} else {
		w.Acked = n
	}
	return v, nil
}

// command builds EVALSHA, or EVAL when eval is set (their _RO forms for a
// read-only script), routed as [route] says.
func (r *RueidisExecutor) command(s *Script, keys, args []string, eval bool) rueidis.Completed {
	var cmd rueidis.Completed
	switch {
	case eval && s.readOnly:
		cmd = r.c.B().EvalRo().Script(s.body).Numkeys(int64(len(keys))).Key(keys...).Arg(args...).Build()
	case eval:
		cmd = r.c.B().Eval().Script(s.body).Numkeys(int64(len(keys))).Key(keys...).Arg(args...).Build()
	case s.readOnly:
		cmd = r.c.B().EvalshaRo().Sha1(s.sha1).Numkeys(int64(len(keys))).Key(keys...).Arg(args...).Build()
	default:
		cmd = r.c.B().Evalsha().Sha1(s.sha1).Numkeys(int64(len(keys))).Key(keys...).Arg(args...).Build()
	}
	return route(cmd, s, keys)
}

// checkSlots refuses, on a cluster client, keys that hash to more than one
// slot (see [NewRueidisExecutor]). [Script.Exec] has checked them already unless the
// script allows cross-slot keys; the check is repeated here for every call
// because the builder's panic must be unreachable from any caller.
func (r *RueidisExecutor) checkSlots(s *Script, keys []string) error {
	if !r.cluster {
		return nil
	}
	err := CheckSlots(s.name, keys)
	if err != nil {
		err.(*CrossSlotError).OnCluster = s.anySlot
	}
	return err
}

// route gives a call without keys a slot: the one its SHA1 hashes to.
//
// A script without keys touches no key, so on a cluster any node could run
// it, and rueidis sends a command without a slot to a random connection —
// replicas included, where Redis 7 refuses a script that may write with
// "READONLY You can't write against a read only replica" before running it.
// With the SHA1's slot the call always goes to a primary (the one serving
// that slot, wherever failovers have moved it), one script always to the
// same node, and different keyless scripts spread over the shards. On a
// single node or sentinel client the slot is ignored.
func route(cmd rueidis.Completed, s *Script, keys []string) rueidis.Completed {
	if len(keys) == 0 {
		return cmd.SetSlot(s.sha1)
	}
	return cmd
}

// Load implements [Executor]: SCRIPT LOAD on every node rueidis knows
// (Client.Nodes: on a cluster, the primaries and the replicas CLUSTER SLOTS
// listed at the last topology refresh; Redis 7.0 leaves out a replica whose
// replication offset is still 0, i.e. before its primary's first write or
// replication PING). It tries every node at once and
// joins their errors. A node it missed answers NOSCRIPT on first use, and
// Exec falls back to EVAL.
func (r *RueidisExecutor) Load(ctx context.Context, s *Script) error {
	return r.onEveryNode(ctx, func(ctx context.Context, addr string, n rueidis.Client) error {
		sha, err := n.Do(ctx, n.B().ScriptLoad().Script(s.body).Build()).ToString()
		switch {
		case err != nil:
			return fmt.Errorf("SCRIPT LOAD %s on %s: %w", s.name, addr, convertErr(err))
		case sha != s.sha1:
			return fmt.Errorf("SCRIPT LOAD %s on %s: server SHA1 %s, want %s", s.name, addr, sha, s.sha1)
		}
		return nil
	})
}

// onEveryNode runs do on every node of Client.Nodes concurrently, waits
// for all of them and joins their errors in address order. The commands
// it sends are not marked retryable: rueidis retries a retryable command
// on a connection error until ctx ends, so one replica down would hold a
// Preload (and a service's start) for as long as ctx lasts. Each node
// fails on its own instead, at once when it refuses the connection, and
// at the latest when ctx ends when it is stalled; the others load.
func (r *RueidisExecutor) onEveryNode(ctx context.Context, do func(ctx context.Context, addr string, n rueidis.Client) error) error {
	_, _, errs := eachNode(ctx, r.c.Nodes(), do)
	return errors.Join(errs...)
}

// eachNode is onEveryNode's loop: it runs do on every node of nodes at
// once and returns their addresses in order, with each node's client and
// error at the same index.
func eachNode(ctx context.Context, nodes map[string]rueidis.Client, do func(ctx context.Context, addr string, n rueidis.Client) error) ([]string, []rueidis.Client, []error) {
	addrs := slices.Sorted(maps.Keys(nodes))
	clients := make([]rueidis.Client, len(addrs))
	errs := make([]error, len(addrs))
	var wg sync.WaitGroup
	for i, addr := range addrs {
		clients[i] = nodes[addr]
		wg.Go(func() { errs[i] = do(ctx, addr, clients[i]) })
	}
	wg.Wait()
	return addrs, clients, errs
}

// FromRueidis converts a rueidis result to a [Value], turning error replies
// into *[ReplyError] and a nil reply into a nil Value.
// A scalar reply does not allocate.
func FromRueidis(res rueidis.RedisResult) (Value, error) {
	if err := res.NonRedisError(); err != nil {
		return Value{}, convertErr(err)
	}
	msg, err := res.ToMessage()
	if err != nil {
		if rueidis.IsRedisNil(err) {
			return Value{}, nil
		}
		return Value{}, convertErr(err)
	}
	return fromMessage(&msg), nil
}

// convertErr turns a rueidis error reply into *[ReplyError] and
// rueidis.ErrClosing into an error that matches [ErrClientClosed] as well,
// as runtime/goredis does with go-redis' redis.ErrClosed; any other error
// is returned as it is.
func convertErr(err error) error {
	if re, ok := rueidis.IsRedisErr(err); ok {
		return &ReplyError{Msg: re.Error()}
	}
	if errors.Is(err, rueidis.ErrClosing) {
		return closedError{err}
	}
	return err
}

// closedError is rueidis.ErrClosing, matching [ErrClientClosed] as well.
type closedError struct{ err error }

func (e closedError) Error() string   { return e.err.Error() }
func (e closedError) Unwrap() []error { return []error{e.err, ErrClientClosed} }

func fromMessage(m *rueidis.RedisMessage) Value {
	switch {
	case m.IsNil():
		return Value{}
	case m.IsInt64():
		n, _ := m.ToInt64()
		return Value{Kind: KindInt, Int: n}
	case m.IsString():
		s, _ := m.ToString()
		return Value{Kind: KindString, Str: s}
	case m.IsArray():
		arr, _ := m.ToArray()
		if len(arr) == 0 {
			return Value{Kind: KindArray}
		}
		vs := make([]Value, len(arr))
		for i := range arr {
			vs[i] = fromMessage(&arr[i])
		}
		return Value{Kind: KindArray, Array: vs}
	case m.IsMap():
		// rueidis exposes RESP3 maps only as Go maps, so the server's pair
		// order is lost; sort by key to keep Values deterministic.
		mm, _ := m.ToMap()
		vs := make([]Value, 0, 2*len(mm))
		for _, k := range slices.Sorted(maps.Keys(mm)) {
			v := mm[k]
			vs = append(vs, Value{Kind: KindString, Str: k}, fromMessage(&v))
		}
		return Value{Kind: KindMap, Array: vs}
	case m.IsBool():
		b, _ := m.ToBool()
		v := Value{Kind: KindBool}
		if b {
			v.Int = 1
		}
		return v
	case m.IsFloat64():
		f, _ := m.ToFloat64()
		return Value{Kind: KindDouble, Float: f}
	}
	if err := m.Error(); err != nil {
		return Value{Kind: KindError, Str: err.Error()}
	}
	// Verbatim strings and big numbers: rueidis exposes both through ToAny
	// as strings.
	if a, err := m.ToAny(); err == nil {
		if s, ok := a.(string); ok {
			if _, err := strconv.ParseInt(s, 10, 64); err != nil && isDigits(s) {
				return Value{Kind: KindBigNumber, Str: s}
			}
			return Value{Kind: KindString, Str: s}
		}
	}
	return Value{Kind: KindString, Str: m.String()}
}

func isDigits(s string) bool {
	if s != "" && s[0] == '-' {
		s = s[1:]
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return s != ""
}

// ReleasesArgs implements [ArgReleaser]: rueidis copies a command's
// arguments onto the wire and keeps none of them once it has the reply.
func (r *RueidisExecutor) ReleasesArgs() bool { return true }
