--- Count answers how many KEYS and ARGV it got; it may get none of either
--- (with no keys, the rueidis executor sends it to the primary of its
--- SHA1's slot).
---@script Count
---@key ...keys   any keys in one slot; may be none
---@arg ...args   string   any args; may be none
---@return []int64  the number of KEYS, then of ARGV

return {#KEYS, #ARGV}
