package argcheck_test

import (
	"context"
	"math/big"
	"strconv"
	"testing"
	"time"

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

// checkRanges calls Take, whose ---@arg lines declare qty [1,1000], size
// {S|M|L} and note [1,64] (its length): each value outside is refused with
// ErrBadArg naming the arg, the value and the bound as the header writes
// it, and nothing is sent (the stock is unchanged, no record written).
func checkRanges(t *testing.T, s *argcheck.Scripts, st store, set func(t *testing.T, key, value string)) {
	ctx := context.Background()
	k := argcheck.KeysFor("item", "7").Take()
	set(t, k.Stock, "5000")
	left, err := s.Take(ctx, k, argcheck.TakeArgs{Qty: 1000, Size: "M", Note: "gift"})
	require.NoError(t, err)
	assert.Equal(t, int64(4000), left)
	v, _ := st.get(t, k.Last)
	assert.Equal(t, "M:gift", v)

	for _, c := range []struct {
		args       argcheck.TakeArgs
		arg, bound string
		value      any
	}{
		{argcheck.TakeArgs{Qty: 0, Size: "S", Note: "x"}, "qty", "[1,1000]", int64(0)},
		{argcheck.TakeArgs{Qty: 1001, Size: "S", Note: "x"}, "qty", "[1,1000]", int64(1001)},
		{argcheck.TakeArgs{Qty: 1, Size: "XL", Note: "x"}, "size", "{S|M|L}", "XL"},
		{argcheck.TakeArgs{Qty: 1, Size: "S", Note: ""}, "note", "[1,64]", ""},
		{argcheck.TakeArgs{Qty: 1, Size: "S", Note: string(make([]byte, 65))}, "note", "[1,64]", string(make([]byte, 65))},
	} {
		_, err := s.Take(ctx, k, c.args)
		var be *runtime.BadArgError
		require.ErrorAs(t, err, &be)
		assert.ErrorIs(t, err, runtime.ErrBadArg)
		assert.Equal(t, runtime.BadArgError{Script: "argcheck.Take", Arg: c.arg, Value: c.value, Bound: c.bound}, *be)
	}
	v, _ = st.get(t, k.Stock)
	assert.Equal(t, "4000", v)
	v, _ = st.get(t, k.Last)
	assert.Equal(t, "M:gift", v)
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

func TestRangesLuatest(t *testing.T) {
	r := luatest.Start(t)
	st := store{get: func(t *testing.T, key string) (string, bool) { return r.Get(key) }}
	checkRanges(t, argcheck.New(r), st, func(t *testing.T, key, value string) { r.Set(key, value) })
	assert.Len(t, r.Calls(), 3, "only the first Take ran: GET, SET, DECRBY")
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

func TestRangesRedis(t *testing.T) {
	exectest.Run(t, func(t *testing.T, k exectest.Kind) {
		srv := redistest.Start(t)
		c := srv.Client(t)
		ctx := context.Background()
		st := store{get: func(t *testing.T, key string) (string, bool) {
			v, err := c.Do(ctx, c.B().Get().Key(key).Build()).ToString()
			return v, err == nil
		}}
		checkRanges(t, argcheck.New(k.Single(t, srv)), st, func(t *testing.T, key, value string) { srv.Do(t, "SET", key, value) })
		info, err := c.Do(ctx, c.B().Info().Section("commandstats").Build()).ToString()
		require.NoError(t, err)
		assert.Regexp(t, `cmdstat_evalsha:calls=1,`, info)
	})
}

// checkStamp: numbers a script keeps and returns as text (a Unix time in
// ms, a count, a counter past 2^53) decode exactly into int64 and
// time.Time; text that is not an integer is a DecodeError.
func checkStamp(t *testing.T, s *argcheck.Scripts, set func(t *testing.T, key, field, value string)) {
	ctx := context.Background()
	at := time.UnixMilli(1_700_000_000_123)
	st, err := s.Stamp(ctx, argcheck.StampKeys{Job: "job"}, argcheck.StampArgs{At: at})
	require.NoError(t, err)
	assert.Equal(t, argcheck.Stamp{At: at, Runs: 1, Big: 0}, st)

	set(t, "job", "big", "9007199254740993") // 2^53 + 1: no Lua number holds it
	st, err = s.Stamp(ctx, argcheck.StampKeys{Job: "job"}, argcheck.StampArgs{At: at})
	require.NoError(t, err)
	assert.Equal(t, int64(1<<53+1), st.Big)
	assert.Equal(t, int64(2), st.Runs)

	set(t, "job", "big", "1e+15")
	_, err = s.Stamp(ctx, argcheck.StampKeys{Job: "job"}, argcheck.StampArgs{At: at})
	require.ErrorIs(t, err, runtime.ErrUnexpectedReply)
	var de *runtime.DecodeError
	require.ErrorAs(t, err, &de)
	assert.Equal(t, "1e+15", de.Got.Str)
}

func TestStampLuatest(t *testing.T) {
	r := luatest.Start(t)
	checkStamp(t, argcheck.New(r), func(t *testing.T, key, field, value string) { r.MustDo("HSET", key, field, value) })
}

func TestStampRedis(t *testing.T) {
	exectest.Run(t, func(t *testing.T, k exectest.Kind) {
		srv := redistest.Start(t)
		checkStamp(t, argcheck.New(k.Single(t, srv)), func(t *testing.T, key, field, value string) { srv.Do(t, "HSET", key, field, value) })
	})
}
