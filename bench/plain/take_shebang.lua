#!lua
--- TakeShebang is take.lua with a "#!lua" shebang line (no flags), which
--- makes Redis 7 run it with the flags of a script that may write: the
--- other variant of the plain script that bench/plain measures.
---@key counter  string counter holding the units left
---@arg qty      int64             units to take, >= 1
---@arg ttl      time.Duration s   how long the counter lives after this take
---@return int64 the units left after the take
---@error -1 NotEnough  the counter holds fewer than qty units

local have = tonumber(redis.call('GET', KEYS[1]) or '0')
if have < tonumber(ARGV[1]) then
  return -1
end
local left = redis.call('DECRBY', KEYS[1], ARGV[1])
redis.call('SETEX', KEYS[1], ARGV[2], left)
return left
