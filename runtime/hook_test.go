package runtime_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/luagen/luagen/luatest"
	"github.com/luagen/luagen/runtime"
	"github.com/luagen/luagen/runtime/luagenimpl"
)

// recorder is a Hook that keeps every CallStart and CallEnd; CallStart
// puts the call's number in the context, and CallEnd checks it got that
// context back.
type recorder struct {
	mu     sync.Mutex
	starts []runtime.CallStart
	ends   []runtime.CallEnd
	wrong  int // CallEnds that did not get their CallStart's context
}

type callNumber struct{}

func (r *recorder) CallStart(ctx context.Context, c runtime.CallStart) context.Context {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.starts = append(r.starts, c)
	return context.WithValue(ctx, callNumber{}, c.Script.Name())
}

func (r *recorder) CallEnd(ctx context.Context, c runtime.CallEnd) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if ctx.Value(callNumber{}) != c.Script.Name() {
		r.wrong++
	}
	r.ends = append(r.ends, c)
}

// take returns the CallEnds so far, without Duration and Err (checked
// apart), and forgets them.
func (r *recorder) take(t *testing.T) []runtime.CallEnd {
	t.Helper()
	r.mu.Lock()
	defer r.mu.Unlock()
	require.Equal(t, len(r.starts), len(r.ends), "a CallStart without its CallEnd")
	require.Zero(t, r.wrong, "CallEnd got another context than its CallStart returned")
	ends := r.ends
	for i := range ends {
		assert.Positive(t, ends[i].Duration)
		ends[i].Duration, ends[i].Err = 0, nil
	}
	r.starts, r.ends = nil, nil
	return ends
}

// hookedRedis is a luatest.Redis with a Hook: embedding keeps every
// method of it (FCall: it still runs functions).
type hookedRedis struct {
	*luatest.Redis
	hook runtime.Hook
}

func (h hookedRedis) Hook() runtime.Hook { return h.hook }

// hookedExec gives any Executor a Hook (hiding its optional interfaces).
type hookedExec struct {
	runtime.Executor
	hook runtime.Hook
}

func (h *hookedExec) Hook() runtime.Hook { return h.hook }

var (
	hookOK    = runtime.NewScript(runtime.ScriptSpec{Name: "h.OK", File: "lua/h/ok.lua", Body: "return 1"})
	errEmpty  = runtime.NewCodeError("h.Take", "Empty", "-1", "nothing left")
	hookTake  = runtime.NewScript(runtime.ScriptSpec{Name: "h.Take", File: "lua/h/take.lua", Body: "return -1", Errors: []*runtime.CodeError{errEmpty}})
	hookRaise = runtime.NewScript(runtime.ScriptSpec{Name: "h.Raise", File: "lua/h/raise.lua", Body: "\nreturn redis.call('INCR', KEYS[1])"})
	hookIdem  = runtime.NewScript(runtime.ScriptSpec{Name: "h.Idem", File: "lua/h/idem.lua", Idempotent: true, Body: "return redis.call('SET', KEYS[1], 'x')"})
)

