package runtime_test

import (
	"context"
	"strconv"
	"testing"

	"github.com/luagen/luagen/luatest"
	"github.com/luagen/luagen/redistest"
	"github.com/luagen/luagen/runtime"
)

// BenchmarkFunctionMode compares a call through Script.Exec in EVAL mode
// (EVALSHA) and in function mode (FCALL of the library function) for the
// same script, on a real redis-server over loopback (rueidis) and on
// luatest, in one run.
//
//	go test -run '^$' -bench FunctionMode -count 6 ./runtime | benchstat -col /mode -
func BenchmarkFunctionMode(b *testing.B) {
	body := "#!lua\nreturn redis.call('INCRBY', KEYS[1], ARGV[1])\n"
	plain := runtime.NewScript(runtime.ScriptSpec{Name: "b.Incr", File: "incr.lua", Body: body})
	fn := runtime.NewScript(runtime.ScriptSpec{Name: "b.Incr", File: "incr.lua", Body: body})
	runtime.NewLibrary(runtime.LibrarySpec{Name: "bench", Scripts: []*runtime.Script{fn}})
	srv := redistest.Start(b)
	ctx := context.Background()
	for _, ex := range []struct {
		name string
		e    runtime.Executor
	}{{"redis-server", runtime.NewRueidisExecutor(srv.Client(b))}, {"luatest", luatest.Start(b)}} {
		for _, mode := range []struct {
			name string
			s    *runtime.Script
		}{{"eval", plain}, {"function", fn}} {
			b.Run(ex.name+"/mode="+mode.name, func(b *testing.B) {
				if err := runtime.Preload(ctx, ex.e, mode.s); err != nil {
					b.Fatal(err)
				}
				keys := []string{"{bench}:n"}
				b.ReportAllocs()
				b.ResetTimer()
				for i := range b.N {
					if _, err := mode.s.Exec(ctx, ex.e, keys, []string{strconv.Itoa(i & 7)}); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}
