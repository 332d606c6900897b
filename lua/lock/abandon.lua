#!lua
--- Abandon is how a waiter gives up: its Acquire call attempt (and every
--- earlier one) is cancelled, whether it ran, runs later or never arrives,
--- so a cancelled or timed-out acquire is rolled back instead of being held
--- until its lease runs out.
---
---   - tomb is raised to attempt: an Acquire of owner numbered at or below
---     it that arrives later does nothing;
---   - owner leaves the queue;
---   - when owner holds the lock (the call ran, or a release handed the lock
---     to owner meanwhile) the lock is released as by Release, and goes to
---     the next live waiter. The caller must not hold the lock otherwise:
---     Abandon is for a Mutex that holds nothing.
---
--- When the lock is free with waiters queued, the first live one is handed
--- the lock too, so nobody waits behind an owner that left.
---@script Abandon
---@key lock      {name}                             the lock hash: owner → hold count
---@key fence     {name}:fence                       fencing counter (string)
---@key queue     {name}:queue                       list of waiting owners, oldest first
---@key waits     {name}:waits                       hash owner → "deadline grantLease[ since starve]" (ms)
---@key wake      {name}:wake:                       prefix of the Clients' wake channels (pub/sub, not a key): + a Client's id
---@key tomb      {name}:tomb:<owner>                owner's highest abandoned attempt
---@arg owner     string            owner token of the caller
---@arg sharded   bool              publish with SPUBLISH instead of PUBLISH
---@arg tombTTL   time.Duration ms  lifetime of tomb, whole ms >= 1
---@arg fenceTTL  time.Duration ms  lifetime of fence after a handoff, whole ms >= 1
---@arg attempt   int64             the abandoned call's number
---@return bool                     true when a hold of owner was given back
---@include lib/handoff.lua

if tonumber(redis.call('GET', KEYS[6]) or '0') < tonumber(ARGV[5]) then
  redis.call('SET', KEYS[6], ARGV[5], 'PX', ARGV[3])
end
redis.call('LREM', KEYS[3], 0, ARGV[1])
redis.call('HDEL', KEYS[4], ARGV[1])
local held = redis.call('HEXISTS', KEYS[1], ARGV[1]) == 1
if held then
  redis.call('DEL', KEYS[1])
elseif redis.call('EXISTS', KEYS[1]) == 1 then
  return 0
end
handoff(ARGV[4])
if held then
  return 1
end
return 0
