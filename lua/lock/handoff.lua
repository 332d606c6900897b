#!lua
--- Handoff is Release for a holder whose Client has another Mutex waiting
--- for the same lock: when owner gives back its last hold, the lock goes
--- straight to heir instead of being freed, in one step, so the waiter
--- needs neither an unlock message nor an acquire of its own. heir gets
--- hold count 1, its own lease, and a fencing token drawn as by a first
--- acquire: max(last token + 1, server time in µs).
---
--- The grant is recorded in heirLatch as the answer of an Acquire call of
--- heir ("1 <token>"), so heir can always learn it, even when this call's
--- reply is lost: an Acquire with heirLatch returns the grant while heir
--- holds it, and an Abandon with heirLatch gives it back. When heirLatch
--- already exists (heir gave up: Abandon or a sealed Acquire ran first) the
--- lock is released as by Release and waiters are notified.
---
--- While owner holds more than one hold, one is given back and nothing
--- else happens. A caller that does not hold the lock changes nothing
--- (held is false). Otherwise the answer is recorded in latch for
--- latchTTL, so a retry after a lost reply returns the first answer, grant
--- included. acks are deleted as in Release.
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
  local left, token = string.match(latched, '^(%d+) (%d+)$')
  return {1, tonumber(left), tonumber(token)}
end

-- Every read that can fail comes before the first write (see Acquire).
local count = tonumber(redis.call('HGET', KEYS[1], ARGV[1]) or '0') or 0
if count <= 0 then
  return {0, 0, 0}
end
if count > 1 then
  redis.call('HINCRBY', KEYS[1], ARGV[1], -1)
  redis.call('SET', KEYS[4], string.format('%d 0', count - 1), 'PX', ARGV[4])
  return {1, count - 1, 0}
end
local token = 0
local gone = redis.call('EXISTS', KEYS[5]) == 1
if not gone then
  local now = redis.call('TIME')
  local floor = tonumber(now[1]) * 1000000 + tonumber(now[2])
  local last = tonumber(redis.call('GET', KEYS[2]) or '0') or 0
  token = math.max(last + 1, floor)
end

redis.call('DEL', KEYS[1])
if gone then
  if ARGV[7] == '1' then
    redis.call('SPUBLISH', KEYS[3], 'released')
  else
    redis.call('PUBLISH', KEYS[3], 'released')
  end
else
  redis.call('HSET', KEYS[1], ARGV[2], 1)
  redis.call('PEXPIRE', KEYS[1], ARGV[3])
  redis.call('SET', KEYS[2], string.format('%.0f', token), 'PX', ARGV[6])
  redis.call('SET', KEYS[5], string.format('1 %.0f', token), 'PX', ARGV[5])
end
redis.call('SET', KEYS[4], string.format('0 %.0f', token), 'PX', ARGV[4])
return {1, 0, token}
