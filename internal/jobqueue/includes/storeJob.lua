--[[
  storeJob writes a new job's hash at prefix .. jobId. An empty customId
  takes the next number of the queue's id counter; a customId already in
  use returns nil, and nothing is written.
]]
local function storeJob(prefix, idKey, customId, name, data, timestamp, delay, priority)
  local jobId = customId
  if jobId == '' then
    jobId = tostring(rcall('INCR', idKey))
  end
  local jobKey = prefix .. jobId
  if rcall('EXISTS', jobKey) == 1 then
    return nil
  end
  rcall('HSET', jobKey, 'name', name, 'data', data, 'timestamp', timestamp,
        'delay', delay, 'priority', priority, 'attemptsMade', 0)
  return jobId
end
