--- MoveToFinished ends a worker's attempt at an active job: the job goes
--- to the completed set with its return value, or to the failed set with
--- the reason (also appended to its logs), scored by finishedOn. Its lock
--- is removed and its attemptsMade counted. Only the last keepLast jobs of
--- the set are kept; older ones are deleted with every key they have.
---@key active    {queue}:active    list of jobs being processed
---@key completed {queue}:completed sorted set of completed jobs' ids, scored by when they finished
---@key failed    {queue}:failed    sorted set of failed jobs' ids, scored by when they failed
---@key meta      {queue}:meta      hash of the queue's settings (paused, opts.maxLenEvents)
---@key events    {queue}:events    stream of the queue's events
---@arg prefix     {queue}:     the queue's key prefix, e.g. bull:{q}:; a job's keys are built on it
---@arg jobId      string       the job's id
---@arg token      string       the worker's lock token
---@arg failed     bool         true moves the job to failed, false to completed
---@arg result     string       the return value (completed) or the reason it failed
---@arg finishedOn time.Time ms when the attempt ended
---@arg keepLast   int64        how many jobs the set keeps, the newest; -1 keeps all
---@return int64                the job's attemptsMade, this attempt included
---@error -1 MissingJob  the job does not exist
---@error -2 MissingLock the job holds no lock (it expired, or the job is not active)
---@error -6 WrongToken  another worker's token holds the job's lock
local rcall = redis.call
--- @include "includes/checkLock"
--- @include "includes/removeJob"
--- @include "includes/addEvent"

local prefix, jobId = ARGV[1], ARGV[2]
local jobKey = prefix .. jobId
local code = checkLock(jobKey, ARGV[3])
if code ~= 0 then
  return code
end
rcall('DEL', jobKey .. ':lock')
rcall('LREM', KEYS[1], -1, jobId)

local target, field, event = KEYS[2], 'returnvalue', 'completed'
if ARGV[4] == '1' then
  target, field, event = KEYS[3], 'failedReason', 'failed'
  rcall('RPUSH', jobKey .. ':logs', ARGV[5])
end
local attempts = rcall('HINCRBY', jobKey, 'attemptsMade', 1)
rcall('HSET', jobKey, field, ARGV[5], 'finishedOn', ARGV[6])
rcall('ZADD', target, ARGV[6], jobId)
addEvent(KEYS[4], KEYS[5], event, 'jobId', jobId, field, ARGV[5])

local keepLast = tonumber(ARGV[7])
if keepLast >= 0 then
  local old = rcall('ZRANGE', target, 0, -keepLast - 1)
  for _, id in ipairs(old) do
    removeJob(prefix, id)
  end
  if #old > 0 then
    rcall('ZREMRANGEBYRANK', target, 0, -keepLast - 1)
  end
end
return attempts
