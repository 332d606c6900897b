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

// TestRedisArrayReplyElements pins the element shapes commandReplies and
// callReply give array replies, on redis-server: what each element is in
// Lua (s: string, n: number, f: false for a nil element) and its value.
func TestRedisArrayReplyElements(t *testing.T) {
	srv := redistest.Start(t)
	srv.Do(t, "HSET", "h", "a", "1", "b", "2")
	srv.Do(t, "RPUSH", "l", "x", "y")
	srv.Do(t, "SADD", "s", "m")
	srv.Do(t, "ZADD", "z", "1", "p", "2", "q")
	srv.Do(t, "SET", "k", "v")
	const describe = `local r = redis.call(unpack(ARGV))
local out = {}
for i = 1, #r do
  local v = r[i]
  if v == false then out[i] = 'f' else out[i] = string.sub(type(v), 1, 1) .. ':' .. tostring(v) end
end
return table.concat(out, ' ')`
	for _, c := range []struct {
		cmd  []string
		want string
	}{
		{[]string{"HMGET", "h", "a", "zz", "b"}, "s:1 f s:2"}, // values only, nil for a missing field
		{[]string{"MGET", "k", "missing"}, "s:v f"},
		{[]string{"ZMSCORE", "z", "p", "zz"}, "s:1 f"},
		{[]string{"HGETALL", "h"}, "s:a s:1 s:b s:2"}, // field, value pairs
		{[]string{"HKEYS", "h"}, "s:a s:b"},
		{[]string{"HVALS", "h"}, "s:1 s:2"},
		{[]string{"LRANGE", "l", "0", "-1"}, "s:x s:y"},
		{[]string{"SMEMBERS", "s"}, "s:m"},
		{[]string{"ZRANGE", "z", "0", "-1"}, "s:p s:q"},
		{[]string{"ZRANGE", "z", "0", "-1", "withscores"}, "s:p s:1 s:q s:2"}, // member, score pairs
		{[]string{"ZREVRANGEBYSCORE", "z", "+inf", "-inf", "WITHSCORES"}, "s:q s:2 s:p s:1"},
		{[]string{"SMISMEMBER", "s", "m", "zz"}, "n:1 n:0"}, // integers
	} {
		got := srv.Do(t, append([]string{"EVAL", describe, "0"}, c.cmd...)...)
		assert.Equal(t, c.want, got, c.cmd)
	}
	// HRANDFIELD ... WITHVALUES: one random field, value pair.
	assert.Contains(t, []string{"s:a s:1", "s:b s:2"}, srv.Do(t, "EVAL", describe, "0", "HRANDFIELD", "h", "1", "WITHVALUES"))
	// TIME: seconds and microseconds, both bulk strings of digits.
	got := srv.Do(t, "EVAL", describe, "0", "TIME")
	assert.Regexp(t, `^s:\d+ s:\d+$`, got)
}
