--- Take takes qty units from a counter when it holds at least qty, and keeps
--- the counter for ttl seconds after the last take: the plain three-call
--- script (GET, DECRBY, SETEX; no shebang) that bench/plain sends raw and
--- through its generated wrapper.
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
