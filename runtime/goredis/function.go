package goredis

import (
	"context"
	"fmt"

	"github.com/redis/go-redis/v9"

	"github.com/luagen/luagen/runtime"
)

var _ runtime.FunctionExecutor = (*Executor)(nil)

// FCall implements [runtime.FunctionExecutor] with FCALL, or FCALL_RO for
// a read-only script. Like EVALSHA it is never resent by go-redis, and a
// keyless call on a cluster goes to the primary of its function name's
// slot.
func (e *Executor) FCall(ctx context.Context, s *runtime.Script, keys, args []string) (runtime.Value, error) {
	if err := e.checkSlots(s, keys); err != nil {
		return runtime.Value{}, err
	}
	return e.process(ctx, e.c, e.fcallCommand(ctx, s, keys, args))
}

// fcallCommand returns FCALL (FCALL_RO) of s's function as a command
// go-redis never resends; without keys, on a cluster, it is routed by the
// function name's slot.
func (e *Executor) fcallCommand(ctx context.Context, s *runtime.Script, keys, args []string) oneShot {
	if s.ReadOnly() {
		return e.newCmd(ctx, cmdFCallRO, s.FunctionName(), keys, args, true)
	}
	return e.newCmd(ctx, cmdFCall, s.FunctionName(), keys, args, true)
}

// LoadLibraryFor implements [runtime.FunctionExecutor]:
// [runtime.Library.LoadOn] on the primary of key's slot of a
// *redis.ClusterClient (MasterForKey), or on the one server of a
// *redis.Client.
func (e *Executor) LoadLibraryFor(ctx context.Context, l *runtime.Library, key string) error {
	var c redis.UniversalClient = e.c
	if e.cluster != nil {
		node, err := e.cluster.MasterForKey(ctx, key)
		if err != nil {
			return fmt.Errorf("FUNCTION LOAD %s: finding the primary of %q: %w", l.Name(), key, convertErr(err))
		}
		c = node
	}
	return l.LoadOn(ctx, doOn(c))
}

// doOn sends one command to c and converts its reply.
func doOn(c redis.UniversalClient) func(ctx context.Context, args ...string) (runtime.Value, error) {
	return func(ctx context.Context, args ...string) (runtime.Value, error) {
		a := make([]any, len(args))
		for i, s := range args {
			a[i] = s
		}
		cmd := c.Do(ctx, a...)
		return FromGoRedis(cmd.Val(), cmd.Err())
	}
}

// LoadLibrary implements [runtime.FunctionExecutor]: [runtime.Library.LoadOn]
// on every primary of a *redis.ClusterClient (ForEachMaster; Redis
// replicates functions to replicas), or on the one server of a
// *redis.Client (for a failover client, the current primary). Every node is
// tried; the errors are joined.
func (e *Executor) LoadLibrary(ctx context.Context, l *runtime.Library) error {
	load := func(ctx context.Context, c redis.UniversalClient, addr string) error {
		err := l.LoadOn(ctx, doOn(c))
		if err != nil {
			return fmt.Errorf("on %s: %w", addr, err)
		}
		return nil
	}
	var forEach nodeLoop
	if e.cluster != nil {
		forEach = e.cluster.ForEachMaster
	}
	return e.onEveryNode(ctx, forEach, "FUNCTION LOAD "+l.Name(), load)
}
