#!lua flags=no-writes
--- Audit reads one SKU's stock counter, order records and buyer counters
--- in one atomic step and sums them up, for Reconcile. It reads every
--- record, so it takes time in proportion to the orders (it blocks the
--- shard meanwhile): run it after a sale, not in its hot path.
---@script Audit
---@key stock   {sku}:stock    string counter holding the units left
---@key orders  {sku}:orders   hash of order id → record
---@key buyers  {sku}:buyers   hash of buyer → units held
---@arg max     int64   most buyer mismatches and malformed records to list
---@return tuple AuditReply the sums over every record
---@field left            int64     units left in the stock counter
---@field soldOrders      int64     orders in state sold
---@field soldUnits       int64     units of the sold orders
---@field refusedOrders   int64     orders refused (out of stock or over the limit)
---@field cancelledOrders int64     orders sold and then cancelled
---@field cancelledUnits  int64     units the cancelled orders returned
---@field voidOrders      int64     orders cancelled before any sale
---@field buyerUnits      int64     the buyer counters' sum
---@field malformed       int64     records that do not parse
---@field malformedIDs    []string  their order ids, at most max
---@field buyerDiffs      int64     buyers whose counter differs from their sold units
---@field buyerDiffList   []string  "counted held buyer" for at most max of them
---@error -2 NoSuchSKU         the stock key does not exist; nothing changed
---@error BAD_ARG BadArgument  an argument is empty or not a decimal integer in range

local RECORD = '^(%a+) (%d+) (%d+) (%-?%d+) (.*)$'

if not string.match(ARGV[1], '^[0-9]+$') or #ARGV[1] > 9 then
  return redis.error_reply('BAD_ARG max must be an integer >= 0, got "' .. ARGV[1] .. '"')
end
local max = tonumber(ARGV[1])
local left = redis.call('GET', KEYS[1])
if not left then
  return -2
end

local sold, soldUnits, refused, cancelled, cancelledUnits, void = 0, 0, 0, 0, 0, 0
local malformed, malformedIDs = 0, {}
local counted = {} -- buyer → units of their sold orders
local records = redis.call('HGETALL', KEYS[2])
for i = 1, #records, 2 do
  local state, qty, _, _, buyer = string.match(records[i + 1], RECORD)
  if state == 'sold' then
    sold, soldUnits = sold + 1, soldUnits + qty
    counted[buyer] = (counted[buyer] or 0) + qty
  elseif state == 'refused' then
    refused = refused + 1
  elseif state == 'cancelled' then
    cancelled, cancelledUnits = cancelled + 1, cancelledUnits + qty
  elseif state == 'void' then
    void = void + 1
  else
    malformed = malformed + 1
    if #malformedIDs < max then
      malformedIDs[#malformedIDs + 1] = records[i]
    end
  end
end

local buyerUnits, buyerDiffs, buyerDiffList = 0, 0, {}
local function differ(buyer, want, got)
  buyerDiffs = buyerDiffs + 1
  if #buyerDiffList < max then
    buyerDiffList[#buyerDiffList + 1] = want .. ' ' .. got .. ' ' .. buyer
  end
end
local held = redis.call('HGETALL', KEYS[3])
for i = 1, #held, 2 do
  local buyer, n = held[i], tonumber(held[i + 1]) or 0
  buyerUnits = buyerUnits + n
  if n ~= (counted[buyer] or 0) then
    differ(buyer, counted[buyer] or 0, n)
  end
  counted[buyer] = nil
end
for buyer, want in pairs(counted) do
  differ(buyer, want, 0) -- sold orders, but no counter at all
end

return {tonumber(left), sold, soldUnits, refused, cancelled, cancelledUnits, void,
  buyerUnits, malformed, malformedIDs, buyerDiffs, buyerDiffList}
