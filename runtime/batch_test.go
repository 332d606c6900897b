package runtime_test

import (
	"context"
	"io"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/luagen/luagen/luatest"
	"github.com/luagen/luagen/runtime"
	"github.com/luagen/luagen/runtime/luagenimpl"
)

// roundTrips is a [runtime.Pipeliner] over luatest that records each
// Pipeline call (one round trip) and fails the calls on the keys in fail
// with its error, without running them, in the round it names (1-based).
type roundTrips struct {
	*luatest.Redis
	rounds [][]string // per round: "evalsha k" or "eval k" per call
	fail   map[int]map[string]error
}

func (p *roundTrips) Pipeline(ctx context.Context, calls []*runtime.PipelineCall) {
	var round []string
	n := len(p.rounds) + 1
	for _, c := range calls {
		cmd := "evalsha"
		if c.Eval {
			cmd = "eval"
		}
		round = append(round, cmd+" "+c.Keys[0])
		if err := p.fail[n][c.Keys[0]]; err != nil {
			c.Value, c.Err = runtime.Value{}, err
			continue
		}
		if c.Eval {
			c.Value, c.Err = p.Eval(ctx, c.Script, c.Keys, c.Args)
		} else {
			c.Value, c.Err = p.EvalSha(ctx, c.Script, c.Keys, c.Args)
		}
	}
	p.rounds = append(p.rounds, round)
}

var incr = func(idem bool) *runtime.Script {
	return runtime.NewScript(runtime.ScriptSpec{Name: "t.Incr", File: "incr.lua", Body: "return redis.call('INCR', KEYS[1])", Idempotent: idem})
}

func TestBatchRetriesOnlyTransientFailuresOfIdempotentScripts(t *testing.T) {
	p := &roundTrips{Redis: luatest.Start(t), fail: map[int]map[string]error{
		1: {"a": io.EOF, "b": io.EOF, "d": &runtime.ReplyError{Msg: "OOM command not allowed"}},
		2: {"a": &runtime.ReplyError{Msg: "LOADING Redis is loading"}},
	}}
	idem, plain := incr(true), incr(false)
	require.NoError(t, idem.Load(context.Background(), p))
	require.NoError(t, plain.Load(context.Background(), p))
	var b runtime.Batch
	a := runtime.Queue(&b, p, idem, []string{"a"}, nil, luagenimpl.Raw)
	bb := runtime.Queue(&b, p, plain, []string{"b"}, nil, luagenimpl.Raw)
	c := runtime.Queue(&b, p, idem, []string{"c"}, nil, luagenimpl.Raw)
	d := runtime.Queue(&b, p, idem, []string{"d"}, nil, luagenimpl.Raw)
	err := b.Send(context.Background())
	assert.ErrorIs(t, err, io.EOF)

	v, err := a.Result()
	require.NoError(t, err)
	assert.Equal(t, runtime.IntValue(1), v, "retried twice, ran once")
	_, err = bb.Result()
	assert.ErrorIs(t, err, io.EOF, "a script that is not idempotent is never resent")
	v, err = c.Result()
	require.NoError(t, err)
	assert.Equal(t, runtime.IntValue(1), v)
	assert.EqualError(t, d.Err(), "OOM command not allowed", "not transient: not resent")
	assert.Equal(t, [][]string{
		{"evalsha a", "evalsha b", "evalsha c", "evalsha d"},
		{"evalsha a"},
		{"evalsha a"},
	}, p.rounds)
	for k, want := range map[string]string{"a": "1", "b": "", "c": "1", "d": ""} {
		got, _ := p.Do("GET", k)
		assert.Equal(t, want, got.Str, k)
	}
}

