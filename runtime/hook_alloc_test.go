package runtime_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/luagen/luagen/redistest"
	"github.com/luagen/luagen/runtime"
)

// noopHook is the cheapest Hook there is.
type noopHook struct{}

func (noopHook) CallStart(ctx context.Context, _ runtime.CallStart) context.Context { return ctx }
func (noopHook) CallEnd(context.Context, runtime.CallEnd)                           {}

// constExec answers every EVALSHA with the integer 1 and allocates
// nothing, so what Exec itself allocates is all AllocsPerRun sees.
type constExec struct{ hook runtime.Hook }

func (constExec) EvalSha(context.Context, *runtime.Script, []string, []string) (runtime.Value, error) {
	return runtime.Value{Kind: runtime.KindInt, Int: 1}, nil
}
func (constExec) Eval(context.Context, *runtime.Script, []string, []string) (runtime.Value, error) {
	return runtime.Value{Kind: runtime.KindInt, Int: 1}, nil
}
func (constExec) Load(context.Context, *runtime.Script) error { return nil }
func (c constExec) Hook() runtime.Hook                        { return c.hook }

// TestHookAllocations: the hook costs no allocation, with no hook and with
// a no-op one. On an executor that allocates nothing, Exec allocates
// nothing in either case, for a plain script and an idempotent one (the
// Retry path) alike; on a real redis-server through rueidis, a call with
// no hook and one with a no-op hook allocate the same (the least of
// several runs: rueidis' background goroutines allocate too).
func TestHookAllocations(t *testing.T) {
	ctx := context.Background()
	keys, args := []string{"{a}k"}, []string{"v"}
	for _, s := range []*runtime.Script{hookOK, hookIdem} {
		for _, e := range []*constExec{{}, {noopHook{}}} {
			allocs := testing.AllocsPerRun(1000, func() {
				if _, err := s.Exec(ctx, e, keys, args); err != nil {
					panic(err)
				}
			})
			assert.Zero(t, allocs, "%s, hook %T", s.Name(), e.hook)
		}
	}

	srv := redistest.Start(t)
	c := srv.Client(t)
	plain := runtime.NewRueidisExecutor(c)
	hooked := runtime.NewRueidisExecutor(c, runtime.WithHook(noopHook{}))
	require.NoError(t, hookOK.Load(ctx, plain))
	exec := func(e runtime.Executor) func() {
		return func() {
			if _, err := hookOK.Exec(ctx, e, keys, args); err != nil {
				panic(err)
			}
		}
	}
	// The least of 21 runs each, the two ways interleaved: other
	// goroutines (rueidis' readers and writers, the race detector's, a
	// client another test left dialing) only ever add allocations, and a
	// burst of theirs then cannot cover every run of one way alone.
	none, with := exec(plain), exec(hooked)
	none() // warm up
	with()
	n, h := testing.AllocsPerRun(500, none), testing.AllocsPerRun(500, with)
	for range 20 {
		n = min(n, testing.AllocsPerRun(500, none))
		h = min(h, testing.AllocsPerRun(500, with))
	}
	assert.Equal(t, n, h, "a no-op hook changes the allocations of a call")
	t.Logf("allocations per call through rueidis: %v, with or without a no-op hook", n)
}

// BenchmarkHook measures a call with no hook, a no-op hook and on a
// executor that allocates nothing (the hook's own cost), and on a real
// redis-server through rueidis. luagenotel's benchmark adds the
// OpenTelemetry hook.
//
//	go test -run '^$' -bench Hook -benchtime 2s ./runtime
func BenchmarkHook(b *testing.B) {
	ctx := context.Background()
	keys, args := []string{"{a}k"}, []string{"v"}
	for _, e := range []struct {
		name string
		e    *constExec
	}{{"const/none", &constExec{}}, {"const/noop", &constExec{noopHook{}}}} {
		b.Run(e.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := hookOK.Exec(ctx, e.e, keys, args); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
	srv := redistest.Start(b)
	c := srv.Client(b)
	for _, e := range []struct {
		name string
		opts []runtime.ExecutorOption
	}{{"redis/none", nil}, {"redis/noop", []runtime.ExecutorOption{runtime.WithHook(noopHook{})}}} {
		b.Run(e.name, func(b *testing.B) {
			benchExec(b, runtime.NewRueidisExecutor(c, e.opts...))
		})
	}
}

// benchExec runs hookOK on e, loaded first, b.N times.
func benchExec(b *testing.B, e runtime.Executor) {
	ctx := context.Background()
	keys, args := []string{"{a}k"}, []string{"v"}
	if err := hookOK.Load(ctx, e); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := hookOK.Exec(ctx, e, keys, args); err != nil {
			b.Fatal(err)
		}
	}
}

// constFuncExec is constExec that also runs functions: every FCALL
// answers the integer 1.
type constFuncExec struct{ constExec }

func (constFuncExec) FCall(context.Context, *runtime.Script, []string, []string) (runtime.Value, error) {
	return runtime.Value{Kind: runtime.KindInt, Int: 1}, nil
}
func (constFuncExec) LoadLibrary(context.Context, *runtime.Library) error            { return nil }
func (constFuncExec) LoadLibraryFor(context.Context, *runtime.Library, string) error { return nil }

// TestFunctionModeAllocations: a call in function mode (FCALL) allocates
// nothing of its own, as one in EVAL mode does (issue 34: the check for
// "Function not found" allocated twice per call), with no hook and with a
// no-op one, for a plain script and an idempotent one; and on a real
// redis-server through rueidis a function's call allocates no more than
// the same script's EVALSHA (the least of several runs, as above).
func TestFunctionModeAllocations(t *testing.T) {
	ctx := context.Background()
	keys, args := []string{"{a}k"}, []string{"v"}
	plain := runtime.NewScript(runtime.ScriptSpec{Name: "fa.Plain", File: "lua/fa/plain.lua", Body: "return 1"})
	idem := runtime.NewScript(runtime.ScriptSpec{Name: "fa.Idem", File: "lua/fa/idem.lua", Idempotent: true, Body: "return 1"})
	runtime.NewLibrary(runtime.LibrarySpec{Name: "fa", Scripts: []*runtime.Script{plain, idem}})
	for _, s := range []*runtime.Script{plain, idem} {
		for _, e := range []*constFuncExec{{}, {constExec{noopHook{}}}} {
			allocs := testing.AllocsPerRun(1000, func() {
				if _, err := s.Exec(ctx, e, keys, args); err != nil {
					panic(err)
				}
			})
			assert.Zero(t, allocs, "%s, hook %T", s.Name(), e.hook)
		}
	}

	srv := redistest.Start(t)
	e := runtime.NewRueidisExecutor(srv.Client(t))
	require.NoError(t, hookOK.Load(ctx, e))
	exec := func(s *runtime.Script) func() {
		return func() {
			if _, err := s.Exec(ctx, e, keys, args); err != nil {
				panic(err)
			}
		}
	}
	evalSha, fcall := exec(hookOK), exec(plain)
	evalSha() // warm up; the first FCALL loads the library
	fcall()
	n, f := testing.AllocsPerRun(500, evalSha), testing.AllocsPerRun(500, fcall)
	for range 20 {
		n = min(n, testing.AllocsPerRun(500, evalSha))
		f = min(f, testing.AllocsPerRun(500, fcall))
	}
	assert.LessOrEqual(t, f, n, "FCALL allocates more than EVALSHA")
	t.Logf("allocations per call through rueidis: EVALSHA %v, FCALL %v", n, f)
}
