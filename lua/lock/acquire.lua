#!lua
--- Acquire is one attempt of owner to take the lock, or to raise its hold
--- count when it holds the lock already (the reentrant form, named by a
--- latch). The lock is a hash owner → hold count under a PEXPIRE lease
--- (Redisson's RLock layout); every success sets the lease from now.
---
--- Waiters queue in FIFO order (Redisson's fair lock): queue lists owners,
--- waits maps each to "deadline grantLease[ since starve]" (server ms; the lease a release
--- gives it). A first acquire takes the lock only when it is free and
--- nobody live is ahead in queue, or the live head is a polling waiter
--- that has waited less than its starve bound (sync.Mutex's normal mode;
--- a waiter further back that takes it leaves the queue); entries past
--- their deadline are then
--- dropped from the head (while the lock is held the head is left to the
--- release, which skips them too). A refused attempt with queueTTL > 0 joins the queue (or
--- renews its entry) until now + queueTTL, so a waiter that died stops
--- holding its place after queueTTL. Release hands the lock to the head of
--- queue directly; a waiter that finds itself holding the lock without a
--- hold of its own (the grant of a release, or an earlier try of this very
--- call whose reply was lost) takes that hold as it is, token from fence.
---
--- A first acquire draws a fencing token, max(last + 1, server time in µs),
--- kept in fence for fenceTTL: the clock floor keeps tokens rising when
--- fence is lost, the counter when the clock steps back.
---
--- attempt numbers owner's calls: a tomb at or above it (Abandon wrote it)
--- means this call was given up and does nothing. The reentrant form is
--- not idempotent, so it records its answer in latch for latchTTL and a
--- retry returns it; a first acquire needs no latch (see above).
---@script Acquire
---@keys LockKeys LockKeysFor prefix{name}  one lock's keys, e.g. LockKeysFor("lock:", "order:42") gives lock:{order:42}
---@key lock      {name}                             the lock hash: owner → hold count
---@key fence     {name}:fence                       fencing counter (string)
---@key queue     {name}:queue                       list of waiting owners, oldest first
---@key waits     {name}:waits                       hash owner → "deadline grantLease[ since starve]" (ms)
---@key tomb      {name}:tomb:<owner>                owner's highest abandoned attempt
---@key ...latch  {name}:latch:<owner>.<seq:int64>   one call's answer, kept for a retry (at most one key): a reentrant acquire's or a release's that leaves holds
---@arg owner       string            owner token of the caller
---@arg lease       time.Duration ms  lease to set on success, whole ms >= 1
---@arg latchTTL    time.Duration ms  lifetime of the reentrant form's latch, whole ms >= 1
---@arg fenceTTL    time.Duration ms  lifetime of fence after a first acquire, whole ms >= 1
---@arg attempt     int64             this call's number, >= 1, rising per owner
---@arg queueTTL    time.Duration ms  when refused, queue until now + queueTTL; 0: do not queue
---@arg grantLease  time.Duration ms  lease a release grants owner when it hands the lock over
---@arg starve      time.Duration ms  when queued: how long owner lets others take a free lock ahead of it (it polls); 0: never (strict FIFO)
---@return tuple AcquireResult        outcome of one attempt
---@field acquired  bool              true when owner holds the lock after the call
---@field holdCount int64             owner's hold count after the call; 0 when refused
---@field ttl       time.Duration ms  the lock's remaining lease after the call (PTTL): when acquired, owner's (<= 0: already gone); when refused, the holder's (-1: none, -2: free but others queue first)
---@field token     int64             fencing token of the hold; 0 for the reentrant form
---@field ahead     int64             when refused and queued: how many waiters are ahead of owner in queue (0: owner is next); else 0
---@include lib/draw.lua
---@include lib/clock.lua
---@include lib/latch.lua
---@include lib/waiter.lua

local owner = ARGV[1]
if KEYS[6] then
  local answer = latched()
  if answer then
    return {1, tonumber(answer), redis.call('PTTL', KEYS[1]), 0, 0}
  end
  if redis.call('HEXISTS', KEYS[1], owner) == 0 then
    return {0, 0, redis.call('PTTL', KEYS[1]), 0, 0} -- the hold is gone
  end
  local count = redis.call('HINCRBY', KEYS[1], owner, 1)
  redis.call('PEXPIRE', KEYS[1], ARGV[2])
  latch(count)
  return {1, count, redis.call('PTTL', KEYS[1]), 0, 0}
end

if tonumber(redis.call('GET', KEYS[5]) or '0') >= tonumber(ARGV[5]) then
  return {0, 0, redis.call('PTTL', KEYS[1]), 0, 0} -- abandoned
end
-- Every read that can fail (a key of the wrong type) comes before the first
-- write, so an error reply means nothing was written: PTTL accepts any
-- type, and a key of the wrong type exists, so HGET below raises.
-- ttl is the holder's lease; -2 (no key: a hash without fields does not
-- exist) when nobody holds the lock, and then owner holds nothing either.
local ttl = redis.call('PTTL', KEYS[1])
if ttl ~= -2 then
  local held = redis.call('HGET', KEYS[1], owner)
  if held then
    redis.call('PEXPIRE', KEYS[1], ARGV[2])
    return {1, tonumber(held), redis.call('PTTL', KEYS[1]), tonumber(redis.call('GET', KEYS[2]) or '0') or 0, 0}
  end
end

local t, now
if ttl == -2 then
  -- Free: taken unless a live waiter other than owner heads the queue;
  -- dead ones are dropped from the head. (While the lock is held the
  -- head is left to the release, which skips dead waiters itself.)
  -- A live head that polls and has waited less than its starve bound
  -- lets anyone take the free lock (normal mode); one that has waited
  -- longer, or is woken by messages, is served first (starvation mode).
  local head = redis.call('LINDEX', KEYS[3], 0)
  local yielding = false
  if head and head ~= owner then
    t, now = clock()
    while head and head ~= owner do
      local deadline, _, since, starve = waiter(head)
      if deadline and deadline >= now then
        yielding = yields(since, starve, now)
        break
      end
      redis.call('LPOP', KEYS[3])
      redis.call('HDEL', KEYS[4], head)
      head = redis.call('LINDEX', KEYS[3], 0)
    end
  end
  if not head or head == owner or yielding then
    if head == owner then
      redis.call('LPOP', KEYS[3])
      redis.call('HDEL', KEYS[4], owner)
    elseif head and redis.call('HDEL', KEYS[4], owner) == 1 then
      redis.call('LREM', KEYS[3], 1, owner) -- a waiter further back took it
    end
    local token = draw(t or redis.call('TIME'), ARGV[4])
    redis.call('HSET', KEYS[1], owner, 1)
    redis.call('PEXPIRE', KEYS[1], ARGV[2])
    return {1, 1, redis.call('PTTL', KEYS[1]), token, 0}
  end
end

if ARGV[6] ~= '0' then
  if not now then
    t, now = clock()
  end
  local deadline, _, since = waiter(owner)
  if deadline and deadline - now > tonumber(ARGV[6]) / 2 then
    -- A place with more than half its queueTTL left is kept as it is:
    -- polling waiters ask every millisecond, and writing the place anew
    -- each time would cost the server three writes a poll. (The queue's
    -- keys outlive every place: each write of one sets them to queueTTL.)
    return {0, 0, ttl, 0, redis.call('LPOS', KEYS[3], owner) or 0}
  end
  local entry = string.format('%d %s', now + tonumber(ARGV[6]), ARGV[7])
  if ARGV[8] ~= '0' then
    if not deadline or deadline < now then
      since = now -- a new place in the queue
    end
    entry = string.format('%s %d %s', entry, since, ARGV[8])
  end
  local ahead
  if redis.call('HSET', KEYS[4], owner, entry) == 1 then
    ahead = redis.call('RPUSH', KEYS[3], owner) - 1
  else
    ahead = redis.call('LPOS', KEYS[3], owner) or 0
  end
  redis.call('PEXPIRE', KEYS[3], ARGV[6])
  redis.call('PEXPIRE', KEYS[4], ARGV[6])
  return {0, 0, ttl, 0, ahead}
end
return {0, 0, ttl, 0, 0}