func TestBatchNoScriptResendsOnlyMissingScripts(t *testing.T) {
	p := &roundTrips{Redis: luatest.Start(t)}
	ctx := context.Background()
	loaded := incr(false)
	missing := runtime.NewScript(runtime.ScriptSpec{Name: "t.Decr", File: "decr.lua", Body: "return redis.call('DECR', KEYS[1])"})
	require.NoError(t, loaded.Load(ctx, p))
	var b runtime.Batch
	f1 := runtime.Queue(&b, p, loaded, []string{"x"}, nil, luagenimpl.Raw)
	f2 := runtime.Queue(&b, p, missing, []string{"y"}, nil, luagenimpl.Raw)
	f3 := runtime.Queue(&b, p, loaded, []string{"x"}, nil, luagenimpl.Raw)
	require.NoError(t, b.Send(ctx))
	for f, want := range map[*runtime.Future[runtime.Value]]int64{f1: 1, f2: -1, f3: 2} {
		v, err := f.Result()
		require.NoError(t, err)
		assert.Equal(t, runtime.IntValue(want), v)
	}
	assert.Equal(t, [][]string{{"evalsha x", "evalsha y", "evalsha x"}, {"eval y"}}, p.rounds)
}

func TestBatchFutureBeforeAndAfterSend(t *testing.T) {
	r := luatest.Start(t)
	var b runtime.Batch
	f := runtime.Queue(&b, r, incr(false), []string{"k"}, nil, func(v runtime.Value) (int64, error) {
		return luagenimpl.Int64(incr(false), v)
	})
	_, err := f.Result()
	assert.ErrorIs(t, err, runtime.ErrNotSent)
	cross := runtime.Queue(&b, r, incr(false), []string{"{a}1", "{b}2"}, nil, luagenimpl.Raw)
	assert.Equal(t, 2, b.Len())
	assert.ErrorIs(t, b.Send(context.Background()), runtime.ErrCrossSlot)
	n, err := f.Result()
	require.NoError(t, err)
	assert.Equal(t, int64(1), n)
	assert.ErrorIs(t, cross.Err(), runtime.ErrCrossSlot)
	assert.Equal(t, 0, b.Len())

	late := runtime.Queue(&b, r, incr(false), []string{"k"}, nil, luagenimpl.Raw)
	assert.ErrorIs(t, late.Err(), runtime.ErrBatchSent)
	assert.ErrorIs(t, b.Send(context.Background()), runtime.ErrBatchSent)
	assert.Equal(t, "1", r.MustDo("GET", "k").Str, "the late call never ran")

	var empty runtime.Batch
	assert.NoError(t, empty.Send(context.Background()))
}

// Calls on two executors go in one pipeline each.
func TestBatchGroupsByExecutor(t *testing.T) {
	p1 := &roundTrips{Redis: luatest.Start(t)}
	p2 := &roundTrips{Redis: luatest.Start(t)}
	s := incr(false)
	var b runtime.Batch
	for _, p := range []*roundTrips{p1, p2, p1, p2} {
		runtime.Queue(&b, p, s, []string{"k"}, nil, luagenimpl.Raw)
	}
	require.NoError(t, b.Send(context.Background()))
	// The script was never loaded: one EVALSHA round and one EVAL round each.
	want := [][]string{{"evalsha k", "evalsha k"}, {"eval k", "eval k"}}
	assert.Equal(t, want, p1.rounds)
	assert.Equal(t, want, p2.rounds)
}

// A batch sent with a context already done runs nothing; every call has
// the context's error.
func TestBatchCancelledContext(t *testing.T) {
	p := &roundTrips{Redis: luatest.Start(t)}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	var b runtime.Batch
	f := runtime.Queue(&b, p, incr(true), []string{"k"}, nil, luagenimpl.Raw)
	assert.ErrorIs(t, b.Send(ctx), context.Canceled)
	assert.ErrorIs(t, f.Err(), context.Canceled)
	assert.Equal(t, runtime.Nil, p.MustDo("GET", "k"))
	assert.Len(t, p.rounds, 1, "a cancelled context is not transient: no retry")
}
