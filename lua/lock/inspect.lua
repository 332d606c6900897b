#!lua flags=no-writes
--- Inspect reads the lock's state as owner sees it, without changing it.
---@script Inspect
---@key lock      {name}                             the lock hash: owner → hold count
---@arg owner   string   owner token to report on
---@return tuple Inspection   the lock's state
---@field holdCount int64             owner's hold count; 0 when owner does not hold it
---@field holders   int64             number of owners holding it: 0 (free) or 1
---@field ttl       time.Duration ms  remaining lease; -2 when free, -1 when it has no expiry

return {
  tonumber(redis.call('HGET', KEYS[1], ARGV[1]) or '0') or 0,
  redis.call('HLEN', KEYS[1]),
  redis.call('PTTL', KEYS[1]),
}
