--[[
  Claims finished games to rate: those due in the pending set get a lease (their score moves
  to now + lease), so one process rates each at a time; a process that dies holding one only
  delays it until the lease runs out, then another claims it again.

  Input:
    KEYS[1] ratings:pending   a bucket's zset of finished games to rate, by when to try next (ms)

    ARGV[1] the lease, ms
    ARGV[2] how many to claim at most

  Output:
    {ids, next}  the claimed session ids (possibly none), and when the earliest game left
                 (the claimed ones too: their lease's end) is due, ms (false: none left),
                 so the rater sleeps until then
]]
local now = now_ms()
local due = redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', now, 'LIMIT', 0, tonumber(ARGV[2]))
for _, id in ipairs(due) do
  redis.call('ZADD', KEYS[1], 'XX', now + tonumber(ARGV[1]), id)
end
local first = redis.call('ZRANGE', KEYS[1], 0, 0, 'WITHSCORES')
return {due, first[2] or false}
