#!lua flags=allow-cross-slot-keys
--- Spread counts one run in each of its keys, which may hash to different
--- slots: fine on a single node, refused with runtime.ErrCrossSlot on a
--- cluster.
---@script Spread
---@key first      string counter
---@key second     string counter, in any slot
---@return int64   first's count after this run

local n = redis.call('INCR', KEYS[1])
redis.call('INCR', KEYS[2])
return n
