--- Clean deletes up to limit jobs of a finished set (completed or failed)
--- that finished before olderThan, oldest first, with every key they have.
---@key finished {queue}:<state> the finished set: state is completed or failed
---@key meta     {queue}:meta    hash of the queue's settings (paused, opts.maxLenEvents)
---@key events   {queue}:events  stream of the queue's events
---@arg prefix    {queue}:     the queue's key prefix, e.g. bull:{q}:; a job's keys are built on it
---@arg olderThan time.Time ms jobs that finished before this are deleted
---@arg limit     int64        the most jobs deleted in one call, >= 1
---@return []string            the ids of the jobs deleted, oldest first
local rcall = redis.call
--- @include "includes/removeJob"
--- @include "includes/addEvent"

local ids = rcall('ZRANGEBYSCORE', KEYS[1], '-inf', '(' .. ARGV[2], 'LIMIT', 0, ARGV[3])
for _, jobId in ipairs(ids) do
  removeJob(ARGV[1], jobId)
  rcall('ZREM', KEYS[1], jobId)
end
addEvent(KEYS[2], KEYS[3], 'cleaned', 'count', #ids)
return ids
