--- Record counts its runs in runs and answers with what it was sent, or,
--- when fail is not empty, with fail as its error reply: any text the
--- caller chooses, NOSCRIPT included.
---@script Record
---@unsafe-keys the tests give runs and the others one hash tag themselves
---@key runs       string counter of this script's runs
---@key ...others  more keys in runs' slot; only their number is used
---@arg fail       string          error reply to answer when not empty
---@arg text       string          any bytes, echoed
---@arg blob       []byte          any bytes, echoed
---@arg n          int64           echoed
---@arg f          float64         echoed as sent
---@arg on         bool            echoed
---@arg wait       time.Duration ms  echoed in milliseconds
---@arg at         time.Time s     echoed in Unix seconds
---@arg ...rest    string          more args; only their number is used
---@return tuple Echo  the run count and the arguments as received
---@field runs     int64   runs after this run
---@field keys     int64   number of KEYS
---@field args     int64   number of ARGV
---@field text     string  text
---@field blob     []byte  blob
---@field n        string  n as received
---@field f        string  f as received
---@field on       string  on as received
---@field wait     string  wait as received
---@field at       string  at as received

local runs = redis.call('INCR', KEYS[1])
if ARGV[1] ~= '' then
  return redis.error_reply(ARGV[1])
end
return {runs, #KEYS, #ARGV, ARGV[2], ARGV[3], ARGV[4], ARGV[5], ARGV[6], ARGV[7], ARGV[8]}
