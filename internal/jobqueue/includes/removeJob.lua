--[[
  removeJob deletes every key of a job: its hash at prefix .. jobId, its
  lock and its logs.
]]
local function removeJob(prefix, jobId)
  local jobKey = prefix .. jobId
  rcall('DEL', jobKey, jobKey .. ':lock', jobKey .. ':logs')
end
