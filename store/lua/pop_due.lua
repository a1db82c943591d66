--[[
  POP-DUE: take the delayed entries whose time has come (on the server clock), atomically,
  so each fires once even with many processes polling.

  Input:
    KEYS[1] delayed   zset of entries by due time, ms since the Unix epoch

    ARGV[1] most entries to take

  Output:
    {member, due_ms, member, due_ms, ...}, earliest first
]]
local due = redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', now_ms(), 'WITHSCORES', 'LIMIT', 0, tonumber(ARGV[1]))
for i = 1, #due, 2 do redis.call('ZREM', KEYS[1], due[i]) end
return due
