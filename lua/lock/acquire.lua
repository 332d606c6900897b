#!lua
--- Acquire takes the reentrant lock for owner, or raises owner's hold count
--- when owner already holds it; either way the lease is set to lease from
--- now. The lock is a hash of owner → hold count under a PEXPIRE lease
--- (Redisson's RLock layout). When another owner holds it nothing changes
--- and the reply carries the holder's remaining lease, so a waiter knows how
--- long it may have to wait.
---
--- A first acquire (the lock was free) draws a fencing token:
--- max(last token + 1, server time in µs), kept in fence for fenceTTL. The
--- counter alone would go back to 1 when fence is lost (a restart without
--- persistence, a failover that missed the last write) or expires; the clock
--- floor keeps tokens rising across both, and the counter keeps them rising
--- should the clock step back while fence lives.
---
--- Every call names a latch of its own. A successful acquire records its
--- answer there for latchTTL, so a retry after a lost reply returns that
--- answer instead of counting a second hold; an Abandon that ran first leaves
--- "X" there and the late acquire does nothing. acks are latches of the same
--- owner's earlier calls whose replies arrived; they are deleted, so a busy
--- lock leaves at most one latch per owner behind.
---
--- A Handoff may name latch as its heir's latch: it then records a grant
--- there, and the grant is this call's answer. seal closes that door when
--- the call is refused: "X" is left in latch, so a Handoff that has not run
--- yet grants nothing to it.
---@script Acquire
---@key lock      the lock hash: owner → hold count
---@key fence     fencing counter (string); must share lock's {hash tag}
---@key latch     this call's latch; must share lock's {hash tag}
---@key ...acks   latches of earlier calls to delete; must share lock's {hash tag}
---@arg owner     string            owner token of the caller
---@arg lease     time.Duration ms  lease to set on success, whole ms >= 1
---@arg latchTTL  time.Duration ms  lifetime of the latch, whole ms >= 1
---@arg fenceTTL  time.Duration ms  lifetime of fence after a first acquire, whole ms >= 1
---@arg seal      bool              when refused, leave "X" in latch
---@return tuple AcquireResult      outcome of one attempt
---@field acquired  bool              true when owner holds the lock after the call
---@field holdCount int64             owner's hold count after the call; 0 when refused
---@field ttl       time.Duration ms  when refused: the holder's remaining lease (-1: none, -2: no lock)
---@field token     int64             fencing token drawn by a first acquire; 0 otherwise

for i = 4, #KEYS do
  redis.call('DEL', KEYS[i])
end

local latched = redis.call('GET', KEYS[3])
if latched then
  -- A retry of a call that already ran (or was abandoned), or a Handoff's
  -- grant (the token alone: one hold). Repeat its answer only while the
  -- hold it took still exists.
  local count, token = string.match(latched, '^(%d+) (%d+)$')
  if not count and tonumber(latched) then
    count, token = 1, latched
  end
  if count and redis.call('HEXISTS', KEYS[1], ARGV[1]) == 1 then
    return {1, tonumber(count), 0, tonumber(token)}
  end
  return {0, 0, redis.call('PTTL', KEYS[1]), 0}
end

-- Test "is the lock free", not only "is my field there": a script that only
-- checks HEXISTS lock owner writes a second owner into a held lock hash and
-- hands both of them the lock.
-- Every read that can fail (a key of the wrong type) comes before the first
-- write, so an error reply means that no hold was taken: Redis does not roll
-- a script back.
local count
local token = 0
if redis.call('HEXISTS', KEYS[1], ARGV[1]) == 1 then
  count = redis.call('HINCRBY', KEYS[1], ARGV[1], 1)
elseif redis.call('EXISTS', KEYS[1]) == 0 then
  local now = redis.call('TIME')
  local floor = tonumber(now[1]) * 1000000 + tonumber(now[2])
  local last = tonumber(redis.call('GET', KEYS[2]) or '0') or 0
  token = math.max(last + 1, floor)
  count = redis.call('HINCRBY', KEYS[1], ARGV[1], 1)
  redis.call('SET', KEYS[2], token, 'PX', ARGV[4]) -- below 2^53: written exactly
else
  if ARGV[5] == '1' then
    redis.call('SET', KEYS[3], 'X', 'PX', ARGV[3])
  end
  return {0, 0, redis.call('PTTL', KEYS[1]), 0}
end
redis.call('PEXPIRE', KEYS[1], ARGV[2])
redis.call('SET', KEYS[3], string.format('%d %.0f', count, token), 'PX', ARGV[3])
return {1, count, 0, token}
