--[[
  checkLock tells whether the worker holding token owns the job at jobKey:
  0 when it does, -1 when the job does not exist, -2 when the job holds no
  lock and -6 when another token holds it.
]]
local function checkLock(jobKey, token)
  if rcall('EXISTS', jobKey) == 0 then
    return -1
  end
  local holder = rcall('GET', jobKey .. ':lock')
  if not holder then
    return -2
  end
  if holder ~= token then
    return -6
  end
  return 0
end
