package luatest

import (
	"context"
	"fmt"
	"strings"

	"github.com/luagen/luagen/luatest/resp"
	"github.com/luagen/luagen/runtime"
)

var _ runtime.FunctionExecutor = (*Redis)(nil)

// FCall implements [runtime.FunctionExecutor] with FCALL (FCALL_RO for a
// read-only script): a library never loaded, or dropped with FUNCTION
// FLUSH, answers "Function not found" as the server does, and
// runtime.Script.Exec loads it and calls again. Lines in the call log and
// in KEYS-check messages are lines of the script's .lua file.
func (r *Redis) FCall(ctx context.Context, s *runtime.Script, keys, args []string) (v runtime.Value, err error) {
	if err := ctx.Err(); err != nil {
		return runtime.Value{}, err
	}
	r.lock()
	defer r.mu.Unlock()
	if r.closed {
		return runtime.Value{}, errClosed
	}
	defer func() {
		if p := recover(); p != nil {
			v, err = runtime.Value{}, &runtime.ReplyError{Msg: fmt.Sprintf("luatest: internal error running %s: %v", s.Name(), p)}
		}
	}()
	fn := r.fns().cur.funcs[strings.ToLower(s.FunctionName())]
	if fn == nil {
		return FromRESP(resp.ErrorReply("ERR Function not found"))
	}
	reply := r.callFunctionShifted(fn, keys, args,
		runOptions{proto: 3, ro: s.ReadOnly(), src: s, ctx: ctx, mode: runtime.ModeFCall}, s.FunctionLine()-1)
	return r.replied(ctx, reply)
}

// LoadLibraryFor implements [runtime.FunctionExecutor]: there is one
// node, so it is [Redis.LoadLibrary].
func (r *Redis) LoadLibraryFor(ctx context.Context, l *runtime.Library, _ string) error {
	return r.LoadLibrary(ctx, l)
}

// LoadLibrary implements [runtime.FunctionExecutor] with
// [runtime.Library.LoadOn]: FUNCTION LOAD, then the package's oldest
// versions pruned.
func (r *Redis) LoadLibrary(ctx context.Context, l *runtime.Library) error {
	return l.LoadOn(ctx, func(ctx context.Context, args ...string) (runtime.Value, error) {
		if err := ctx.Err(); err != nil {
			return runtime.Value{}, err
		}
		r.lock()
		closed := r.closed
		r.mu.Unlock()
		if closed {
			return runtime.Value{}, errClosed
		}
		return r.Do(args...)
	})
}
