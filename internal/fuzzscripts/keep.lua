--- Keep stores n and at, as sent, in its key and answers with them: a
--- script whose keys and args have a fixed length, so that its generated
--- method builds each call in a recycled buffer (luagenimpl.CallPool). What it
--- stored and answered must not change when later calls reuse the buffer.
---@key kept  string holding "n at" as received
---@arg n     int64               stored and echoed
---@arg at    time.Time ms        stored and echoed in Unix milliseconds
---@return []string  ARGV as received: n, at

redis.call('SET', KEYS[1], ARGV[1])
redis.call('APPEND', KEYS[1], ' ')
redis.call('APPEND', KEYS[1], ARGV[2])
return {ARGV[1], ARGV[2]}
