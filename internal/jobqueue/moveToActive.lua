--- MoveToActive hands the next job to a worker: it first promotes the
--- delayed jobs due at timestamp, then takes the prioritized job with the
--- lowest score, or else the oldest job of the wait list, moves it to the
--- active list and locks it for the worker's token for lockDuration.
---@key wait        {queue}:wait        list of ready jobs' ids, taken from the right
---@key active      {queue}:active      list of jobs being processed
---@key prioritized {queue}:prioritized sorted set of prioritized jobs' ids
---@key pc          {queue}:pc          counter that orders jobs of one priority
---@key delayed     {queue}:delayed     sorted set of delayed jobs' ids, scored by when they are due (Unix ms)
---@key meta        {queue}:meta        hash of the queue's settings (paused, opts.maxLenEvents)
---@key events      {queue}:events      stream of the queue's events
---@key paused      {queue}:paused      list of ready jobs' ids while the queue is paused
---@arg prefix       {queue}:          the queue's key prefix, e.g. bull:{q}:; a job's keys are built on it
---@arg token        string            the worker's lock token
---@arg lockDuration time.Duration ms  how long the lock lasts unless extended
---@arg timestamp    time.Time ms      now, as the worker's clock says: delayed jobs due by then are promoted
---@return tuple Job                   the job now active
---@field id           string the job's id
---@field name         string the job's name
---@field data         string the job's data
---@field attemptsMade int64  how many times the job has been processed before
---@error nil NoJob no job is ready, or the queue is paused
local rcall = redis.call
--- @include "includes/targetList"
--- @include "includes/promoteDelayed"

local prefix, timestamp = ARGV[1], ARGV[4]
local target, paused = targetList(KEYS[6], KEYS[1], KEYS[8])
promoteDelayed(KEYS[5], target, KEYS[3], KEYS[4], KEYS[6], KEYS[7], prefix, timestamp)
if paused then
  return nil
end

local jobId
local next = rcall('ZPOPMIN', KEYS[3])
if #next > 0 then
  jobId = next[1]
  rcall('LPUSH', KEYS[2], jobId)
else
  jobId = rcall('LMOVE', KEYS[1], KEYS[2], 'RIGHT', 'LEFT')
  if not jobId then
    return nil
  end
end

local jobKey = prefix .. jobId
rcall('SET', jobKey .. ':lock', ARGV[2], 'PX', ARGV[3])
rcall('HSET', jobKey, 'processedOn', timestamp)
addEvent(KEYS[6], KEYS[7], 'active', 'jobId', jobId, 'prev', 'waiting')
local job = rcall('HMGET', jobKey, 'name', 'data', 'attemptsMade')
return {jobId, job[1], job[2], tonumber(job[3])}
