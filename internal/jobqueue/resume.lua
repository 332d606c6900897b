--- Resume lets workers take jobs again: the paused list becomes the wait
--- list and the meta hash no longer says paused.
---@key wait   {queue}:wait   list of ready jobs' ids, taken from the right
---@key paused {queue}:paused list of ready jobs' ids while the queue is paused
---@key meta   {queue}:meta   hash of the queue's settings (paused, opts.maxLenEvents)
---@key events {queue}:events stream of the queue's events
---@return none
local rcall = redis.call
--- @include "includes/addEvent"

if rcall('EXISTS', KEYS[2]) == 1 then
  rcall('RENAME', KEYS[2], KEYS[1])
end
rcall('HDEL', KEYS[3], 'paused')
addEvent(KEYS[3], KEYS[4], 'resumed')
