#!lua
--- Abandon undoes an Acquire call whose outcome the caller never learned
--- (its context ended, or its reply was lost and could not be retried), so a
--- cancelled acquire is rolled back instead of being held until its lease
--- runs out. latch is that Acquire call's latch:
---
---   - the call ran and took a hold that still exists: the hold is given
---     back (the last one deletes the lock and notifies waiters);
---   - the call has not run (it may still be in flight): nothing to undo.
---
--- Either way latch becomes "X" for latchTTL, so an Acquire arriving late
--- does nothing, and a second Abandon does nothing.
---@script Abandon
---@key lock      the lock hash: owner → hold count
---@key channel   unlock channel; must share lock's {hash tag}
---@key latch     the abandoned Acquire call's latch; must share lock's {hash tag}
---@arg owner     string            owner token of the caller
---@arg latchTTL  time.Duration ms  lifetime of the "X" latch, whole ms >= 1
---@arg sharded   bool              notify with SPUBLISH instead of PUBLISH
---@return bool                     true when a hold taken by the call was given back

local latched = redis.call('GET', KEYS[3])
redis.call('SET', KEYS[3], 'X', 'PX', ARGV[2])
if not latched or latched == 'X' then
  return 0
end
if redis.call('HEXISTS', KEYS[1], ARGV[1]) == 0 then
  return 0
end
if redis.call('HINCRBY', KEYS[1], ARGV[1], -1) <= 0 then
  redis.call('DEL', KEYS[1])
  if ARGV[3] == '1' then
    redis.call('SPUBLISH', KEYS[2], 'abandoned')
  else
    redis.call('PUBLISH', KEYS[2], 'abandoned')
  end
end
return 1
