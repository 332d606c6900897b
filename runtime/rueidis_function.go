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
// the SHA1 (see [Rueidis]): always a primary, the same one for a function.
func (r *RueidisExecutor) FCall(ctx context.Context, s *Script, keys, args []string) (Value, error) {
	if err := r.checkSlots(s, keys); err != nil {
		return Value{}, err
	}
	var cmd rueidis.Completed
	if s.readOnly {
		cmd = r.c.B().FcallRo().Function(s.fn).Numkeys(int64(len(keys))).Key(keys...).Arg(args...).Build()
	} else {
		cmd = r.c.B().Fcall().Function(s.fn).Numkeys(int64(len(keys))).Key(keys...).Arg(args...).Build()
	}
	if len(keys) == 0 {
		cmd = cmd.SetSlot(s.fn)
	}
	return FromRueidis(r.c.Do(ctx, cmd))
}

// LoadLibrary implements [FunctionExecutor]: FUNCTION LOAD REPLACE on
// every node rueidis knows. Replicas answer READONLY, which is ignored:
// their primary replicates the library to them. Every node is tried and
// the other errors are joined.
func (r *RueidisExecutor) LoadLibrary(ctx context.Context, l *Library) error {
	var errs []error
	for addr, n := range r.c.Nodes() {
		res := n.Do(ctx, n.B().FunctionLoad().Replace().FunctionCode(l.code).Build().ToRetryable())
		name, err := res.ToString()
		if err != nil {
			if re, ok := rueidis.IsRedisErr(err); ok && strings.HasPrefix(re.Error(), "READONLY") {
				continue
			}
			errs = append(errs, fmt.Errorf("FUNCTION LOAD %s on %s: %w", l.name, addr, convertErr(err)))
			continue
		}
		if name != l.name {
			errs = append(errs, fmt.Errorf("FUNCTION LOAD %s on %s: server loaded %q", l.name, addr, name))
		}
	}
	return errors.Join(errs...)
}
