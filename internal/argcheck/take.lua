--- Take takes qty units of one size from its stock counter.
---@keys ItemKeys KeysFor item{sku} one item's keys
---@key stock   {sku}:stock  string counter of units left
---@key last    {sku}:last   string: the last take, size:note
---@arg qty     int64 [1,1000]  units to take
---@arg size    string {S|M|L}  the size, for the record
---@arg note    string [1,64]   why, non-empty
---@return int64                units left
---@error -1 OutOfStock         fewer than qty units are left
local left = tonumber(redis.call('GET', KEYS[1]) or '0')
local qty = tonumber(ARGV[1])
if left < qty then
  return -1
end
redis.call('SET', KEYS[2], ARGV[2] .. ':' .. ARGV[3])
return redis.call('DECRBY', KEYS[1], qty)
