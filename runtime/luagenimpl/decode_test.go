package luagenimpl

import (
	"math"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/luagen/luagen/runtime"
)

var sc = runtime.NewScript(runtime.ScriptSpec{Name: "t.S", File: "s.lua", Body: "return 1"})

func TestDecoders(t *testing.T) {
	n, err := Int64(sc, runtime.IntValue(-5))
	require.NoError(t, err)
	assert.Equal(t, int64(-5), n)

	// Integer text decodes, all 64 bits of it (a Lua number would not
	// hold 2^53+1); anything else is the script's mistake.
	for text, want := range map[string]int64{"5": 5, "-7": -7, "9007199254740993": 1<<53 + 1, "9223372036854775807": math.MaxInt64} {
		n, err := Int64(sc, runtime.StringValue(text))
		require.NoError(t, err, text)
		assert.Equal(t, want, n, text)
	}
	for _, text := range []string{"1.5", "1e+15", "abc", "", " 5", "9223372036854775808", "0x10"} {
		_, err = Int64(sc, runtime.StringValue(text))
		require.ErrorIs(t, err, runtime.ErrUnexpectedReply, text)
	}
	_, err = Int64(sc, runtime.StringValue("1e+15"))
	assert.EqualError(t, err, `t.S: unexpected reply "1e+15", want int64 (an integer, or integer text)`)
	d, err := Duration(sc, runtime.StringValue("1500"), time.Millisecond)
	require.NoError(t, err)
	assert.Equal(t, 1500*time.Millisecond, d)
	tm, err := Time(sc, runtime.StringValue("1700000000000"), time.Millisecond)
	require.NoError(t, err)
	assert.Equal(t, time.UnixMilli(1700000000000), tm)
	_, err = Time(sc, runtime.StringValue("1700000000000.5"), time.Millisecond)
	assert.ErrorIs(t, err, runtime.ErrUnexpectedReply)

	for v, want := range map[string]bool{"1": true, "0": false, "nil": false} {
		val := runtime.Nil
		if v != "nil" {
			val = runtime.IntValue(map[string]int64{"1": 1, "0": 0}[v])
		}
		got, err := Bool(sc, val)
		require.NoError(t, err)
		assert.Equal(t, want, got, v)
	}
	_, err = Bool(sc, runtime.IntValue(2))
	assert.ErrorIs(t, err, runtime.ErrUnexpectedReply)

	f, err := Float64(sc, runtime.StringValue("1.25"))
	require.NoError(t, err)
	assert.Equal(t, 1.25, f)
	_, err = Float64(sc, runtime.StringValue("x"))
	assert.ErrorIs(t, err, runtime.ErrUnexpectedReply)

	d, err = Duration(sc, runtime.IntValue(1500), time.Millisecond)
	require.NoError(t, err)
	assert.Equal(t, 1500*time.Millisecond, d)
	d, err = Duration(sc, runtime.IntValue(-2), time.Millisecond)
	require.NoError(t, err)
	assert.Equal(t, -2*time.Millisecond, d, "PTTL's -2 stays visible")

	tm, err = Time(sc, runtime.IntValue(1_700_000_000_123), time.Millisecond)
	require.NoError(t, err)
	assert.Equal(t, int64(1_700_000_000_123), tm.UnixMilli())
	tm, err = Time(sc, runtime.IntValue(1_700_000_000), time.Second)
	require.NoError(t, err)
	assert.Equal(t, int64(1_700_000_000), tm.Unix())

	tup, err := Tuple(sc, runtime.ArrayValue(runtime.IntValue(1), runtime.Nil), 2)
	require.NoError(t, err)
	assert.Len(t, tup, 2)
	_, err = Tuple(sc, runtime.ArrayValue(runtime.IntValue(1)), 2)
	assert.EqualError(t, err, "t.S: unexpected reply [(integer) 1], want array of 2")

	m, err := StringMap(sc, runtime.ArrayValue(runtime.StringValue("a"), runtime.StringValue("1"), runtime.StringValue("b"), runtime.StringValue("2")))
	require.NoError(t, err)
	assert.Equal(t, map[string]string{"a": "1", "b": "2"}, m)
	_, err = StringMap(sc, runtime.ArrayValue(runtime.StringValue("a")))
	assert.ErrorIs(t, err, runtime.ErrUnexpectedReply)

	ints, err := Slice(sc, runtime.ArrayValue(runtime.IntValue(1), runtime.IntValue(2)), Int64)
	require.NoError(t, err)
	assert.Equal(t, []int64{1, 2}, ints)
	_, err = Slice(sc, runtime.ArrayValue(runtime.IntValue(1), runtime.StringValue("x")), Int64)
	assert.ErrorIs(t, err, runtime.ErrUnexpectedReply)

	p, err := Optional(sc, runtime.Nil, String)
	require.NoError(t, err)
	assert.Nil(t, p)
	p, err = Optional(sc, runtime.StringValue("x"), String)
	require.NoError(t, err)
	assert.Equal(t, "x", *p)
}

