package runtime_test

import (
	"context"
	"regexp"
	"strconv"
	"testing"

	"github.com/luagen/luagen/luatest"
	"github.com/luagen/luagen/redistest"
	"github.com/luagen/luagen/runtime"
	"github.com/luagen/luagen/stock"
)

// BenchmarkWrappedBody measures what the NOSCRIPT guard of [runtime.Script.Body]
// costs per call: each script runs by EVALSHA as the .lua file says
// (verbatim, i.e. before the guard) and as NewScript sends it (wrapped), on
// a real redis-server over loopback and on luatest, in one run. On the
// server it also reports server-µs/call, the server's own time per EVALSHA
// from INFO commandstats, which the network does not blur.
//
//	go test -run '^$' -bench WrappedBody -count 6 ./runtime | benchstat -col /body -
func BenchmarkWrappedBody(b *testing.B) {
	deductKeys := []string{"seckill:{bench}:stock", "seckill:{bench}:orders", "seckill:{bench}:buyers"}
	deductArgs := func(i int) []string {
		return []string{"o" + strconv.Itoa(i), "u7", "1", "0", "1700000000123"}
	}
	scripts := []struct {
		name string
		s    *runtime.Script
		keys []string
		args func(i int) []string
	}{
		{"int", runtime.NewScript(runtime.ScriptSpec{Name: "b.Int", File: "int.lua", Body: "return 1"}), nil, nil},
		{"table", runtime.NewScript(runtime.ScriptSpec{Name: "b.Table", File: "table.lua", Body: "return {1, 'two', 3}"}), nil, nil},
		{"error", runtime.NewScript(runtime.ScriptSpec{Name: "b.Err", File: "err.lua", Body: "return redis.error_reply('BAD_ARG qty')"}), nil, nil},
		{"deduct", stock.DeductScript(), deductKeys, deductArgs},
	}
	srv := redistest.Start(b)
	c := srv.Client(b)
	ctx := context.Background()
	for _, sc := range scripts {
		for _, body := range []struct{ name, text string }{{"verbatim", sc.s.Source()}, {"wrapped", sc.s.Body()}} {
			command := func(sha string, i int) []string {
				cmd := append([]string{"EVALSHA", sha, strconv.Itoa(len(sc.keys))}, sc.keys...)
				if sc.args != nil {
					cmd = append(cmd, sc.args(i)...)
				}
				return cmd
			}
			b.Run(sc.name+"/body="+body.name+"/redis-server", func(b *testing.B) {
				srv.Do(b, "FLUSHALL")
				srv.Do(b, "SET", deductKeys[0], "1000000000000")
				sha := srv.Do(b, "SCRIPT", "LOAD", body.text)
				srv.Do(b, "CONFIG", "RESETSTAT")
				b.ReportAllocs()
				b.ResetTimer()
				for i := range b.N {
					cmd := command(sha, i)
					err := c.Do(ctx, c.B().Arbitrary(cmd[0]).Args(cmd[1:]...).Build()).Error()
					if err != nil && sc.name != "error" {
						b.Fatal(err)
					}
				}
				b.StopTimer()
				m := usecPerCall.FindStringSubmatch(srv.Do(b, "INFO", "commandstats"))
				if m == nil {
					b.Fatal("no cmdstat_evalsha in INFO commandstats")
				}
				us, _ := strconv.ParseFloat(m[1], 64)
				b.ReportMetric(us, "server-µs/call")
			})
			b.Run(sc.name+"/body="+body.name+"/luatest", func(b *testing.B) {
				r := luatest.Start(b, luatest.WithCallLog(0))
				r.MustDo("SET", deductKeys[0], "1000000000000")
				sha := r.MustDo("SCRIPT", "LOAD", body.text).Str
				b.ReportAllocs()
				b.ResetTimer()
				for i := range b.N {
					r.Command(3, command(sha, i)...)
				}
			})
		}
	}
}

var usecPerCall = regexp.MustCompile(`cmdstat_evalsha:calls=\d+,usec=\d+,usec_per_call=([0-9.]+)`)
