--- AddChildJob adds a ready job whose parent is another job of the same
--- queue, as BullMQ's flows keep them: the child's hash records the
--- parent's key (parentKey), and the parent's set of pending children
--- (its key followed by :dependencies) holds the child's key.
---@keys QueueKeys KeysFor <prefix>:{queue} one queue's keys, laid out as BullMQ's (bull:{q}:wait)
---@key wait   {queue}:wait   list of ready jobs' ids, taken from the right
---@key paused {queue}:paused list of ready jobs' ids while the queue is paused
---@key meta   {queue}:meta   hash of the queue's settings (paused, opts.maxLenEvents)
---@key id     {queue}:id     counter of the queue's job ids
---@key events {queue}:events stream of the queue's events
---@arg prefix    {queue}:    the queue's key prefix, e.g. bull:{q}:; a job's keys are built on it
---@arg jobId     string      a custom job id, or "" for the next number of the id counter
---@arg name      string      the job's name
---@arg data      string      the job's data (JSON, as callers encode it)
---@arg timestamp time.Time ms when the job is added
---@arg parentId  string      the id of the parent job, in this queue
---@return string             the job's id (MissingJob when the parent job does not exist)
---@error -1 MissingJob  the job does not exist
---@error -5 Duplicate a job with this id already exists; nothing changed
local rcall = redis.call
--- @include "includes/storeJob"
--- @include "includes/targetList"
--- @include "includes/addEvent"

local parentKey = ARGV[1] .. ARGV[6]
if rcall('EXISTS', parentKey) == 0 then
  return -1
end
local jobId = storeJob(ARGV[1], KEYS[4], ARGV[2], ARGV[3], ARGV[4], ARGV[5], 0, 0)
if not jobId then
  return -5
end
local jobKey = ARGV[1] .. jobId
rcall('HSET', jobKey, 'parentKey', parentKey)
rcall('SADD', parentKey .. ':dependencies', jobKey)
local target = targetList(KEYS[3], KEYS[1], KEYS[2])
rcall('LPUSH', target, jobId)
addEvent(KEYS[3], KEYS[5], 'waiting', 'jobId', jobId, 'name', ARGV[3], 'parent', ARGV[6])
return jobId
