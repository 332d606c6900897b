#!lua
--- ForceUnlock deletes the lock whoever holds it and hands it to the first
--- live waiter, as the holder's last Release would. It is for operators (a
--- holder that will never come back); the holder learns of it at its next
--- renewal.
---@script ForceUnlock
---@key lock      {name}                             the lock hash: owner → hold count
---@key fence     {name}:fence                       fencing counter (string)
---@key queue     {name}:queue                       list of waiting owners, oldest first
---@key waits     {name}:waits                       hash owner → "deadline grantLease" (ms)
---@key wake      {name}:wake:                       prefix of the Clients' wake channels (pub/sub, not a key): + a Client's id
---@arg fenceTTL  time.Duration ms  lifetime of fence after a handoff, whole ms >= 1
---@arg sharded   bool              publish with SPUBLISH instead of PUBLISH
---@return bool                     true when there was a lock to delete
---@include lib/draw.lua

if redis.call('DEL', KEYS[1]) == 0 then
  return 0
end
local heir = redis.call('LPOP', KEYS[3])
if heir then
  local t = redis.call('TIME')
  local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
  while heir do
    local deadline, lease = string.match(redis.call('HGET', KEYS[4], heir) or '', '^(%d+) (%d+)$')
    redis.call('HDEL', KEYS[4], heir)
    if deadline and tonumber(deadline) >= now then
      local token = draw(t, ARGV[1])
      redis.call('HSET', KEYS[1], heir, 1)
      redis.call('PEXPIRE', KEYS[1], lease)
      local channel = KEYS[5] .. string.match(heir, '^[^.]*')
      local msg = heir .. ' ' .. string.format('%.0f', token)
      if ARGV[2] == '1' then
        redis.call('SPUBLISH', channel, msg)
      else
        redis.call('PUBLISH', channel, msg)
      end
      break
    end
    heir = redis.call('LPOP', KEYS[3])
  end
end
return 1