// TestHookSeesEveryOutcome: each call reaches CallStart and CallEnd once,
// with the script, the command that answered, the NOSCRIPT fallback, the
// retries of an idempotent script and the outcome's class.
func TestHookSeesEveryOutcome(t *testing.T) {
	ctx := context.Background()
	rec := &recorder{}
	r := luatest.Start(t)
	e := hookedRedis{r, rec}

	// First call: NOSCRIPT, then EVAL; the second finds the script cached.
	_, err := hookOK.Exec(ctx, e, nil, nil)
	require.NoError(t, err)
	_, err = hookOK.Exec(ctx, e, nil, nil)
	require.NoError(t, err)
	_, err = hookTake.Exec(ctx, e, nil, nil)
	require.ErrorIs(t, err, errEmpty)
	r.Set("{h}s", "a string")
	_, err = hookRaise.Exec(ctx, e, []string{"{h}s"}, nil)
	var se *runtime.ScriptError
	require.ErrorAs(t, err, &se)
	// An idempotent script retried after two transient failures.
	r.FailCall(1, "LOADING Redis is loading the dataset in memory")
	r.FailCall(2, "LOADING Redis is loading the dataset in memory")
	_, err = hookIdem.Exec(ctx, e, []string{"{h}k"}, nil)
	require.NoError(t, err)
	_, err = hookOK.Exec(ctx, e, []string{"{a}x", "{b}y"}, nil)
	require.ErrorIs(t, err, runtime.ErrCrossSlot)
	cancelled, cancel := context.WithCancel(ctx)
	cancel()
	_, err = hookOK.Exec(cancelled, e, nil, nil)
	require.ErrorIs(t, err, context.Canceled)

	ok := runtime.CallStart{Script: hookOK}
	assert.Equal(t, []runtime.CallEnd{
		{CallStart: ok, Mode: runtime.ModeEval, Attempts: 1, NoScripts: 1},
		{CallStart: ok, Mode: runtime.ModeEvalSha, Attempts: 1},
		{CallStart: runtime.CallStart{Script: hookTake}, Mode: runtime.ModeEval, Attempts: 1, NoScripts: 1, Outcome: runtime.OutcomeDeclared},
		{CallStart: runtime.CallStart{Script: hookRaise}, Mode: runtime.ModeEval, Attempts: 1, NoScripts: 1, Outcome: runtime.OutcomeScriptError},
		{CallStart: runtime.CallStart{Script: hookIdem}, Mode: runtime.ModeEvalSha, Attempts: 3, NoScripts: 1},
		{CallStart: ok, Mode: runtime.ModeEvalSha, Outcome: runtime.OutcomeRefused},
		{CallStart: ok, Mode: runtime.ModeEvalSha, Attempts: 1, Outcome: runtime.OutcomeTransport},
	}, rec.take(t))
}

// TestHookFunctionMode: a library's script runs with FCALL; the first call
// loads the library (one load), later ones do not.
func TestHookFunctionMode(t *testing.T) {
	ctx := context.Background()
	s := runtime.NewScript(runtime.ScriptSpec{Name: "hf.Get", File: "lua/hf/get.lua", Body: "#!lua flags=no-writes\nreturn 7"})
	runtime.NewLibrary(runtime.LibrarySpec{Name: "hf", Scripts: []*runtime.Script{s}})
	rec := &recorder{}
	e := hookedRedis{luatest.Start(t), rec}
	for range 2 {
		v, err := s.Exec(ctx, e, nil, nil)
		require.NoError(t, err)
		require.Equal(t, int64(7), v.Int)
	}
	// Without FCall (the hook wrapper hides it), the same script runs
	// with EVALSHA.
	_, err := s.Exec(ctx, &hookedExec{luatest.Start(t), rec}, nil, nil)
	require.NoError(t, err)
	start := runtime.CallStart{Script: s}
	assert.Equal(t, []runtime.CallEnd{
		{CallStart: start, Mode: runtime.ModeFCall, Attempts: 1, LibraryLoads: 1},
		{CallStart: start, Mode: runtime.ModeFCall, Attempts: 1},
		{CallStart: start, Mode: runtime.ModeEval, Attempts: 1, NoScripts: 1},
	}, rec.take(t))
}

