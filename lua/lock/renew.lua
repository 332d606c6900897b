#!lua
--- Renew sets the lease of a lock owner holds to lease from now (never from
--- the previous deadline, so delays do not add up). It does nothing when
--- owner does not hold the lock (released, expired or taken by another
--- owner), so a late renewal can never resurrect a lost lock. It is
--- idempotent and safe to retry.
---@script Renew
---@key lock      {name}                             the lock hash: owner → hold count
---@arg owner  string             owner token of the caller
---@arg lease  time.Duration ms   new lease, whole ms >= 1
---@return bool                   true when the lease was extended

if redis.call('HEXISTS', KEYS[1], ARGV[1]) == 1 then
  redis.call('PEXPIRE', KEYS[1], ARGV[2])
  return 1
end
return 0
