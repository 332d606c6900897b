--- Take takes cost tokens from the subject's token bucket, which holds at
--- most burst tokens and gains one every interval. It is the generic cell
--- rate algorithm (GCRA, as in redis-cell and go-redis/redis_rate), kept in
--- whole milliseconds: the key holds one number, the time at which the bucket
--- will be full again (its "theoretical arrival time"), so a refill needs no
--- timer and no second key. The key expires when the bucket is full.
---
--- A refusal takes nothing. Taking is not idempotent: a retry after a lost
--- reply may take twice, so it is never retried blindly.
---@key bucket  string: when the bucket is full again, Unix ms; absent when full
---@arg now       time.Time ms                    the caller's clock; every caller of one key should share a clock
---@arg interval  time.Duration ms [1,86400000]   time to gain one token, whole ms, at most a day
---@arg burst     int64 [1,100000000]             most tokens the bucket holds
---@arg cost      int64 [1,100000000]             tokens to take, 1..burst
---@return tuple TakeResult        the decision
---@field allowed    bool              true when cost tokens were taken
---@field remaining  int64             whole tokens left after the call
---@field retryAfter time.Duration ms  when refused: how long until cost tokens are there; 0 when allowed
---@error BAD_ARG InvalidBucket        now, interval, burst or cost is not a positive integer, or cost > burst
---@error BAD_STATE CorruptBucket      the key holds something else than a time in ms; nothing changed

-- tonumber would accept "1.5", "0x10" and " 1": the integers must be
-- written plainly and be at least 1. (How large they may be is the
-- ---@arg ranges, which the generated method checks.)
for i, name in ipairs({'now', 'interval', 'burst', 'cost'}) do
  if not string.match(ARGV[i], '^[1-9][0-9]*$') then
    return redis.error_reply('BAD_ARG ' .. name .. ' must be an integer >= 1, got "' .. ARGV[i] .. '"')
  end
end
local now, interval, burst, cost = tonumber(ARGV[1]), tonumber(ARGV[2]), tonumber(ARGV[3]), tonumber(ARGV[4])
if cost > burst then
  return redis.error_reply('BAD_ARG cost ' .. cost .. ' is more than burst ' .. burst .. ': it would never be allowed')
end
if interval * burst > 1e15 then
  return redis.error_reply('BAD_ARG interval * burst must be at most 10^15 ms')
end

-- full is the bucket's depth in time. tat <= now means a full bucket.
local full = interval * burst
local stored = redis.call('GET', KEYS[1])
if stored and (not string.match(stored, '^[0-9]+$') or #stored > 16) then
  return redis.error_reply('BAD_STATE bucket holds "' .. stored .. '", not a time in ms')
end
local tat = tonumber(stored or now)
if tat < now then
  tat = now
end
local after = tat + cost * interval
if after - full > now then
  return {0, math.floor((full - (tat - now)) / interval), after - full - now}
end
redis.call('SET', KEYS[1], string.format('%d', after), 'PX', string.format('%d', after - now))
return {1, math.floor((full - (after - now)) / interval), 0}
