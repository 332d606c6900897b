--- draw is the fencing-token helper of the lock scripts that hand out a
--- hold (acquire, and release, abandon and force_unlock through
--- handoff.lua): each includes this file with ---@include and keeps fence
--- at KEYS[2]. It lives in lib/ so that luagen, given lua/lock, does not
--- take it for a script; so do the other helpers there.

-- draw sets fence (KEYS[2]) to a new fencing token, max(last + 1, server
-- time in µs from t, TIME's reply), kept for ttl ms, and returns it. SET's
-- GET option returns the last token in the same call, so only a clock that
-- stepped back below it costs a second write.
local function draw(t, ttl)
  local token = tonumber(t[1]) * 1000000 + tonumber(t[2])
  local last = tonumber(redis.call('SET', KEYS[2], token, 'PX', ttl, 'GET') or '0') or 0
  if last >= token then
    token = last + 1
    redis.call('SET', KEYS[2], token, 'PX', ttl) -- below 2^53: written exactly
  end
  return token
end
