--[[
  targetList is the list a job that is ready goes to: paused while the
  queue's meta hash says paused, wait otherwise.
]]
local function targetList(metaKey, waitKey, pausedKey)
  if rcall('HEXISTS', metaKey, 'paused') == 1 then
    return pausedKey, true
  end
  return waitKey, false
end
