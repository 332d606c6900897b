--- Pause stops workers from taking jobs: the wait list becomes the paused
--- list, the meta hash says paused, and jobs added meanwhile go to the
--- paused list. Pausing a paused queue changes nothing but the event.
---@key wait   {queue}:wait   list of ready jobs' ids, taken from the right
---@key paused {queue}:paused list of ready jobs' ids while the queue is paused
---@key meta   {queue}:meta   hash of the queue's settings (paused, opts.maxLenEvents)
---@key events {queue}:events stream of the queue's events
---@return none
local rcall = redis.call
--- @include "includes/addEvent"

if rcall('EXISTS', KEYS[1]) == 1 then
  rcall('RENAME', KEYS[1], KEYS[2])
end
rcall('HSET', KEYS[3], 'paused', 1)
addEvent(KEYS[3], KEYS[4], 'paused')
