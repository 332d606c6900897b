#!lua flags=no-writes
--- GetCounts counts the queue's jobs in each state.
---@key wait        {queue}:wait        list of ready jobs' ids, taken from the right
---@key paused      {queue}:paused      list of ready jobs' ids while the queue is paused
---@key active      {queue}:active      list of jobs being processed
---@key delayed     {queue}:delayed     sorted set of delayed jobs' ids, scored by when they are due (Unix ms)
---@key prioritized {queue}:prioritized sorted set of prioritized jobs' ids
---@key completed   {queue}:completed   sorted set of completed jobs' ids, scored by when they finished
---@key failed      {queue}:failed      sorted set of failed jobs' ids, scored by when they failed
---@return tuple Counts the number of jobs in each state
---@field wait        int64 jobs in the wait list
---@field paused      int64 jobs in the paused list
---@field active      int64 jobs being processed
---@field delayed     int64 delayed jobs
---@field prioritized int64 prioritized jobs
---@field completed   int64 completed jobs
---@field failed      int64 failed jobs
local rcall = redis.call
return {
  rcall('LLEN', KEYS[1]),
  rcall('LLEN', KEYS[2]),
  rcall('LLEN', KEYS[3]),
  rcall('ZCARD', KEYS[4]),
  rcall('ZCARD', KEYS[5]),
  rcall('ZCARD', KEYS[6]),
  rcall('ZCARD', KEYS[7]),
}