// TestHookBatch: each call of a batch is one CallStart/CallEnd with the
// batch's size on its executor, its own fallback and its own outcome.
func TestHookBatch(t *testing.T) {
	ctx := context.Background()
	rec := &recorder{}
	r := luatest.Start(t)
	e := hookedRedis{r, rec}
	require.NoError(t, hookOK.Load(ctx, r))
	var b runtime.Batch
	f1 := runtime.Queue(&b, e, hookOK, nil, nil, luagenimpl.Raw)
	f2 := runtime.Queue(&b, e, hookTake, nil, nil, luagenimpl.Raw)
	f3 := runtime.Queue(&b, e, hookOK, []string{"{a}x", "{b}y"}, nil, luagenimpl.Raw)
	other := runtime.Queue(&b, r, hookOK, nil, nil, luagenimpl.Raw) // no hook: not reported
	require.Error(t, b.Send(ctx))
	require.NoError(t, f1.Err())
	require.ErrorIs(t, f2.Err(), errEmpty)
	require.ErrorIs(t, f3.Err(), runtime.ErrCrossSlot)
	require.NoError(t, other.Err())
	assert.Equal(t, []runtime.CallEnd{
		{CallStart: runtime.CallStart{Script: hookOK, Batch: 3}, Mode: runtime.ModeEvalSha, Attempts: 1},
		{CallStart: runtime.CallStart{Script: hookTake, Batch: 3}, Mode: runtime.ModeEval, Attempts: 1, NoScripts: 1, Outcome: runtime.OutcomeDeclared},
		{CallStart: runtime.CallStart{Script: hookOK, Batch: 3}, Mode: runtime.ModeEvalSha, Outcome: runtime.OutcomeRefused},
	}, rec.take(t))
}

// TestHookCoalescer: a Coalescer reports to the wrapped executor's hook,
// with the size of the run that carried each call: 1 for the call sent
// alone, 3 for the three that waited and ran merged, and the merged run's
// NOSCRIPT fallback.
func TestHookCoalescer(t *testing.T) {
	noLeak(t)
	rec := &recorder{}
	r := luatest.Start(t)
	g, _ := gated(t, r, replies)
	c := runtime.NewCoalescer(&hookedExec{g, rec})
	runtime.SetInFlight(c, 1)
	var wg sync.WaitGroup
	call := func() {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, err := replies.Exec(context.Background(), c, []string{"{t}q"}, []string{"incr"})
			assert.NoError(t, err)
		}()
	}
	call()
	g.held(t)
	for i := 1; i <= 3; i++ {
		call()
		require.Eventually(t, func() bool { return runtime.Waiting(c, replies, "{t}q") == i }, 10*time.Second, time.Millisecond)
	}
	close(g.release)
	wg.Wait()
	ends := rec.take(t)
	// The merged run's companion was not loaded: NOSCRIPT, then EVAL,
	// for each of its calls.
	merged := map[string]int{}
	for _, e := range ends {
		merged[fmt.Sprintf("merged %d, %s, %d NOSCRIPT", e.Merged, e.Mode, e.NoScripts)]++
		assert.Equal(t, runtime.OutcomeOK, e.Outcome)
	}
	assert.Equal(t, map[string]int{"merged 1, EVALSHA, 0 NOSCRIPT": 1, "merged 3, EVAL, 1 NOSCRIPT": 3}, merged)
	assert.Equal(t, "4", r.MustDo("GET", "{t}q").Str)
}

// TestClassifyOutcome: the class of every kind of error a call returns,
// wrapped or not.
func TestClassifyOutcome(t *testing.T) {
	for _, c := range []struct {
		err  error
		want runtime.Outcome
	}{
		{nil, runtime.OutcomeOK},
		{errEmpty, runtime.OutcomeDeclared},
		{fmt.Errorf("deduct: %w", errEmpty), runtime.OutcomeDeclared},
		{&runtime.ScriptError{Script: "x", Err: &runtime.ReplyError{Msg: "boom"}}, runtime.OutcomeScriptError},
		{&runtime.CrossSlotError{Script: "x"}, runtime.OutcomeRefused},
		{&runtime.ReplyError{Msg: "BUSY Redis is busy"}, runtime.OutcomeServerError},
		{&runtime.DecodeError{Script: "x"}, runtime.OutcomeServerError},
		{context.DeadlineExceeded, runtime.OutcomeTransport},
		{runtime.ErrClientClosed, runtime.OutcomeTransport},
		{errors.New("dial tcp: connection refused"), runtime.OutcomeTransport},
	} {
		assert.Equal(t, c.want, runtime.ClassifyOutcome(c.err), "%v", c.err)
	}
	assert.Equal(t, "script_error", runtime.OutcomeScriptError.String())
	assert.Equal(t, "EVALSHA_RO", runtime.ModeEvalSha.Command(true))
	assert.Equal(t, "FCALL", runtime.ModeFCall.Command(false))
}
