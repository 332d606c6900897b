--- AddPrioritizedJob adds a job that is ready now with a priority: lower
--- numbers are taken first, and jobs of one priority in the order added.
--- MoveToActive takes prioritized jobs before those in the wait list.
---@key meta        {queue}:meta        hash of the queue's settings (paused, opts.maxLenEvents)
---@key id          {queue}:id          counter of the queue's job ids
---@key prioritized {queue}:prioritized sorted set of prioritized jobs' ids
---@key pc          {queue}:pc          counter that orders jobs of one priority
---@key events      {queue}:events      stream of the queue's events
---@arg prefix    {queue}:     the queue's key prefix, e.g. bull:{q}:; a job's keys are built on it
---@arg jobId     string       a custom job id, or "" for the next number of the id counter
---@arg name      string       the job's name
---@arg data      string       the job's data
---@arg timestamp time.Time ms when the job is added
---@arg priority  int64 [1,2097151] 1 (first) to 2097151: priority * 2^32 + a counter below 2^32 stays below 2^53
---@return string              the job's id
---@error -5 Duplicate a job with this id already exists; nothing changed
local rcall = redis.call
--- @include "includes/storeJob"
--- @include "includes/addPrioritized"
--- @include "includes/addEvent"

local priority = tonumber(ARGV[6])
local jobId = storeJob(ARGV[1], KEYS[2], ARGV[2], ARGV[3], ARGV[4], ARGV[5], 0, priority)
if not jobId then
  return -5
end
addPrioritized(KEYS[3], KEYS[4], priority, jobId)
addEvent(KEYS[1], KEYS[5], 'waiting', 'jobId', jobId, 'priority', priority)
return jobId
