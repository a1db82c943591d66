--[[
  POP-DUE: take the delayed entries whose time has come (on the server clock), atomically,
  so each fires once even with many processes polling; and say when the next one is due, so
  the poller sleeps until then without another round trip.

  Input:
    KEYS[1] delayed   zset of entries by due time, ms since the Unix epoch

    ARGV[1] most entries to take

  Output:
    {{member, due_ms, member, due_ms, ...}, next_due_ms or nil}: the taken entries earliest
    first, and the due time of the earliest entry left
]]
local due = redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', now_ms(), 'WITHSCORES', 'LIMIT', 0, tonumber(ARGV[1]))
for i = 1, #due, 2 do redis.call('ZREM', KEYS[1], due[i]) end
local first = redis.call('ZRANGE', KEYS[1], 0, 0, 'WITHSCORES')
return {due, first[2] or false}
