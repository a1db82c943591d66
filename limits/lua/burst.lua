--[[
  BURST: one request against a sliding-window burst limit ("at most MAX in any WINDOW").

  The window is the log of accepted requests' times (a sorted set: score = milliseconds,
  member = a caller-chosen unique id), so the limit is exact across every API process on
  this Redis: never more than MAX accepted requests in any WINDOW milliseconds. A refused
  request is not logged, so a client that keeps knocking does not extend its own wait.
  The server's clock (the prelude's now_ms) is the one clock.

  Input:
    KEYS[1] burst:<limit>:<hash of subject>   the subject's window

    ARGV[1] MAX, the number of requests allowed in a window (>= 1)
    ARGV[2] WINDOW, in milliseconds (>= 1)
    ARGV[3] a unique member for this request (random, from the caller)

  Output:
    {1, 0}               accepted
    {0, retry_after_ms}  refused; retry_after_ms is when the oldest logged request leaves
                         the window, the earliest moment a retry can be accepted
]]
local key = KEYS[1]
local max = tonumber(ARGV[1])
local window = tonumber(ARGV[2])
local now = now_ms()

-- Counted by reading (entries older than the window are ignored, and trimmed after the
-- first write): Redis at maxmemory refuses a script only at its first write that may grow
-- memory, so that write must be the ZADD, not the trim, or a full Redis would take the entry
-- (and the caller counts in its process meanwhile, as when Redis cannot be reached).
local since = '(' .. (now - window)
if redis.call('ZCOUNT', key, since, '+inf') >= max then
  local oldest = redis.call('ZRANGEBYSCORE', key, since, '+inf', 'WITHSCORES', 'LIMIT', 0, 1)
  local retry = tonumber(oldest[2]) + window - now
  if retry < 1 then retry = 1 end
  return { 0, retry }
end
redis.call('ZADD', key, now, ARGV[3])
redis.call('ZREMRANGEBYSCORE', key, '-inf', now - window)
redis.call('PEXPIRE', key, window)
return { 1, 0 }
