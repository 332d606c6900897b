#!lua
--- Cancel returns an order's units to stock exactly once: the compensation
--- for an order that failed after its deduction (payment declined, checkout
--- timed out). A sold order becomes cancelled, its units go back to stock
--- and off the buyer's count, and the call returns how many; calling it
--- again returns the same number and moves nothing. An order that took no
--- units (refused) returns 0. An order id never seen is recorded as void, so
--- a Deduct for it that arrives late (a retry that overtook nothing) is
--- refused with ErrCancelled instead of selling units nobody will pay for.
---@script Cancel
---@key stock   {sku}:stock    string counter holding the units left
---@key orders  {sku}:orders   hash of order id → record
---@key buyers  {sku}:buyers   hash of buyer → units held
---@arg order   string         order id to cancel
---@arg at      time.Time ms   cancellation time, recorded for an order never seen
---@idempotent an order changes state once; a repeat answers the same units and moves none
---@return int64               units this order returned to stock; 0 when it took none
---@error -2 NoSuchSKU         the stock key does not exist; nothing changed
---@error BAD_ARG BadArgument  an argument is empty or not a decimal integer in range
---@error BAD_RECORD CorruptRecord      the order's record, the stock or the buyer's count is malformed; nothing changed

local RECORD = '^(%a+) (%d+) (%d+) (%-?%d+) (.*)$'

local order, at = ARGV[1], ARGV[2]
if order == '' then
  return redis.error_reply('BAD_ARG order must not be empty')
end
if not string.match(at, '^[1-9][0-9]*$') or #at > 15 then
  return redis.error_reply('BAD_ARG at must be an integer >= 1, got "' .. at .. '"')
end
local stock = redis.call('GET', KEYS[1])
if not stock then
  return -2
end

local rec = redis.call('HGET', KEYS[2], order)
if not rec then
  redis.call('HSET', KEYS[2], order, 'void 0 ' .. at .. ' 0 ')
  return 0
end
local state, qty, rat, reply, buyer = string.match(rec, RECORD)
if not state then
  return redis.error_reply('BAD_RECORD order ' .. order .. ': "' .. rec .. '"')
end
if state == 'cancelled' then
  return tonumber(qty)
end
if state ~= 'sold' then
  return 0
end
-- As in deduct.lua: check what the writes depend on before the first one.
local held = redis.call('HGET', KEYS[3], buyer) or '0'
if not string.match(stock, '^%-?[0-9]+$') or not string.match(held, '^%-?[0-9]+$') then
  return redis.error_reply('BAD_RECORD stock "' .. stock .. '" or buyer ' .. buyer .. ' holding "' .. held .. '" is not an integer')
end
redis.call('INCRBY', KEYS[1], qty)
if redis.call('HINCRBY', KEYS[3], buyer, -qty) <= 0 then
  redis.call('HDEL', KEYS[3], buyer)
end
redis.call('HSET', KEYS[2], order, 'cancelled ' .. qty .. ' ' .. rat .. ' ' .. reply .. ' ' .. buyer)
return tonumber(qty)
