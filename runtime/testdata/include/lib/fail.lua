-- fail sets the key with a lease of 0 ms, which Redis refuses, when how
-- is "helper", and for a second otherwise.
local function fail(how)
  local ms = 1000
  if how == 'helper' then
    ms = 0
  end
  return redis.call('SET', KEYS[1], 'v', 'PX', ms)
end
