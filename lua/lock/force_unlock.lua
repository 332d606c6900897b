#!lua
--- ForceUnlock deletes the lock whoever holds it, and notifies waiters.
--- It is for operators (a holder that will never come back); the holder
--- learns of it at its next renewal.
---@script ForceUnlock
---@key lock     the lock hash: owner → hold count
---@key channel  unlock channel; must share lock's {hash tag}
---@arg sharded  bool   notify with SPUBLISH instead of PUBLISH
---@return bool         true when there was a lock to delete

if redis.call('DEL', KEYS[1]) == 0 then
  return 0
end
if ARGV[1] == '1' then
  redis.call('SPUBLISH', KEYS[2], 'forced')
else
  redis.call('PUBLISH', KEYS[2], 'forced')
end
return 1