func TestEncoders(t *testing.T) {
	assert.Equal(t, "-42", FormatInt(-42))
	assert.Equal(t, "0.1", FormatFloat(0.1))
	assert.Equal(t, "1e+21", FormatFloat(1e21))
	assert.Equal(t, "1", FormatBool(true))
	assert.Equal(t, "0", FormatBool(false))
	assert.Equal(t, "1500", FormatDuration(1500*time.Millisecond, time.Millisecond))
	assert.Equal(t, "1", FormatDuration(1999*time.Millisecond, time.Second), "truncated, as EXPIRE takes whole seconds")
	at := time.UnixMilli(1_700_000_000_999)
	assert.Equal(t, "1700000000999", FormatTime(at, time.Millisecond))
	assert.Equal(t, "1700000000", FormatTime(at, time.Second))
}

// A count that time.Duration or time.Time cannot hold is a DecodeError,
// never a wrapped-around value (1e13 ms came back as -8446744073709551616
// ns); the largest that fit decode exactly.
func TestDecodeTimeOverflow(t *testing.T) {
	maxMs := int64(math.MaxInt64 / int64(time.Millisecond))
	for _, tc := range []struct {
		n    int64
		unit time.Duration
	}{
		{1e13, time.Millisecond}, {maxMs + 1, time.Millisecond}, {-maxMs - 1, time.Millisecond},
		{math.MaxInt64, time.Millisecond}, {math.MinInt64, time.Second}, {9_223_372_037, time.Second},
	} {
		_, err := Duration(sc, runtime.IntValue(tc.n), tc.unit)
		var de *runtime.DecodeError
		require.ErrorAs(t, err, &de, "%d %v", tc.n, tc.unit)
		assert.ErrorIs(t, err, runtime.ErrUnexpectedReply)
		assert.Contains(t, de.Want, "within ±292 years")
	}
	d, err := Duration(sc, runtime.IntValue(maxMs), time.Millisecond)
	require.NoError(t, err)
	assert.Equal(t, time.Duration(maxMs)*time.Millisecond, d)
	d, err = Duration(sc, runtime.IntValue(-maxMs), time.Millisecond)
	require.NoError(t, err)
	assert.Equal(t, -time.Duration(maxMs)*time.Millisecond, d)

	_, err = Time(sc, runtime.IntValue(math.MaxInt64), time.Second)
	assert.ErrorIs(t, err, runtime.ErrUnexpectedReply)
	for _, n := range []int64{math.MaxInt64, math.MinInt64} {
		tm, err := Time(sc, runtime.IntValue(n), time.Millisecond)
		require.NoError(t, err)
		assert.Equal(t, n, tm.UnixMilli())
	}
	tm, err := Time(sc, runtime.IntValue(253402300799), time.Second) // 9999-12-31T23:59:59Z
	require.NoError(t, err)
	assert.Equal(t, 9999, tm.UTC().Year())
}
