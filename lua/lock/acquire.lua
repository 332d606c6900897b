#!lua
--- Acquire takes a reentrant lock for owner or, when owner already holds it,
--- raises owner's hold count; either way the lease is set to lease from now.
--- The lock is a hash of owner → hold count with a PEXPIRE lease (Redisson's
--- RLock layout). When another owner holds it nothing changes and the reply
--- carries that holder's remaining lease, so a waiter knows how long to wait.
---@script Acquire
---@key lock   the lock hash: owner → hold count
---@arg owner  string             owner token of the caller
---@arg lease  time.Duration ms   lease to set on success, whole ms >= 1
---@return tuple AcquireResult    outcome of one attempt
---@field acquired  bool              true when owner holds the lock after the call
---@field holdCount int64             owner's hold count after the call; 0 when refused
---@field ttl       time.Duration ms  when refused: the holder's remaining lease

-- Check "is anyone else holding it", not "does my field exist": the common
-- copy that tests only HEXISTS lock owner writes a second owner into a held
-- lock hash and hands both of them the lock.
local holders = redis.call('HLEN', KEYS[1])
if holders == 0 or redis.call('HEXISTS', KEYS[1], ARGV[1]) == 1 then
  local count = redis.call('HINCRBY', KEYS[1], ARGV[1], 1)
  redis.call('PEXPIRE', KEYS[1], ARGV[2])
  return {1, count, 0}
end
return {0, 0, redis.call('PTTL', KEYS[1])}
