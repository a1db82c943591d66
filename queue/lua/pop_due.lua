-- POP-DUE: take the delayed entries whose time has come, atomically, so each fires once
-- even with many processes polling. ARGV: 3 limit. Returns {member, due_ms, ...}.
local now = now_ms()
local k = P .. 'delayed'
local due = redis.call('ZRANGEBYSCORE', k, '-inf', now, 'WITHSCORES', 'LIMIT', 0, tonumber(ARGV[3]))
for i = 1, #due, 2 do redis.call('ZREM', k, due[i]) end
return due
