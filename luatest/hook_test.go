package luatest_test

import (
	"context"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/luagen/luagen/luatest"
	"github.com/luagen/luagen/runtime"
)

// recordingHook keeps every CallEnd it sees.
type recordingHook struct {
	mu   sync.Mutex
	ends []runtime.CallEnd
}

func (h *recordingHook) CallStart(ctx context.Context, _ runtime.CallStart) context.Context {
	return ctx
}

func (h *recordingHook) CallEnd(_ context.Context, c runtime.CallEnd) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.ends = append(h.ends, c)
}

// A hook given with WithHook sees luatest's calls as it sees a server's:
// the first call of a script finds the script cache empty (EVALSHA,
// NOSCRIPT, then EVAL), the second runs as EVALSHA, and a library's
// script runs as FCALL.
func TestWithHook(t *testing.T) {
	ctx := context.Background()
	h := &recordingHook{}
	r := luatest.Start(t, luatest.WithHook(h))
	assert.Same(t, h, r.Hook())

	s := runtime.NewScript(runtime.ScriptSpec{Name: "h.Incr", File: "lua/h/incr.lua", Body: "return redis.call('INCR', KEYS[1])"})
	for want := int64(1); want <= 2; want++ {
		v, err := s.Exec(ctx, r, []string{"n"}, nil)
		require.NoError(t, err)
		assert.Equal(t, want, v.Int)
	}
	fs := runtime.NewScript(runtime.ScriptSpec{Name: "fh.Get", File: "lua/fh/get.lua", Body: "#!lua\nreturn redis.call('GET', KEYS[1])\n"})
	runtime.NewLibrary(runtime.LibrarySpec{Name: "fh", Scripts: []*runtime.Script{fs}})
	v, err := fs.Exec(ctx, r, []string{"n"}, nil)
	require.NoError(t, err)
	assert.Equal(t, "2", v.Str)

	require.Len(t, h.ends, 3)
	assert.Equal(t, runtime.ModeEval, h.ends[0].Mode)
	assert.Equal(t, 1, h.ends[0].NoScripts)
	assert.Equal(t, runtime.ModeEvalSha, h.ends[1].Mode)
	assert.Equal(t, 0, h.ends[1].NoScripts)
	assert.Equal(t, runtime.ModeFCall, h.ends[2].Mode)
	assert.Equal(t, 1, h.ends[2].LibraryLoads)
	for _, e := range h.ends {
		assert.Equal(t, runtime.OutcomeOK, e.Outcome)
		assert.Equal(t, 1, e.Attempts)
		assert.Equal(t, "", e.Server)
	}
}

// The call log says which command ran the script of each call: EVAL and
// EVALSHA through the Executor (the NOSCRIPT fallback shows), raw EVAL,
// EVALSHA_RO and FCALL through Do.
func TestCallLogMode(t *testing.T) {
	ctx := context.Background()
	r := luatest.Start(t)
	s := runtime.NewScript(runtime.ScriptSpec{Name: "m.Get", File: "lua/m/get.lua", Body: "#!lua flags=no-writes\nreturn redis.call('GET', KEYS[1])\n"})
	for range 2 {
		_, err := s.Exec(ctx, r, []string{"k"}, nil)
		require.NoError(t, err)
	}
	r.MustDo("EVAL", "return redis.call('PING')", "0")
	r.MustDo("EVALSHA_RO", s.SHA1(), "1", "k")
	r.MustDo("FUNCTION", "LOAD", "#!lua name=m\nredis.register_function('f', function() return redis.call('TIME') end)")
	r.MustDo("FCALL", "f", "0")

	var modes []runtime.Mode
	var lines []string
	for _, c := range r.Calls() {
		modes = append(modes, c.Mode)
		lines = append(lines, c.CommandLine())
	}
	assert.Equal(t, []string{"GET k", "GET k", "PING", "GET k", "TIME"}, lines)
	assert.Equal(t, []runtime.Mode{runtime.ModeEval, runtime.ModeEvalSha, runtime.ModeEval, runtime.ModeEvalSha, runtime.ModeFCall}, modes)
}
