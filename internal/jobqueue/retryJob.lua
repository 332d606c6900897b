--- RetryJob gives up a worker's attempt at an active job and puts the job
--- back in line: at the front of the wait list (or of the paused list while
--- the queue is paused), with its lock removed and the attempt counted.
---@key active {queue}:active list of jobs being processed
---@key wait   {queue}:wait   list of ready jobs' ids, taken from the right
---@key paused {queue}:paused list of ready jobs' ids while the queue is paused
---@key meta   {queue}:meta   hash of the queue's settings (paused, opts.maxLenEvents)
---@key events {queue}:events stream of the queue's events
---@arg prefix    {queue}:     the queue's key prefix, e.g. bull:{q}:; a job's keys are built on it
---@arg jobId     string       the job's id
---@arg token     string       the worker's lock token
---@arg timestamp time.Time ms when the attempt ended
---@return none
---@error -1 MissingJob  the job does not exist
---@error -2 MissingLock the job holds no lock (it expired, or the job is not active)
---@error -6 WrongToken  another worker's token holds the job's lock
local rcall = redis.call
--- @include "includes/checkLock"
--- @include "includes/targetList"
--- @include "includes/addEvent"

local jobId = ARGV[2]
local jobKey = ARGV[1] .. jobId
local code = checkLock(jobKey, ARGV[3])
if code ~= 0 then
  return code
end
rcall('DEL', jobKey .. ':lock')
rcall('LREM', KEYS[1], -1, jobId)
local target = targetList(KEYS[4], KEYS[2], KEYS[3])
rcall('RPUSH', target, jobId)
rcall('HINCRBY', jobKey, 'attemptsMade', 1)
rcall('HSET', jobKey, 'retriedOn', ARGV[4])
addEvent(KEYS[4], KEYS[5], 'waiting', 'jobId', jobId, 'prev', 'active')
