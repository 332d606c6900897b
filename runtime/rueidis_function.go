package runtime

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/redis/rueidis"
)

var _ FunctionExecutor = (*RueidisExecutor)(nil)

// FCall implements [FunctionExecutor] with FCALL or FCALL_RO. A call
// without keys is routed by its function name's slot, as EvalSha routes by
// the SHA1 (see [NewRueidisExecutor]): always a primary, the same one for a function.
func (r *RueidisExecutor) FCall(ctx context.Context, s *Script, keys, args []string) (Value, error) {
	if err := r.checkSlots(s, keys); err != nil {
		return Value{}, err
	}
	return FromRueidis(r.c.Do(ctx, r.fcallCommand(s, keys, args)))
}

// fcallCommand builds FCALL (FCALL_RO for a read-only script) of s's
// function; without keys it is routed by the function name's slot.
func (r *RueidisExecutor) fcallCommand(s *Script, keys, args []string) rueidis.Completed {
	var cmd rueidis.Completed
	if s.readOnly {
		cmd = r.c.B().FcallRo().Function(s.fn).Numkeys(int64(len(keys))).Key(keys...).Arg(args...).Build()
	} else {
		cmd = r.c.B().Fcall().Function(s.fn).Numkeys(int64(len(keys))).Key(keys...).Arg(args...).Build()
	}
	if len(keys) == 0 {
		cmd = cmd.SetSlot(s.fn)
	}
	return cmd
}

// LoadLibraryFor implements [FunctionExecutor]: [Library.LoadOn] on the
// primary of key's slot, each command routed to it by that slot on a
// cluster client.
func (r *RueidisExecutor) LoadLibraryFor(ctx context.Context, l *Library, key string) error {
	return l.LoadOn(ctx, func(ctx context.Context, args ...string) (Value, error) {
		cmd := r.c.B().Arbitrary(args...).Build()
		if r.cluster {
			cmd = cmd.SetSlot(key)
		}
		return FromRueidis(r.c.Do(ctx, cmd))
	})
}

// LoadLibrary implements [FunctionExecutor]: [Library.LoadOn] on every
// node rueidis knows, at once (see [RueidisExecutor.Load]). Replicas answer
// READONLY to FUNCTION LOAD, which is ignored: their primary replicates
// the library to them. Every node is tried and the other errors are
// joined.
func (r *RueidisExecutor) LoadLibrary(ctx context.Context, l *Library) error {
	return r.onEveryNode(ctx, func(ctx context.Context, addr string, n rueidis.Client) error {
		err := l.LoadOn(ctx, func(ctx context.Context, args ...string) (Value, error) {
			return FromRueidis(n.Do(ctx, n.B().Arbitrary(args...).Build()))
		})
		var re *ReplyError
		if err == nil || errors.As(err, &re) && strings.HasPrefix(re.Msg, "READONLY") {
			return nil
		}
		return fmt.Errorf("on %s: %w", addr, err)
	})
}
