--[[
  promoteDelayed moves the delayed jobs due at timestamp (a score at most
  timestamp) to the prioritized set when they have a priority and to the
  target list otherwise, oldest first, and reports each with an event.
  It reads each job's priority from its hash at prefix .. jobId.
]]
--- @include "addPrioritized"
--- @include "addEvent"
local function promoteDelayed(delayedKey, targetKey, prioritizedKey, pcKey, metaKey, eventsKey, prefix, timestamp)
  local due = rcall('ZRANGEBYSCORE', delayedKey, '-inf', timestamp)
  for _, jobId in ipairs(due) do
    rcall('ZREM', delayedKey, jobId)
    local priority = tonumber(rcall('HGET', prefix .. jobId, 'priority')) or 0
    if priority > 0 then
      addPrioritized(prioritizedKey, pcKey, priority, jobId)
    else
      rcall('LPUSH', targetKey, jobId)
    end
    addEvent(metaKey, eventsKey, 'waiting', 'jobId', jobId, 'prev', 'delayed')
  end
end
