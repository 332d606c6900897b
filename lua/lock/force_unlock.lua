#!lua
--- ForceUnlock deletes the lock whoever holds it and hands it to the first
--- live waiter, as the holder's last Release would. It is for operators (a
--- holder that will never come back); the holder learns of it at its next
--- renewal.
---@script ForceUnlock
---@key lock      {name}                             the lock hash: owner → hold count
---@key fence     {name}:fence                       fencing counter (string)
---@key queue     {name}:queue                       list of waiting owners, oldest first
---@key waits     {name}:waits                       hash owner → "deadline grantLease[ since starve]" (ms)
---@key wake      {name}:wake:                       prefix of the Clients' wake channels (pub/sub, not a key): + a Client's id
---@arg fenceTTL  time.Duration ms  lifetime of fence after a handoff, whole ms >= 1
---@arg sharded   bool              publish with SPUBLISH instead of PUBLISH
---@return bool                     true when there was a lock to delete
---@include lib/handoff.lua

if redis.call('DEL', KEYS[1]) == 0 then
  return 0
end
handoff(ARGV[1])
return 1
