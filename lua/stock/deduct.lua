#!lua
--- Deduct takes qty units of a SKU for one order, at most once per order id.
--- The check, the decrement and the order record run as one script, so
--- concurrent buyers never oversell and every unit sold has a record.
---
--- The order id makes it idempotent: the first call records its outcome
--- (sold, or refused for stock or for the buyer's limit) in the orders hash,
--- and every later call with that id returns the same outcome without
--- touching stock. A retry after a lost reply never deducts twice, and an
--- order once refused is never sold later, even when units come back.
--- Reusing an order id for another buyer or quantity is an error.
---@script Deduct
---@keys SKUKeys KeysFor prefix{sku}  one SKU's keys, e.g. KeysFor("seckill:", "42") gives seckill:{42}:stock
---@key stock   {sku}:stock    string counter holding the units left
---@key orders  {sku}:orders   hash of order id → record
---@key buyers  {sku}:buyers   hash of buyer → units held
---@arg order   string         order id, unique per purchase: the idempotency key
---@arg buyer   string         buyer id, recorded and counted against limit
---@arg qty     int64          units to take; an integer >= 1
---@arg limit   int64          most units one buyer may hold; 0 for no limit
---@arg at      time.Time ms   purchase time, recorded
---@idempotent an order id's first outcome is recorded with the decrement and answered again
---@coalesce 64
---@return int64               units left right after this order's deduction
---@error -1 OutOfStock        stock was lower than qty; recorded as refused, nothing deducted
---@error -2 NoSuchSKU         the stock key does not exist; nothing changed
---@error -3 LimitExceeded     the buyer would hold more than limit units; recorded as refused
---@error -4 Cancelled         the order id was cancelled (before or after a sale); nothing changed
---@error BAD_ARG BadArgument  an argument is empty or not a decimal integer in range
---@error ORDER_CONFLICT OrderConflict  the order id is recorded for another buyer or quantity
---@error BAD_RECORD CorruptRecord      the order's record, the stock or the buyer's count is malformed; nothing changed

-- A record is "state qty at reply buyer": state sold, refused, cancelled or
-- void (cancelled before any sale); reply is what the first call returned.
-- The buyer comes last so it may contain spaces.
local RECORD = '^(%a+) (%d+) (%d+) (%-?%d+) (.*)$'

local order, buyer, qty, limit, at = ARGV[1], ARGV[2], ARGV[3], ARGV[4], ARGV[5]
-- Validate before touching anything: tonumber would accept "1.5", "0x10"
-- and " 1"; more than 15 digits would lose precision in a Lua double.
if order == '' or buyer == '' then
  return redis.error_reply('BAD_ARG order and buyer must not be empty')
end
if not string.match(qty, '^[1-9][0-9]*$') or #qty > 15 then
  return redis.error_reply('BAD_ARG qty must be an integer >= 1, got "' .. qty .. '"')
end
if not string.match(at, '^[1-9][0-9]*$') or #at > 15 then
  return redis.error_reply('BAD_ARG at must be an integer >= 1, got "' .. at .. '"')
end
if not string.match(limit, '^[0-9]+$') or #limit > 15 then
  return redis.error_reply('BAD_ARG limit must be an integer >= 0, got "' .. limit .. '"')
end

local rec = redis.call('HGET', KEYS[2], order)
if rec then
  local state, rqty, _, reply, rbuyer = string.match(rec, RECORD)
  if not state then
    return redis.error_reply('BAD_RECORD order ' .. order .. ': "' .. rec .. '"')
  end
  if state == 'void' then
    return -4
  end
  if rbuyer ~= buyer or rqty ~= qty then
    return redis.error_reply('ORDER_CONFLICT order ' .. order .. ' is ' .. rqty .. ' units for buyer ' .. rbuyer)
  end
  if state == 'cancelled' then
    return -4
  end
  return tonumber(reply)
end

local stock = redis.call('GET', KEYS[1])
if not stock then
  return -2
end
-- Check every value a write below depends on before the first write: a
-- script is not a transaction, and an error after DECRBY would leave units
-- gone without a record. (OOM is checked only before a script's first
-- write, so nothing else can stop it halfway.)
local held = redis.call('HGET', KEYS[3], buyer) or '0'
if not string.match(stock, '^%-?[0-9]+$') or not string.match(held, '^%-?[0-9]+$') then
  return redis.error_reply('BAD_RECORD stock "' .. stock .. '" or buyer ' .. buyer .. ' holding "' .. held .. '" is not an integer')
end
local reply
if tonumber(stock) < tonumber(qty) then
  reply = -1
elseif limit ~= '0' and tonumber(held) + qty > tonumber(limit) then
  reply = -3
end
if reply then
  redis.call('HSET', KEYS[2], order, 'refused ' .. qty .. ' ' .. at .. ' ' .. reply .. ' ' .. buyer)
  return reply
end
local left = redis.call('DECRBY', KEYS[1], qty)
redis.call('HINCRBY', KEYS[3], buyer, qty)
redis.call('HSET', KEYS[2], order, 'sold ' .. qty .. ' ' .. at .. ' ' .. left .. ' ' .. buyer)
return left
