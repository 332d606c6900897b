--- ExtendLock keeps a worker's lock on an active job for duration more,
--- counted from now, if the worker's token still holds it.
---@key job {queue}:<id> the job's hash; its lock is the key next to it, :lock appended
---@arg token    string            the worker's lock token
---@arg duration time.Duration ms  the lock's new time to live
---@return none
---@error -1 MissingJob  the job does not exist
---@error -2 MissingLock the job holds no lock (it expired, or the job is not active)
---@error -6 WrongToken  another worker's token holds the job's lock
local rcall = redis.call
--- @include "includes/checkLock"

local code = checkLock(KEYS[1], ARGV[1])
if code ~= 0 then
  return code
end
rcall('SET', KEYS[1] .. ':lock', ARGV[1], 'PX', ARGV[2])
