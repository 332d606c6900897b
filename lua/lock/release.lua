#!lua
--- Release lowers owner's hold count by one. At zero the lock key is deleted
--- and an unlock message is published on channel so waiters retry at once;
--- while holds remain the lease is reset to lease from now. A caller that
--- does not hold the lock changes nothing.
---@script Release
---@key lock     the lock hash: owner → hold count
---@key channel  unlock channel; must share lock's {hash tag}
---@arg owner    string             owner token of the caller
---@arg lease    time.Duration ms   lease to keep while holds remain, whole ms >= 1
---@return int64                    holds left; 0 when the lock was released
---@status 0 Released              the last hold was released and waiters were notified
---@error nil NotHeld               owner does not hold the lock; nothing was changed

if redis.call('HEXISTS', KEYS[1], ARGV[1]) == 0 then
  return nil
end
local count = redis.call('HINCRBY', KEYS[1], ARGV[1], -1)
if count > 0 then
  redis.call('PEXPIRE', KEYS[1], ARGV[2])
  return count
end
redis.call('DEL', KEYS[1])
redis.call('PUBLISH', KEYS[2], KEYS[1])
return 0
