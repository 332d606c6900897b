--- handoff is the helper of the lock scripts that free the lock (release,
--- abandon, force_unlock): each includes this file with ---@include
--- lib/handoff.lua and keeps lock, fence, queue, waits and wake at KEYS[1]
--- to KEYS[5] and sharded at ARGV[2]. The fence TTL is a parameter: it is
--- ARGV[4] where the script has an owner and ARGV[1] in force_unlock, which
--- has none.
---@include draw.lua
---@include clock.lua
---@include waiter.lua

-- handoff gives the lock, which the caller has just deleted, to the first
-- live waiter in queue: hold count 1 under the grantLease it asked for, a
-- fencing token drawn by draw (kept for fenceTTL ms), and one message
-- "owner token" on its Client's wake channel (wake .. the owner's text
-- before its first "."), by SPUBLISH when sharded, else PUBLISH. Waiters
-- past their deadline are dropped on the way; with none live, the lock
-- stays free. So it stays too while the first live waiter polls and has
-- waited less than its starve bound (normal mode, see waiter.lua): whoever
-- asks first takes it, the releaser included.
local function handoff(fenceTTL)
  local heir = redis.call('LINDEX', KEYS[3], 0)
  if not heir then
    return
  end
  local t, now = clock()
  while heir do
    local deadline, lease, since, starve = waiter(heir)
    if deadline and deadline >= now and yields(since, starve, now) then
      return
    end
    redis.call('LPOP', KEYS[3])
    redis.call('HDEL', KEYS[4], heir)
    if deadline and deadline >= now then
      local token = draw(t, fenceTTL)
      redis.call('HSET', KEYS[1], heir, 1)
      redis.call('PEXPIRE', KEYS[1], lease)
      local channel = KEYS[5] .. string.match(heir, '^[^.]*')
      local msg = heir .. ' ' .. string.format('%.0f', token)
      if ARGV[2] == '1' then
        redis.call('SPUBLISH', channel, msg)
      else
        redis.call('PUBLISH', channel, msg)
      end
      return
    end
    heir = redis.call('LINDEX', KEYS[3], 0)
  end
end
