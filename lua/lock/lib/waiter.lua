--- waiter is the helper of the lock scripts that read a waiter's entry in
--- waits (KEYS[4]): "deadline grantLease" (server ms; a waiter woken by
--- wake messages, served strictly in order) or "deadline grantLease since
--- starve" (a polling waiter: queued at since, and content to let others
--- take a free lock ahead of it until it has waited starve ms, as Go's
--- sync.Mutex lets a newcomer pass its waiters until one has waited 1 ms).

-- waiter returns owner's deadline and grant lease, and since and starve
-- (0 and 0 for a strict waiter); nil when owner has no entry.
local function waiter(owner)
  local entry = redis.call('HGET', KEYS[4], owner)
  if not entry then
    return nil
  end
  local deadline, lease, since, starve = string.match(entry, '^(%d+) (%d+) ?(%d*) ?(%d*)$')
  return tonumber(deadline), lease, tonumber(since) or 0, tonumber(starve) or 0
end

-- yields reports whether a live waiter with since and starve lets another
-- owner take the free lock at now (normal mode): it polls, and has waited
-- less than starve.
local function yields(since, starve, now)
  return starve > 0 and now - since < starve
end
