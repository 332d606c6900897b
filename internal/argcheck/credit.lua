--- Credit records an amount in cents as text and returns it.
---@key log     list of records "amt:<cents>"
---@arg amount  int64  whole units
---@return int64       the amount in cents
local amount = ARGV[1]
amount = tonumber(amount)
redis.call('RPUSH', KEYS[1], 'amt:' .. (amount * 100))
return amount * 100
