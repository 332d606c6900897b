package runtime

import (
	"context"
	"errors"
	"fmt"
	"net"
	"slices"
	"strconv"
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
// the library to them. So, on a cluster, is any failure of a node the
// cluster lists as a replica (CLUSTER SHARDS, asked of a node that
// answered): one replica down does not fail a Preload, as it does not
// through go-redis, which loads on primaries alone (issue 34). Every node
// is tried and the other errors are joined.
func (r *RueidisExecutor) LoadLibrary(ctx context.Context, l *Library) error {
	addrs, clients, errs := eachNode(ctx, r.c.Nodes(), func(ctx context.Context, addr string, n rueidis.Client) error {
		err := l.LoadOn(ctx, func(ctx context.Context, args ...string) (Value, error) {
			return FromRueidis(n.Do(ctx, n.B().Arbitrary(args...).Build()))
		})
		if re, ok := errors.AsType[*ReplyError](err); err == nil || ok && strings.HasPrefix(re.Msg, "READONLY") {
			return nil
		}
		return fmt.Errorf("on %s: %w", addr, err)
	})
	if r.cluster && slices.ContainsFunc(errs, func(err error) bool { return err != nil }) {
		if i := slices.Index(errs, nil); i >= 0 {
			replicas := clusterReplicas(ctx, clients[i])
			for i, addr := range addrs {
				if replicas[addr] {
					errs[i] = nil
				}
			}
		}
	}
	return errors.Join(errs...)
}

// clusterReplicas returns the addresses of the nodes n's CLUSTER SHARDS
// lists as replicas, failed ones included, by each address a client may
// know a node by (endpoint or IP, with its port or TLS port); none when n
// cannot tell (a server before Redis 7.0, an error).
func clusterReplicas(ctx context.Context, n rueidis.Client) map[string]bool {
	v, err := FromRueidis(n.Do(ctx, n.B().ClusterShards().Build()))
	if err != nil {
		return nil
	}
	replicas := map[string]bool{}
	for _, shard := range v.Array {
		for _, node := range field(shard, "nodes").Array {
			if field(node, "role").Str != "replica" {
				continue
			}
			for _, port := range []Value{field(node, "port"), field(node, "tls-port")} {
				if port.Kind != KindInt {
					continue
				}
				for _, host := range []string{field(node, "endpoint").Str, field(node, "ip").Str, field(node, "hostname").Str} {
					if host != "" && host != "?" {
						replicas[net.JoinHostPort(host, strconv.FormatInt(port.Int, 10))] = true
					}
				}
			}
		}
	}
	return replicas
}
