package gen

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/luagen/luagen/redistest"
)

// TestRedisReplyConversions pins, on a real redis-server, the conversions
// the reply-shape analysis relies on (replyshape.go; Redis 7.0
// src/script_lua.c luaReplyToRedisReply and redisProtocolToLuaType): if a
// server version changes one, the analysis must change with it.
func TestRedisReplyConversions(t *testing.T) {
	srv := redistest.Start(t)
	srv.Do(t, "SET", "counter", "1")
	for _, c := range []struct {
		script string
		args   []string
		want   string
	}{
		// Lua → Redis
		{"return 3.7", nil, "3"}, // numbers are truncated toward zero
		{"return -3.7", nil, "-3"},
		{"return tonumber(ARGV[1]) * 1.5", []string{"2.5"}, "3"},
		{"return true", nil, "1"},
		{"return false", nil, "<nil>"},
		{"return nil", nil, "<nil>"},
		{"return 1, 2", nil, "1"},                          // only the first value
		{"return {1, nil, 3}", nil, "[1]"},                 // the array ends at the first nil
		{"return {1, false, 3}", nil, "[1 <nil> 3]"},       // false is a nil element
		{"return {err = 'E x', ok = 'y'}", nil, "ERR E x"}, // err wins over ok
		{"return {1, 2, err = 'E x'}", nil, "ERR E x"},
		{"return {err = 5}", nil, "[]"}, // err must be a string
		{"return {ok = 'FINE'}", nil, "FINE"},
		{"return redis.error_reply('MOVED 1 127.0.0.1:7000')", nil, "ERR MOVED 1 127.0.0.1:7000"},
		// Redis → Lua
		{"return type(redis.call('GET', 'missing'))", nil, "boolean"}, // nil bulk → false
		{"return type(redis.call('INCR', 'counter'))", nil, "number"},
		{"return type(redis.call('SET', 'k', 'v'))", nil, "table"}, // status → {ok=...}
		{"return redis.call('SET', 'k', 'v')", nil, "OK"},
		{"return type(redis.call('MGET', 'k', 'missing')[2])", nil, "boolean"},
		{"return type(redis.pcall('INCR', 'k'))", nil, "table"}, // error → {err=...}
		{"return redis.pcall('INCR', 'k')['err']", nil, "ERR value is not an integer or out of range"},
	} {
		got := srv.Do(t, append([]string{"EVAL", c.script, "0"}, c.args...)...)
		assert.Equal(t, c.want, got, c.script)
	}
}
