--- AddDelayedJob adds a job that becomes ready delay after timestamp: it
--- waits in the delayed set, scored by that time, until MoveToActive
--- promotes it. A job with a priority goes to the prioritized set then.
---@key meta    {queue}:meta    hash of the queue's settings (paused, opts.maxLenEvents)
---@key id      {queue}:id      counter of the queue's job ids
---@key delayed {queue}:delayed sorted set of delayed jobs' ids, scored by when they are due (Unix ms)
---@key events  {queue}:events  stream of the queue's events
---@arg prefix    {queue}:         the queue's key prefix, e.g. bull:{q}:; a job's keys are built on it
---@arg jobId     string           a custom job id, or "" for the next number of the id counter
---@arg name      string           the job's name
---@arg data      string           the job's data
---@arg timestamp time.Time ms     when the job is added
---@arg delay     time.Duration ms how long after timestamp the job becomes ready, > 0
---@arg priority  int64 [0,2097151] 0 for none, or 1 (first) to 2097151 once it is ready
---@return string                  the job's id
---@error -5 Duplicate a job with this id already exists; nothing changed
local rcall = redis.call
--- @include "includes/storeJob"
--- @include "includes/addEvent"

local timestamp = tonumber(ARGV[5])
local delay = tonumber(ARGV[6])
local jobId = storeJob(ARGV[1], KEYS[2], ARGV[2], ARGV[3], ARGV[4], timestamp, delay, ARGV[7])
if not jobId then
  return -5
end
rcall('ZADD', KEYS[3], timestamp + delay, jobId)
addEvent(KEYS[1], KEYS[4], 'delayed', 'jobId', jobId, 'delay', delay)
return jobId
