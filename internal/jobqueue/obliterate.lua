--- Obliterate deletes a paused queue: every job with all its keys, and
--- every key of the queue, its events and settings included. A queue with
--- active jobs is left alone unless force says otherwise.
---@key meta        {queue}:meta        hash of the queue's settings (paused, opts.maxLenEvents)
---@key wait        {queue}:wait        list of ready jobs' ids, taken from the right
---@key paused      {queue}:paused      list of ready jobs' ids while the queue is paused
---@key active      {queue}:active      list of jobs being processed
---@key delayed     {queue}:delayed     sorted set of delayed jobs' ids, scored by when they are due (Unix ms)
---@key prioritized {queue}:prioritized sorted set of prioritized jobs' ids
---@key pc          {queue}:pc          counter that orders jobs of one priority
---@key completed   {queue}:completed   sorted set of completed jobs' ids, scored by when they finished
---@key failed      {queue}:failed      sorted set of failed jobs' ids, scored by when they failed
---@key id          {queue}:id          counter of the queue's job ids
---@key events      {queue}:events      stream of the queue's events
---@arg prefix {queue}: the queue's key prefix, e.g. bull:{q}:; a job's keys are built on it
---@arg force  bool     true deletes the queue even while jobs are active
---@return int64        the number of jobs deleted
---@error -3 NotPaused  the queue is not paused; nothing changed
---@error -4 ActiveJobs jobs are active and force is false; nothing changed
local rcall = redis.call
--- @include "includes/removeJob"

if rcall('HEXISTS', KEYS[1], 'paused') == 0 then
  return -3
end
if ARGV[2] ~= '1' and rcall('LLEN', KEYS[4]) > 0 then
  return -4
end

local n = 0
local function removeJobs(prefix, ids)
  for _, jobId in ipairs(ids) do
    removeJob(prefix, jobId)
    n = n + 1
  end
end
for i = 2, 4 do
  removeJobs(ARGV[1], rcall('LRANGE', KEYS[i], 0, -1))
end
for _, i in ipairs({5, 6, 8, 9}) do
  removeJobs(ARGV[1], rcall('ZRANGE', KEYS[i], 0, -1))
end
rcall('DEL', unpack(KEYS))
return n
