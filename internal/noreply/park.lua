--- Park moves a job from the wait list to the parked set, unless the
--- parent job it names is gone. A job that does not exist is left alone.
--- The reply, the wait list's new length, is one callers ignore.
---@key wait   the wait list, e.g. bull:{q}:wait
---@key parked the parked sorted set, e.g. bull:{q}:parked
---@key job    the job hash, e.g. bull:{q}:7
---@arg id string the job id
---@arg at int64  when, Unix milliseconds: the job's score in parked
---@return none the wait list's length
---@error -5 MissingParent the job's parent key no longer exists
if redis.call('EXISTS', KEYS[3]) == 0 then
  return
end
local parent = redis.call('HGET', KEYS[3], 'parentKey')
if parent and redis.call('EXISTS', parent) == 0 then
  return -5
end
redis.call('LREM', KEYS[1], 0, ARGV[1])
redis.call('ZADD', KEYS[2], ARGV[2], ARGV[1])
redis.call('HSET', KEYS[3], 'state', 'parked')
return redis.call('LLEN', KEYS[1])
