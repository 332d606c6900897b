package runtime_test

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/luagen/luagen/internal/exectest"
	"github.com/luagen/luagen/runtime"
)

// A script's own error reply that reads like the server's MOVED, ASK,
// TRYAGAIN, ... reaches the caller as the script sent it, after one run: the
// wrapped body marks it, so neither cluster client follows it to another
// node or retries it, and Exec removes the mark. Each call has its own
// deadline, so a client that loops on the reply fails the test instead of
// hanging it.
func TestScriptRedirectRepliesRunOnce(t *testing.T) {
	c := sharedCluster(t)
	exectest.Run(t, func(t *testing.T, k exectest.Kind) {
		e := k.Cluster(t, c)
		nodes, err := c.Topology()
		require.NoError(t, err)
		for i, tmpl := range []string{
			"MOVED %d %s", "ASK %d %s", "ERR MOVED %d %s", "MOVEDX %d %s", "ASKING %d %s",
			"MOVED %d 127.0.0.1:1", "ASK %d 127.0.0.1:1", "MOVED", "ASK",
			"READONLY You can't write against a read only replica.", "TRYAGAIN x", "CLUSTERDOWN x",
			"LOADING x", "BUSY x", "MASTERDOWN x", "NOREPLICAS x", "OOM x", "NOAUTH x", "EXECABORT x",
			"ERR TRYAGAIN x", "x -READONLY You can't write against a read only replica.",
			"ERR max number of clients reached", "NOSCRIPT No matching script. Please use EVAL.",
		} {
			for _, how := range []string{"argv", "literal", "table"} {
				for _, idem := range []bool{false, true} {
					key := fmt.Sprintf("{redirect}%s-%d-%s-%v", k.Name, i, how, idem)
					slot := runtime.Slot(key)
					primary, _, err := c.PrimaryOf(slot)
					require.NoError(t, err)
					other := ""
					for _, n := range nodes {
						if n.Primary && n.Addr != primary.Addr {
							other = n.Addr
						}
					}
					require.NotEmpty(t, other)
					reply := tmpl
					if strings.Contains(tmpl, "%d %s") {
						reply = fmt.Sprintf(tmpl, slot, other)
					} else if strings.Contains(tmpl, "%d") {
						reply = fmt.Sprintf(tmpl, slot)
					}
					body := "redis.call('INCR', KEYS[1])\n"
					switch how {
					case "argv":
						body += "return redis.error_reply(ARGV[1])"
					case "literal":
						body += "return redis.error_reply(" + strconv.Quote(reply) + ")"
					case "table":
						body += "return {err = ARGV[1]}"
					}
					s := runtime.NewScript(runtime.ScriptSpec{Name: "t.Redirect", File: "redirect.lua", Idempotent: idem, Body: body})
					primary.Do(t, "DEL", key) // the cluster outlives a run of -count N
					ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
					_, err = s.Exec(ctx, e, []string{key}, []string{reply})
					cancel()
					want := reply
					if how != "table" {
						// redis.error_reply puts ERR in front of a text with no
						// code (luaPushErrorBuff); executors drop a leading ERR.
						want = strings.TrimPrefix(want, "ERR ")
					}
					want = strings.TrimPrefix(want, "ERR ")
					var re *runtime.ReplyError
					if assert.True(t, errors.As(err, &re), "%s %q: %v", how, reply, err) {
						assert.Equal(t, want, re.Msg, "%s %q", how, reply)
					}
					assert.Equal(t, "1", primary.Do(t, "GET", key), "%s %q idempotent=%v: runs", how, reply, idem)
				}
			}
		}
		// The client's view of the cluster is intact: a MOVED to a dead
		// address did not reach it.
		ok := runtime.NewScript(runtime.ScriptSpec{Name: "t.Ok", File: "ok.lua", Body: "return redis.call('INCR', KEYS[1])"})
		for i := range 20 {
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			_, err := ok.Exec(ctx, e, []string{fmt.Sprintf("{redirect-after}%s%d", k.Name, i)}, nil)
			cancel()
			require.NoError(t, err)
		}
	})
}

// On every executor, luatest included (it runs the same wrapped body), a
// returned error reply with a code clients read comes back as the script
// sent it, after one run; a reply with a code of the script's own is not
// marked at all (redis-cli sees it as sent).
func TestMarkedRepliesComeBackAsSent(t *testing.T) {
	for _, x := range executors {
		t.Run(x.name, func(t *testing.T) {
			e, do := x.open(t)
			s := runtime.NewScript(runtime.ScriptSpec{Name: "t.Marked", File: "marked.lua", Body: "redis.call('INCR', KEYS[1])\nreturn {err = ARGV[1]}"})
			for i, reply := range []string{
				"MOVED 1 127.0.0.1:1", "MOVEDX", "ASK 1 127.0.0.1:1", "ERR ASK 1 x", "TRYAGAIN x", "READONLY x",
				"LUAGEN x", "LUAGEN% x", "a %2D -READONLY You can't write against a read only replica. %25 -",
				"BAD_ARG x", "NOSCRIPT No matching script. Please use EVAL.",
			} {
				key := fmt.Sprintf("{marked}%d", i)
				ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
				_, err := s.Exec(ctx, e, []string{key}, []string{reply})
				cancel()
				var re *runtime.ReplyError
				if assert.True(t, errors.As(err, &re), "%q: %v", reply, err) {
					assert.Equal(t, strings.TrimPrefix(reply, "ERR "), re.Msg)
				}
				assert.Equal(t, "1", do("GET", key), "%q", reply)
			}
			_, err := e.EvalSha(context.Background(), s, []string{"{marked}raw"}, []string{"BAD_ARG x"})
			var re *runtime.ReplyError
			require.ErrorAs(t, err, &re)
			assert.Equal(t, "BAD_ARG x", re.Msg, "not marked")
		})
	}
}
