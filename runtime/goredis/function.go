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
	return e.process(ctx, e.c, e.fcallCommand(ctx, s, keys, args))
}

// fcallCommand returns FCALL (FCALL_RO) of s's function as a command
// go-redis never resends; without keys, on a cluster, it is routed by the
// function name's slot.
func (e *Executor) fcallCommand(ctx context.Context, s *runtime.Script, keys, args []string) oneShot {
	name := "fcall"
	if s.ReadOnly() {
		name = "fcall_ro"
	}
	return e.newCmd(ctx, name, s.FunctionName(), keys, args, true)
}

// LoadLibrary implements [runtime.FunctionExecutor]: [runtime.Library.LoadOn]
// on every primary of a *redis.ClusterClient (ForEachMaster; Redis
// replicates functions to replicas), or on the one server of a
// *redis.Client (for a failover client, the current primary). Every node is
// tried; the errors are joined.
func (e *Executor) LoadLibrary(ctx context.Context, l *runtime.Library) error {
	load := func(ctx context.Context, c redis.UniversalClient, addr string) error {
		err := l.LoadOn(ctx, func(ctx context.Context, args ...string) (runtime.Value, error) {
			a := make([]any, len(args))
			for i, s := range args {
				a[i] = s
			}
			cmd := c.Do(ctx, a...)
			return FromReply(cmd.Val(), cmd.Err())
		})
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
