package goredis_test

import (
	"errors"
	"io"
	"math/big"
	"testing"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/luagen/luagen/runtime"
	"github.com/luagen/luagen/runtime/goredis"
)

// The values go-redis' reader produces, converted. Real-server tests of
// every reply shape are in package runtime (TestRepliesFromRealServer,
// TestGoRedisRESP2Replies); these pin the cases a server sends rarely.
func TestFromGoRedis(t *testing.T) {
	big30, _ := new(big.Int).SetString("123456789012345678901234567890", 10)
	for name, tc := range map[string]struct {
		in   any
		want runtime.Value
	}{
		"nil":        {nil, runtime.Nil},
		"int":        {int64(-7), runtime.IntValue(-7)},
		"string":     {"x", runtime.StringValue("x")},
		"empty":      {[]any{}, runtime.ArrayValue()},
		"double":     {1.5, runtime.Value{Kind: runtime.KindDouble, Float: 1.5}},
		"true":       {true, runtime.Value{Kind: runtime.KindBool, Int: 1}},
		"false":      {false, runtime.Value{Kind: runtime.KindBool}},
		"big number": {big30, runtime.Value{Kind: runtime.KindBigNumber, Str: "123456789012345678901234567890"}},
		"nested": {[]any{int64(1), nil, []any{"a"}}, runtime.ArrayValue(runtime.IntValue(1), runtime.Nil,
			runtime.ArrayValue(runtime.StringValue("a")))},
		"error entry": {[]any{errReply("ERR bad thing")}, runtime.ArrayValue(runtime.Value{Kind: runtime.KindError, Str: "bad thing"})},
		"map sorted by key": {map[any]any{"z": int64(1), "a": "x", int64(5): nil}, runtime.Value{Kind: runtime.KindMap, Array: []runtime.Value{
			runtime.IntValue(5), runtime.Nil, runtime.StringValue("a"), runtime.StringValue("x"), runtime.StringValue("z"), runtime.IntValue(1)}}},
	} {
		got, err := goredis.FromGoRedis(tc.in, nil)
		require.NoError(t, err, name)
		assert.Equal(t, tc.want, got, name)
	}
}

// errReply is an error reply as go-redis' reader makes it.
type errReply string

func (e errReply) Error() string { return string(e) }
func (errReply) RedisError()     {}

func TestFromGoRedisErrors(t *testing.T) {
	v, err := goredis.FromGoRedis(nil, redis.Nil)
	require.NoError(t, err, "a nil reply is a value")
	assert.Equal(t, runtime.Nil, v)

	_, err = goredis.FromGoRedis(nil, errReply("ERR NOSCRIPT No matching script"))
	var re *runtime.ReplyError
	require.ErrorAs(t, err, &re)
	assert.Equal(t, "NOSCRIPT No matching script", re.Msg, "ERR is dropped, as rueidis does")
	assert.True(t, runtime.IsNoScript(err))

	_, err = goredis.FromGoRedis(nil, redis.ErrClosed)
	require.ErrorIs(t, err, redis.ErrClosed)
	require.ErrorIs(t, err, runtime.ErrClientClosed)
	assert.Equal(t, redis.ErrClosed.Error(), err.Error())
	assert.False(t, runtime.IsTransient(err), "a closed client never reopens")

	_, err = goredis.FromGoRedis(nil, io.EOF)
	assert.Same(t, io.EOF, err, "connection errors pass unchanged")
	assert.False(t, errors.As(err, &re))
}
