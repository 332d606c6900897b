#!lua
--- Release lowers owner's hold count by one. The last hold goes to the
--- first live waiter in queue, in this script (a handoff): it gets hold
--- count 1, the lease it asked for (its grantLease) and a fencing token
--- drawn as by a first acquire, and one message "owner token" on its
--- Client's wake channel (wake .. the owner's text before its first ".")
--- tells it so, so that a contended lock passes in one round trip. Entries
--- past their deadline are dropped on the way. With nobody waiting, or a
--- first live waiter that polls and has waited less than its starve bound
--- (see acquire), the lock key is deleted and nothing is published. While holds remain the
--- lease is left as it is. A caller that does not hold the lock changes
--- nothing.
---
--- Only a release that leaves holds names a latch: it records its answer
--- there for latchTTL, so a retry after a lost reply returns the first
--- answer instead of releasing a second hold (Redisson issues 4871 and
--- 7367). The last release needs none: a retry finds the hold gone.
---
--- wake is sent in KEYS so that the client's slot check covers it; it is
--- the prefix of pub/sub channels, never a key. sharded picks SPUBLISH
--- (Redis Cluster: the message stays in the lock's shard) over PUBLISH.
---@script Release
---@key lock      {name}                             the lock hash: owner → hold count
---@key fence     {name}:fence                       fencing counter (string)
---@key queue     {name}:queue                       list of waiting owners, oldest first
---@key waits     {name}:waits                       hash owner → "deadline grantLease[ since starve]" (ms)
---@key wake      {name}:wake:                       prefix of the Clients' wake channels (pub/sub, not a key): + a Client's id
---@key ...latch  {name}:latch:<owner>.<seq:int64>   one call's answer, kept for a retry (at most one key): a reentrant acquire's or a release's that leaves holds
---@arg owner     string            owner token of the caller
---@arg sharded   bool              publish with SPUBLISH instead of PUBLISH
---@arg latchTTL  time.Duration ms  lifetime of the latch, whole ms >= 1
---@arg fenceTTL  time.Duration ms  lifetime of fence after a handoff, whole ms >= 1
---@return int64                    holds left; 0 when the lock was released or handed over
---@status 0 Released               the last hold was released or handed to a waiter
---@error nil NotHeld               owner does not hold the lock; nothing was changed
---@include lib/latch.lua
---@include lib/handoff.lua

local answer = latched()
if answer then
  return tonumber(answer)
end
local count = tonumber(redis.call('HGET', KEYS[1], ARGV[1]) or '0') or 0
if count <= 0 then
  return nil
end
if count > 1 then
  redis.call('HINCRBY', KEYS[1], ARGV[1], -1)
  latch(count - 1)
  return count - 1
end

redis.call('DEL', KEYS[1])
handoff(ARGV[4])
return 0
