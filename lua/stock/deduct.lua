#!lua
--- Deduct takes qty units from a SKU's stock and records the purchase.
--- The check and the decrement run as one script, so concurrent buyers can
--- never oversell: when stock is lower than qty nothing is changed.
---@script Deduct
---@key stock  string counter holding the units left, e.g. seckill:{sku42}:stock
---@key log    purchase record written on success; must share stock's {hash tag}
---@arg qty    int64              units to take; a decimal integer >= 1
---@arg buyer  string             buyer id, stored in the purchase record
---@arg at     time.Time ms       purchase time, stored in the purchase record
---@arg ttl    time.Duration s    purchase record lifetime, whole seconds >= 1
---@return int64                  units left after the deduction
---@error -1 OutOfStock           stock is lower than qty; nothing was changed
---@error -2 NoSuchSKU            the stock key does not exist
---@error BAD_ARG BadArgument     qty, at or ttl is not a positive integer

-- Validate before touching anything: tonumber would accept "1.5", "0x10"
-- and " 1", and DECRBY with a fraction fails only after the check passed.
for i, name in ipairs({'qty', 'buyer', 'at', 'ttl'}) do
  if name ~= 'buyer' and not string.match(ARGV[i], '^[1-9][0-9]*$') then
    return redis.error_reply('BAD_ARG ' .. name .. ' must be an integer >= 1, got "' .. ARGV[i] .. '"')
  end
end
local qty = tonumber(ARGV[1])

local stock = redis.call('GET', KEYS[1])
if not stock then
  return -2
end
if tonumber(stock) < qty then
  return -1
end
local left = redis.call('DECRBY', KEYS[1], ARGV[1])
redis.call('SET', KEYS[2], ARGV[2] .. ' ' .. ARGV[1] .. ' ' .. ARGV[3], 'EX', ARGV[4])
return left
