--- Stamp records when a job ran and counts its runs in the job's hash, as
--- text, as BullMQ keeps a job's numbers, and returns what the hash holds:
--- integer text decodes to the Go types exactly, past 2^53 too.
---@key job the job hash
---@arg at time.Time ms when it ran
---@return tuple Stamp what the hash holds
---@field at time.Time ms when it ran last
---@field runs int64 how often it ran
---@field big int64 a counter kept as text, 0 when absent
redis.call('HSET', KEYS[1], 'at', ARGV[1])
redis.call('HINCRBY', KEYS[1], 'runs', 1)
return {redis.call('HGET', KEYS[1], 'at'), redis.call('HGET', KEYS[1], 'runs'), redis.call('HGET', KEYS[1], 'big') or '0'}
