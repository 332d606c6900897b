--[[
  getJobIdFromKey and getJobKeyPrefix split a job's key (bull:{q}:7, as a
  job's hash records its parent's) into its id (7) and its queue's prefix
  (bull:{q}:), as BullMQ's helpers of the same names do.
]]
local getJobIdFromKey = function(jobKey)
  return string.match(jobKey, '.*:(.*)')
end

local getJobKeyPrefix = function(jobKey, jobId)
  return string.sub(jobKey, 0, #jobKey - #jobId)
end
