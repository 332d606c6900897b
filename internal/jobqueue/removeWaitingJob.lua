--- RemoveWaitingJob removes a job that is ready (in the wait or the paused
--- list): its id from the list and its keys. A job's parent is read from
--- its hash, as BullMQ reads it: when the parent is in this queue (its
--- key's prefix is the queue's), the job leaves the parent's pending
--- children; a parent in another queue is left alone, since its keys are
--- on another slot of a cluster.
---@keys QueueKeys KeysFor <prefix>:{queue} one queue's keys, laid out as BullMQ's (bull:{q}:wait)
---@key wait   {queue}:wait   list of ready jobs' ids
---@key paused {queue}:paused list of ready jobs' ids while the queue is paused
---@key meta   {queue}:meta   hash of the queue's settings (opts.maxLenEvents)
---@key events {queue}:events stream of the queue's events
---@arg prefix {queue}: the queue's key prefix, e.g. bull:{q}:
---@arg jobId  string   the job's id
---@return int64? how many children the parent still waits for, or nil when the job has no parent in this queue
---@error -1 MissingJob  the job does not exist
local rcall = redis.call
--- @include "includes/destructureJobKey"
--- @include "includes/removeJob"
--- @include "includes/addEvent"

local prefix = ARGV[1]
local jobKey = prefix .. ARGV[2]
if rcall('LREM', KEYS[1], 0, ARGV[2]) + rcall('LREM', KEYS[2], 0, ARGV[2]) == 0 then
  return -1
end
local parentKey = rcall('HGET', jobKey, 'parentKey')
removeJob(prefix, ARGV[2])
addEvent(KEYS[3], KEYS[4], 'removed', 'jobId', ARGV[2])
if not parentKey then
  return nil
end
local parentId = getJobIdFromKey(parentKey)
local parentPrefix = getJobKeyPrefix(parentKey, parentId)
if parentPrefix == prefix then
  rcall('SREM', parentKey .. ':dependencies', jobKey)
  return rcall('SCARD', parentKey .. ':dependencies')
end
return nil
