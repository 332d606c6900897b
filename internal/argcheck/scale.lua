--- Scale returns a * 1.5, rounded down, plus b, and stores it.
---@key result  string: the last result
---@arg a       int64  scaled by 1.5
---@arg b       int64  added
---@return int64       floor(a * 1.5) + b
local function num(i) return tonumber(ARGV[i]) end
local r = math.floor(num(1) * 1.5) + num(2)
redis.call('SET', KEYS[1], string.format('%d', r))
return r
