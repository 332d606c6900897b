--- clock is the server-time helper of the lock scripts that compare a
--- waiter's deadline with now (acquire, and release, abandon and
--- force_unlock through handoff.lua): each includes this file with
--- ---@include. It reads no KEYS or ARGV.

-- clock returns TIME's reply, for draw, and the server time it names in
-- whole ms, the unit of the deadlines in waits.
local function clock()
  local t = redis.call('TIME')
  return t, tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
end
