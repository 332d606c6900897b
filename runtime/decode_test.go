package runtime

import (
	"crypto/sha1"
	"encoding/hex"
	"errors"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

var sc = NewScript(ScriptSpec{Name: "t.S", File: "s.lua", Body: "return 1"})

func TestDecoders(t *testing.T) {
	n, err := Int64(sc, IntValue(-5))
	require.NoError(t, err)
	assert.Equal(t, int64(-5), n)

	_, err = Int64(sc, StringValue("5"))
	require.ErrorIs(t, err, ErrUnexpectedReply)
	assert.EqualError(t, err, `t.S: unexpected reply "5", want int64`)

	for v, want := range map[string]bool{"1": true, "0": false, "nil": false} {
		val := Nil
		if v != "nil" {
			val = IntValue(map[string]int64{"1": 1, "0": 0}[v])
		}
		got, err := Bool(sc, val)
		require.NoError(t, err)
		assert.Equal(t, want, got, v)
	}
	_, err = Bool(sc, IntValue(2))
	assert.ErrorIs(t, err, ErrUnexpectedReply)

	f, err := Float64(sc, StringValue("1.25"))
	require.NoError(t, err)
	assert.Equal(t, 1.25, f)
	_, err = Float64(sc, StringValue("x"))
	assert.ErrorIs(t, err, ErrUnexpectedReply)

	d, err := Duration(sc, IntValue(1500), time.Millisecond)
	require.NoError(t, err)
	assert.Equal(t, 1500*time.Millisecond, d)
	d, err = Duration(sc, IntValue(-2), time.Millisecond)
	require.NoError(t, err)
	assert.Equal(t, -2*time.Millisecond, d, "PTTL's -2 stays visible")

	tm, err := Time(sc, IntValue(1_700_000_000_123), time.Millisecond)
	require.NoError(t, err)
	assert.Equal(t, int64(1_700_000_000_123), tm.UnixMilli())
	tm, err = Time(sc, IntValue(1_700_000_000), time.Second)
	require.NoError(t, err)
	assert.Equal(t, int64(1_700_000_000), tm.Unix())

	tup, err := Tuple(sc, ArrayValue(IntValue(1), Nil), 2)
	require.NoError(t, err)
	assert.Len(t, tup, 2)
	_, err = Tuple(sc, ArrayValue(IntValue(1)), 2)
	assert.EqualError(t, err, "t.S: unexpected reply [(integer) 1], want array of 2")

	m, err := StringMap(sc, ArrayValue(StringValue("a"), StringValue("1"), StringValue("b"), StringValue("2")))
	require.NoError(t, err)
	assert.Equal(t, map[string]string{"a": "1", "b": "2"}, m)
	_, err = StringMap(sc, ArrayValue(StringValue("a")))
	assert.ErrorIs(t, err, ErrUnexpectedReply)

	ints, err := Slice(sc, ArrayValue(IntValue(1), IntValue(2)), Int64)
	require.NoError(t, err)
	assert.Equal(t, []int64{1, 2}, ints)
	_, err = Slice(sc, ArrayValue(IntValue(1), StringValue("x")), Int64)
	assert.ErrorIs(t, err, ErrUnexpectedReply)

	p, err := Optional(sc, Nil, String)
	require.NoError(t, err)
	assert.Nil(t, p)
	p, err = Optional(sc, StringValue("x"), String)
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

func TestReplyErrorCode(t *testing.T) {
	for msg, code := range map[string]string{
		"OUT_OF_STOCK 3 left": "OUT_OF_STOCK",
		"ERR OUT_OF_STOCK":    "OUT_OF_STOCK",
		"WRONGTYPE Operation": "WRONGTYPE",
		"NOSCRIPT":            "NOSCRIPT",
	} {
		assert.Equal(t, code, (&ReplyError{Msg: msg}).Code(), msg)
	}
	assert.True(t, IsNoScript(&ReplyError{Msg: "ERR NOSCRIPT x"}))
	assert.True(t, IsNoScript(errors.Join(errors.New("ctx"), &ReplyError{Msg: "NOSCRIPT x"})))
	assert.False(t, IsNoScript(errors.New("NOSCRIPT but not a reply")))
	assert.True(t, IsNoScript(&ReplyError{Msg: "NOSCRIPT No matching script. Please use EVAL."}))
	// Raised inside a script: Redis appends where.
	assert.False(t, IsNoScript(&ReplyError{Msg: "NOSCRIPT No matching script. Please use EVAL. script: 9d1c2d1f3d7c0e4a, on @user_script:2."}))
	assert.False(t, IsNoScript(&ReplyError{Msg: "NOSCRIPT x script: 9d1c, on =[C]:-1."}))
	// Returned by a script: marked by the wrapped body.
	assert.False(t, IsNoScript(&ReplyError{Msg: "LUAGEN NOSCRIPT No matching script. Please use EVAL."}))
}

func TestUnmark(t *testing.T) {
	for msg, want := range map[string]string{
		"LUAGEN NOSCRIPT x":             "NOSCRIPT x",
		"LUAGEN ERR NOSCRIPT x":         "NOSCRIPT x",
		"ERR LUAGEN NOSCRIPT x":         "NOSCRIPT x",
		"LUAGEN LUAGEN x":               "LUAGEN x",
		"LUAGEN":                        "LUAGEN",
		"NOSCRIPT x":                    "NOSCRIPT x",
		"OTHER":                         "OTHER",
		"LUAGEN MOVED 1 a:1":            "MOVED 1 a:1",
		"LUAGEN% x %2DREADONLY %252D y": "x -READONLY %2D y",
	} {
		assert.Equal(t, want, unmark(&ReplyError{Msg: msg}).Msg, msg)
	}
}

func TestWrapBodyKeepsLines(t *testing.T) {
	for _, body := range []string{
		"return 1", "return 1\n", "#!lua\nreturn 1", "#!lua flags=no-writes\n\n-- c\nreturn 1 -- c",
		"", "#!lua\n", "a\r\nb\r\n", "x -- no newline at the end",
	} {
		w := wrapBody(body)
		extra := strings.Count(w, "\n") - strings.Count(body, "\n")
		assert.Contains(t, []int{0, 1}, extra, "%q → %q", body, w)
		if extra == 1 {
			assert.True(t, strings.HasPrefix(w[strings.LastIndexByte(w, '\n')+1:], "end)"), "the epilogue has a line of its own: %q", w)
		}
		wl, bl := strings.Split(w, "\n"), strings.Split(body, "\n")
		for i := range bl[:len(bl)-1] {
			assert.True(t, strings.HasSuffix(wl[i], bl[i]), "line %d of %q keeps its text: %q", i+1, body, wl[i])
		}
		if strings.HasPrefix(body, "#!") {
			assert.Equal(t, bl[0], wl[0], "the shebang stays first and unchanged")
		}
	}
	assert.Equal(t, "#!lua", wrapBody("#!lua"), "Redis refuses a shebang without a line feed; left for it to say so")
	assert.Contains(t, wrapBody("return ..."), "(function(...) return ...")
	assert.Contains(t, wrapBody("return 1"), "(function() return 1")
}

func TestScriptLine(t *testing.T) {
	for msg, want := range map[string]int{
		"ERR user_script:3: Script attempted to access nonexistent global variable 'foo' script: e242c1, on @user_script:3.": 3,
		"WRONGTYPE Operation against a key holding the wrong kind of value script: a7c3, on @user_script:12.":                12,
		"plain error": 0,
	} {
		got, ok := scriptLine(msg)
		assert.Equal(t, want, got, msg)
		assert.Equal(t, want != 0, ok, msg)
	}
}

func TestNewScriptSHA1(t *testing.T) {
	// The SHA1 is that of the body as sent (SCRIPT LOAD answers it; the
	// real-server tests check that), not of the .lua file.
	assert.Equal(t, "return 1", sc.Source())
	assert.Equal(t, "local r = (function() return 1\n"+strings.Replace(wrapEpilogue, "%s", "", 1), sc.Body())
	sum := sha1.Sum([]byte(sc.Body()))
	assert.Equal(t, hex.EncodeToString(sum[:]), sc.SHA1())
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
		_, err := Duration(sc, IntValue(tc.n), tc.unit)
		var de *DecodeError
		require.ErrorAs(t, err, &de, "%d %v", tc.n, tc.unit)
		assert.ErrorIs(t, err, ErrUnexpectedReply)
		assert.Contains(t, de.Want, "within ±292 years")
	}
	d, err := Duration(sc, IntValue(maxMs), time.Millisecond)
	require.NoError(t, err)
	assert.Equal(t, time.Duration(maxMs)*time.Millisecond, d)
	d, err = Duration(sc, IntValue(-maxMs), time.Millisecond)
	require.NoError(t, err)
	assert.Equal(t, -time.Duration(maxMs)*time.Millisecond, d)

	_, err = Time(sc, IntValue(math.MaxInt64), time.Second)
	assert.ErrorIs(t, err, ErrUnexpectedReply)
	for _, n := range []int64{math.MaxInt64, math.MinInt64} {
		tm, err := Time(sc, IntValue(n), time.Millisecond)
		require.NoError(t, err)
		assert.Equal(t, n, tm.UnixMilli())
	}
	tm, err := Time(sc, IntValue(253402300799), time.Second) // 9999-12-31T23:59:59Z
	require.NoError(t, err)
	assert.Equal(t, 9999, tm.UTC().Year())
}
