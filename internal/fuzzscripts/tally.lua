--- Tally adds n to a counter that expires at at, and answers the new count:
--- the integer-reply twin of Keep, whose warm generated method must
--- allocate no more than raw rueidis sending the same script.
---@key counter  string counter
---@arg n        int64           added with INCRBY
---@arg at       time.Time ms    when the counter expires (PEXPIREAT)
---@return int64 the count after the addition

local count = redis.call('INCRBY', KEYS[1], ARGV[1])
redis.call('PEXPIREAT', KEYS[1], ARGV[2])
return count
