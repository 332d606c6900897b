--- latch is the helper of the lock scripts whose call names a latch when
--- it is not idempotent (acquire's reentrant form, a release that leaves
--- holds): each includes this file with ---@include lib/latch.lua and keeps
--- the latch, when the call names one, at KEYS[6] and latchTTL at ARGV[3].

-- latched returns the answer an earlier try of this call recorded in the
-- latch (GET's reply: a string, or false when none is recorded), or nil
-- when the call names no latch.
local function latched()
  return KEYS[6] and redis.call('GET', KEYS[6])
end

-- latch records answer in the latch for latchTTL ms, when the call names
-- one, so that a retry after a lost reply returns it (latched).
local function latch(answer)
  if KEYS[6] then
    redis.call('SET', KEYS[6], answer, 'PX', ARGV[3])
  end
end
