#!lua
--- Raise fails in its included helper, in itself, or not at all: the
--- runtime's include test (include_test.go).
---@key k the key the helper sets
---@arg how string where to fail: helper, script or none
---@include lib/fail.lua

if ARGV[1] == 'script' then
  error('from the script')
end
return fail(ARGV[1])
