package gen

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// checks parses src and returns, per ---@arg name, the bound the generated
// method checks ("[lo,hi]"), or "" for none.
func checks(t *testing.T, src string) (map[string]string, Diagnostics) {
	t.Helper()
	s, ds := Parse("x.lua", "x.lua", []byte(src))
	require.NotNil(t, s)
	out := map[string]string{}
	for _, a := range s.Args {
		out[a.Name] = a.Check.String()
	}
	return out, ds
}

// TestArgChecks pins the bound each generated method checks for the
// caller's numbers a script turns into Lua numbers: the largest power of
// two from 2^53 down under which the script's arithmetic, replies and
// text stay exact, the type's own range for time.Time, an ---@arg range
// as written, and nothing for an arg the script never converts.
func TestArgChecks(t *testing.T) {
	for _, c := range []struct {
		name, src string
		want      map[string]string
	}{
		{"echo", "---@arg n int64 n\n---@return int64 n\nreturn tonumber(ARGV[1])\n",
			map[string]string{"n": "[-9007199254740992,9007199254740992]"}},
		{"limiter", "---@key k k\n---@arg limit int64 l\n---@return int64 n\nreturn tonumber(ARGV[1]) - redis.call('ZCARD', KEYS[1]) - 1\n",
			map[string]string{"limit": "[-4503599627370496,4503599627370496]"}},
		{"product", "---@arg n int64 n\n---@return int64 n\nreturn tonumber(ARGV[1]) * 1000\n",
			map[string]string{"n": "[-8796093022208,8796093022208]"}},
		{"half", "---@arg n int64 n\n---@return int64 n\nreturn math.floor(tonumber(ARGV[1]) * 1.5)\n",
			map[string]string{"n": "[-2251799813685248,2251799813685248]"}},
		// Lua 5.1's a % b is a - floor(a/b)*b: |a| + |b| must fit in 2^53.
		{"modulo", "---@arg a int64 a\n---@arg b int64 b\n---@return int64 n\nlocal b = tonumber(ARGV[2])\nif b == 0 then return 0 end\nreturn tonumber(ARGV[1]) % b\n",
			map[string]string{"a": "[-4503599627370496,4503599627370496]", "b": "[-4503599627370496,4503599627370496]"}},
		{"text", "---@key k k\n---@arg a int64 a\n---@return status\nredis.call('SET', KEYS[1], 'amt:' .. (tonumber(ARGV[1]) * 100))\nreturn redis.status_reply('OK')\n",
			map[string]string{"a": "[-549755813888,549755813888]"}},
		{"reassigned", "---@arg n int64 n\n---@return int64 n\nlocal n = ARGV[1]\nn = tonumber(n)\nreturn n * 2\n",
			map[string]string{"n": "[-4503599627370496,4503599627370496]"}},
		{"helper", "---@arg a int64 a\n---@arg b int64 b\n---@arg c int64 c\n---@return int64 n\nlocal function num(i) return tonumber(ARGV[i]) end\nreturn num(1) + num(2) + 3\n",
			map[string]string{"a": "[-2251799813685248,2251799813685248]", "b": "[-2251799813685248,2251799813685248]", "c": ""}},
		{"passed", "---@key k k\n---@arg n int64 n\n---@return int64 n\nreturn redis.call('INCRBY', KEYS[1], ARGV[1])\n",
			map[string]string{"n": ""}},
		{"compared", "---@key k k\n---@arg n int64 n\n---@return int64 n\nif redis.call('INCR', KEYS[1]) > tonumber(ARGV[1]) then return 1 end\nreturn 0\n",
			map[string]string{"n": "[-9007199254740992,9007199254740992]"}},
		{"ranged", "---@arg q int64 [1,1000] q\n---@arg s string {a|b} s\n---@arg id string [1,] id\n---@return int64 n\nreturn tonumber(ARGV[1]) * 1000000000000 + #ARGV[2] + #ARGV[3]\n",
			map[string]string{"q": "[1,1000]", "s": "{a|b}", "id": "[1,]"}},
		{"time", "---@arg at time.Time s t\n---@arg d time.Duration ms d\n---@return int64 n\nreturn tonumber(ARGV[1]) + tonumber(ARGV[2])\n",
			map[string]string{"at": "[-9223372036,9223372036]", "d": ""}},
	} {
		t.Run(c.name, func(t *testing.T) {
			got, ds := checks(t, c.src)
			assert.Empty(t, ds)
			assert.Equal(t, c.want, got)
		})
	}
}

// TestArgCheckTooSmall: a script that would need a bound below 2^31 is
// reported with the range to declare, and checked at 2^31 meanwhile.
func TestArgCheckTooSmall(t *testing.T) {
	got, ds := checks(t, "---@arg n int64 n\n---@return int64 n\nlocal n = tonumber(ARGV[1])\nreturn n * n\n")
	assert.Equal(t, map[string]string{"n": "[-2147483648,2147483648]"}, got)
	require.Len(t, ds, 1)
	assert.Contains(t, ds[0].Msg, "give n the range it takes: ---@arg n int64 [-2000000,2000000] n: a product (*) may not reach the caller as the integer it is (it may reach 2^62 (4611686018427387904))")
}

// TestRatelimitWithoutTrick runs the analysis on examples/ratelimit's
// allow.lua written plainly: the caller's numbers converted where they
// are declared, no string.match checks and no second assignment.
func TestRatelimitWithoutTrick(t *testing.T) {
	src := `---@key window  sorted set of request id → admission time in ms
---@arg now     time.Time ms       the caller's clock
---@arg span    time.Duration ms   the window's length
---@arg limit   int64              most requests admitted per window
---@arg id      string             the request's id
---@return tuple AllowResult      the decision
---@field allowed    bool              admitted
---@field remaining  int64             left
---@field retryAfter time.Duration ms  wait
local now, span, limit, id = tonumber(ARGV[1]), tonumber(ARGV[2]), tonumber(ARGV[3]), ARGV[4]
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', string.format('%d', now - span))
local count = redis.call('ZCARD', KEYS[1])
if redis.call('ZSCORE', KEYS[1], id) then
  return {1, limit - count, 0}
end
if count < limit then
  redis.call('ZADD', KEYS[1], ARGV[1], id)
  redis.call('PEXPIRE', KEYS[1], span)
  return {1, limit - count - 1, 0}
end
local oldest = redis.call('ZRANGE', KEYS[1], 0, 0, 'WITHSCORES')
return {0, 0, tonumber(oldest[2]) + span - now}
`
	got, ds := checks(t, src)
	assert.Empty(t, ds)
	assert.Equal(t, map[string]string{"now": "[-9223372036854,9223372036854]", "span": "", "limit": "[-4503599627370496,4503599627370496]", "id": ""}, got)
}
