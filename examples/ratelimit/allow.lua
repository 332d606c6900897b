--- Allow admits a request when the subject made fewer than limit requests
--- in the sliding window (now - span, now]: a sorted set holds one member
--- per admitted request, scored with its time in ms. Entries that left the
--- window are removed first, so the set never holds more than limit members,
--- and the key expires span after the last admitted request.
---
--- A request id already in the window is answered "allowed" again without
--- being counted twice, so a retry after a lost reply is harmless. A refused
--- request records nothing.
---@key window  sorted set of request id → admission time in ms, one per subject
---@arg now     time.Time ms       the caller's clock; every caller of one key should share a clock
---@arg span    time.Duration ms   the window's length, whole ms >= 1
---@arg limit   int64              most requests admitted per window, >= 1
---@arg id      string             the request's id, unique per request: retries reuse it
---@idempotent a request id already in the window is answered again without being counted twice
---@return tuple AllowResult      the decision
---@field allowed    bool              true when the request was admitted (now or by an earlier try)
---@field remaining  int64             requests still admitted in this window after this one
---@field retryAfter time.Duration ms  when refused: how long until the oldest request leaves the window; 0 when allowed
---@error BAD_ARG InvalidWindow        now, span or limit is not a positive integer, or id is empty

local id = ARGV[4]
-- tonumber would accept "1.5", "0x10" and " 1": the integers must be
-- written plainly and be at least 1. (How large they may be is the
-- generated method's check: it keeps limit within what the arithmetic
-- below holds exactly, and now and span are bounded by their types.)
for i, name in ipairs({'now', 'span', 'limit'}) do
  if not string.match(ARGV[i], '^[1-9][0-9]*$') then
    return redis.error_reply('BAD_ARG ' .. name .. ' must be an integer >= 1, got "' .. ARGV[i] .. '"')
  end
end
if id == '' then
  return redis.error_reply('BAD_ARG id must not be empty')
end
local now, span, limit = tonumber(ARGV[1]), tonumber(ARGV[2]), tonumber(ARGV[3])

-- Scores <= now - span have left the window (its start is exclusive).
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
-- Full: the oldest admission leaves the window at its score + span.
local oldest = redis.call('ZRANGE', KEYS[1], 0, 0, 'WITHSCORES')
return {0, 0, tonumber(oldest[2]) + span - now}
