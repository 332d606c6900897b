#!lua
--- Handoff is Release for a holder whose Client has another Mutex waiting
--- for the same lock: when owner gives back its last hold, the lock goes
--- straight to heir instead of being freed, in one step, so the waiter
--- needs neither an unlock message nor an acquire of its own. heir gets
--- hold count 1, its own lease, and a fencing token drawn as by a first
--- acquire: max(last token + 1, server time in µs).
---
--- The grant is recorded in heirLatch as the answer of an Acquire call of
--- heir (the token: one hold), so heir can always learn it, even when this
--- call's reply is lost: an Acquire with heirLatch returns the grant while
--- heir holds it, and an Abandon with heirLatch gives it back. When
--- heirLatch already exists (heir gave up: Abandon or a sealed Acquire ran
--- first) the lock is released as by Release and waiters are notified.
---
--- While owner holds more than one hold, one is given back and nothing
--- else happens. A caller that does not hold the lock changes nothing
--- (held is false). A retry after a lost reply returns the first answer:
--- a grant is read back from heirLatch (only this call can have written
--- one there), any other answer from latch, where it is recorded for
--- latchTTL. acks are deleted as in Release.
---@script Handoff
---@key lock          the lock hash: owner → hold count
---@key fence         fencing counter (string); must share lock's {hash tag}
---@key channel       unlock channel; must share lock's {hash tag}
---@key latch         this call's latch; must share lock's {hash tag}
---@key heirLatch     latch of the grant: an Acquire call of heir; must share lock's {hash tag}
---@key ...acks       latches of earlier calls to delete; must share lock's {hash tag}
---@arg owner         string            owner token of the caller
---@arg heir          string            owner token the lock goes to
---@arg heirLease     time.Duration ms  heir's lease, whole ms >= 1
---@arg latchTTL      time.Duration ms  lifetime of latch, whole ms >= 1
---@arg heirLatchTTL  time.Duration ms  lifetime of heirLatch, whole ms >= 1
---@arg fenceTTL      time.Duration ms  lifetime of fence after the grant, whole ms >= 1
---@arg sharded       bool              notify with SPUBLISH instead of PUBLISH
---@return tuple HandoffResult          outcome of the release
---@field held   bool    false when owner did not hold the lock; nothing was changed
---@field left   int64   owner's holds left; 0 when its last hold was given back
---@field token  int64   heir's fencing token when the lock went to heir; 0 otherwise

for i = 6, #KEYS do
  redis.call('DEL', KEYS[i])
end

local latched = redis.call('GET', KEYS[4])
if latched then
  return {1, tonumber(latched), 0}
end
local heirs = redis.call('GET', KEYS[5])
if tonumber(heirs) then
  return {1, 0, tonumber(heirs)} -- this call's grant
end

-- Every read that can fail comes before the first write (see Acquire).
local count = tonumber(redis.call('HGET', KEYS[1], ARGV[1]) or '0') or 0
if count <= 0 then
  return {0, 0, 0}
end
if count > 1 then
  redis.call('HINCRBY', KEYS[1], ARGV[1], -1)
  redis.call('SET', KEYS[4], count - 1, 'PX', ARGV[4])
  return {1, count - 1, 0}
end
if heirs then
  -- heir gave up: a plain release.
  redis.call('DEL', KEYS[1])
  if ARGV[7] == '1' then
    redis.call('SPUBLISH', KEYS[3], 'released')
  else
    redis.call('PUBLISH', KEYS[3], 'released')
  end
  redis.call('SET', KEYS[4], 0, 'PX', ARGV[4])
  return {1, 0, 0}
end
local now = redis.call('TIME')
local floor = tonumber(now[1]) * 1000000 + tonumber(now[2])
local last = tonumber(redis.call('GET', KEYS[2]) or '0') or 0
-- A token is below 2^53, so redis.call writes it exactly (%.17g).
local token = math.max(last + 1, floor)

redis.call('DEL', KEYS[1])
redis.call('HSET', KEYS[1], ARGV[2], 1)
redis.call('PEXPIRE', KEYS[1], ARGV[3])
redis.call('SET', KEYS[2], token, 'PX', ARGV[6])
redis.call('SET', KEYS[5], token, 'PX', ARGV[5])
return {1, 0, token}
