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
	name := "fcall"
	if s.ReadOnly() {
		name = "fcall_ro"
	}
	cmd := e.newCmd(ctx, name, s.FunctionName(), keys, args, true)
	err := e.c.Process(ctx, cmd)
	if err != nil {
		e.lost(ctx, err)
	}
	return FromReply(cmd.Val(), err)
}

// LoadLibrary implements [runtime.FunctionExecutor]: FUNCTION LOAD REPLACE
// on every primary of a *redis.ClusterClient (ForEachMaster; Redis
// replicates functions to replicas), or on the one server of a
// *redis.Client (for a failover client, the current primary). Every node is
// tried; the errors are joined.
func (e *Executor) LoadLibrary(ctx context.Context, l *runtime.Library) error {
	load := func(ctx context.Context, c redis.Cmdable, addr string) error {
		name, err := c.FunctionLoadReplace(ctx, l.Code()).Result()
		if err != nil {
			return fmt.Errorf("FUNCTION LOAD %s on %s: %w", l.Name(), addr, convertErr(err))
		}
		if name != l.Name() {
			return fmt.Errorf("FUNCTION LOAD %s on %s: server loaded %q", l.Name(), addr, name)
		}
		return nil
	}
	var forEach nodeLoop
	if e.cluster != nil {
		forEach = e.cluster.ForEachMaster
	}
	return e.onEveryNode(ctx, forEach, "FUNCTION LOAD "+l.Name(), load)
}
