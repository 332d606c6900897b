--[[
  addPrioritized adds a job to the prioritized set. Its score orders jobs
  by priority (lower first) and, within one priority, by the order they
  arrived in: the priority counter, kept below 2^32, is the low part.
]]
local function addPrioritized(prioritizedKey, pcKey, priority, jobId)
  local n = rcall('INCR', pcKey)
  rcall('ZADD', prioritizedKey, priority * 0x100000000 + n % 0x100000000, jobId)
end
