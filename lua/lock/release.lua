#!lua
--- Release lowers owner's hold count by one. At zero the lock key is deleted
--- and an unlock message goes to channel, so waiters try again at once; while
--- holds remain the lease is left as it is (the watchdog or the explicit
--- lease governs it). A caller that does not hold the lock changes nothing.
---
--- The answer is recorded in latch for latchTTL: a retry after a lost reply
--- returns the first answer instead of releasing a second hold (Redisson
--- issues 4871 and 7367). acks are latches of the same owner's earlier calls
--- whose replies arrived; they are deleted.
---
--- channel is sent in KEYS so that the client's slot check covers it; it is
--- a pub/sub channel, never a key. sharded picks SPUBLISH (Redis Cluster:
--- the message stays in the lock's shard) over PUBLISH (one server; works on
--- every Redis version).
---@script Release
---@key lock      the lock hash: owner → hold count
---@key channel   unlock channel; must share lock's {hash tag}
---@key latch     this call's latch; must share lock's {hash tag}
---@key ...acks   latches of earlier calls to delete; must share lock's {hash tag}
---@arg owner     string            owner token of the caller
---@arg latchTTL  time.Duration ms  lifetime of the latch, whole ms >= 1
---@arg sharded   bool              notify with SPUBLISH instead of PUBLISH
---@return int64                    holds left; 0 when the lock was released
---@status 0 Released               the last hold was released and waiters were notified
---@error nil NotHeld               owner does not hold the lock; nothing was changed

for i = 4, #KEYS do
  redis.call('DEL', KEYS[i])
end

local latched = redis.call('GET', KEYS[3])
if latched then
  return tonumber(latched)
end

if redis.call('HEXISTS', KEYS[1], ARGV[1]) == 0 then
  return nil
end
local count = redis.call('HINCRBY', KEYS[1], ARGV[1], -1)
if count <= 0 then
  count = 0
  redis.call('DEL', KEYS[1])
  if ARGV[3] == '1' then
    redis.call('SPUBLISH', KEYS[2], 'released')
  else
    redis.call('PUBLISH', KEYS[2], 'released')
  end
end
redis.call('SET', KEYS[3], count, 'PX', ARGV[2])
return count
