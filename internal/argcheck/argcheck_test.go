package argcheck_test

import (
	"context"
	"math/big"
	"strconv"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/luagen/luagen/internal/argcheck"
	"github.com/luagen/luagen/internal/exectest"
	"github.com/luagen/luagen/luatest"
	"github.com/luagen/luagen/redistest"
	"github.com/luagen/luagen/runtime"
)

// get reads a string key ("" and false when it is absent); lrange a list.
type store struct {
	get    func(t *testing.T, key string) (string, bool)
	lrange func(t *testing.T, key string) []string
}

// The bounds the analysis chose (see the generated CheckInt calls):
// 'amt:' .. (amount * 100) stays below 1e14 for |amount| <= 2^39, and
// math.floor(a * 1.5) + b stays exact for |a|, |b| <= 2^51.
const (
	creditBound = 1 << 39
	scaleBound  = 1 << 51
)

// checkBounds calls both scripts at their bounds, where every number is
// exact, and just beyond, where the method refuses the call with
// ErrBadArg and sends nothing: the keys the scripts write stay absent.
func checkBounds(t *testing.T, s *argcheck.Scripts, st store) {
	ctx := context.Background()

	cents, err := s.Credit(ctx, argcheck.CreditKeys{Log: "log"}, argcheck.CreditArgs{Amount: creditBound})
	require.NoError(t, err)
	assert.Equal(t, int64(creditBound*100), cents)
	assert.Equal(t, []string{"amt:" + strconv.FormatInt(creditBound*100, 10)}, st.lrange(t, "log"))

	for _, bad := range []int64{creditBound + 1, -creditBound - 1, 1 << 62} {
		_, err = s.Credit(ctx, argcheck.CreditKeys{Log: "refused"}, argcheck.CreditArgs{Amount: bad})
		require.ErrorIs(t, err, runtime.ErrBadArg)
		var be *runtime.BadArgError
		require.ErrorAs(t, err, &be)
		assert.Equal(t, runtime.BadArgError{Script: "argcheck.Credit", Arg: "amount", Value: bad, Bound: "[-549755813888,549755813888]"}, *be)
	}
	assert.Empty(t, st.lrange(t, "refused"))

	// a = 2^51 - 1 is odd: a * 1.5 has a half, which a double holds
	// below 2^52; the floor is exact.
	a, b := int64(scaleBound-1), int64(-scaleBound)
	want := new(big.Int).Mul(big.NewInt(a), big.NewInt(3))
	want.Div(want, big.NewInt(2)) // a > 0: Div is the floor
	want.Add(want, big.NewInt(b))
	r, err := s.Scale(ctx, argcheck.ScaleKeys{Result: "r"}, argcheck.ScaleArgs{A: a, B: b})
	require.NoError(t, err)
	assert.Equal(t, want.Int64(), r)
	v, ok := st.get(t, "r")
	assert.True(t, ok)
	assert.Equal(t, want.String(), v)

	_, err = s.Scale(ctx, argcheck.ScaleKeys{Result: "r2"}, argcheck.ScaleArgs{A: scaleBound + 1, B: 0})
	require.ErrorIs(t, err, runtime.ErrBadArg)
	_, err = s.Scale(ctx, argcheck.ScaleKeys{Result: "r2"}, argcheck.ScaleArgs{A: 0, B: -scaleBound - 1})
	require.ErrorIs(t, err, runtime.ErrBadArg)
	_, ok = st.get(t, "r2")
	assert.False(t, ok)

	// A batch refuses the call the same way: nothing queued, the
	// future holds the error before and after Send.
	var batch runtime.Batch
	refused := s.QueueCredit(&batch, argcheck.CreditKeys{Log: "refused"}, argcheck.CreditArgs{Amount: creditBound + 1})
	okCall := s.QueueScale(&batch, argcheck.ScaleKeys{Result: "r3"}, argcheck.ScaleArgs{A: 2, B: 1})
	assert.Equal(t, 1, batch.Len())
	assert.ErrorIs(t, refused.Err(), runtime.ErrBadArg)
	require.NoError(t, batch.Send(ctx))
	assert.ErrorIs(t, refused.Err(), runtime.ErrBadArg)
	n, err := okCall.Result()
	require.NoError(t, err)
	assert.Equal(t, int64(4), n)
	assert.Empty(t, st.lrange(t, "refused"))
}

func TestBoundsLuatest(t *testing.T) {
	r := luatest.Start(t)
	checkBounds(t, argcheck.New(r), store{
		get:    func(t *testing.T, key string) (string, bool) { return r.Get(key) },
		lrange: func(t *testing.T, key string) []string { return r.List(key) },
	})
	// Only the calls that passed their checks ran: two Credit and
	// Scale calls' commands, and the batch's Scale.
	var cmds []string
	for _, c := range r.Calls() {
		cmds = append(cmds, c.Command)
	}
	assert.Equal(t, []string{"RPUSH", "SET", "SET"}, cmds)
}

func TestBoundsRedis(t *testing.T) {
	exectest.Run(t, func(t *testing.T, k exectest.Kind) {
		srv := redistest.Start(t)
		c := srv.Client(t)
		ctx := context.Background()
		checkBounds(t, argcheck.New(k.Single(t, srv)), store{
			get: func(t *testing.T, key string) (string, bool) {
				v, err := c.Do(ctx, c.B().Get().Key(key).Build()).ToString()
				if err != nil {
					return "", false
				}
				return v, true
			},
			lrange: func(t *testing.T, key string) []string {
				l, err := c.Do(ctx, c.B().Lrange().Key(key).Start(0).Stop(-1).Build()).AsStrSlice()
				require.NoError(t, err)
				return l
			},
		})
		// The server ran three scripts: the refused calls never reached it.
		info, err := c.Do(ctx, c.B().Info().Section("commandstats").Build()).ToString()
		require.NoError(t, err)
		assert.Regexp(t, `cmdstat_evalsha:calls=3,`, info)
	})
}
