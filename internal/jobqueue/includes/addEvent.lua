--[[
  addEvent appends an event to the queue's events stream, trimmed to about
  the most the queue's meta hash allows (opts.maxLenEvents, 10000 when
  unset, which it then records). A stream with fewer entries than that is
  never trimmed, so what it holds does not depend on how the server packs
  its nodes. fields are the event's field, value pairs after event.
]]
local function addEvent(metaKey, eventsKey, event, ...)
  local maxEvents = rcall('HGET', metaKey, 'opts.maxLenEvents')
  if not maxEvents then
    maxEvents = 10000
    rcall('HSET', metaKey, 'opts.maxLenEvents', maxEvents)
  end
  rcall('XADD', eventsKey, 'MAXLEN', '~', maxEvents, '*', 'event', event, ...)
end
