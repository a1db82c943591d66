--[[
  POP-DUE: take the delayed entries whose time has come (on the server clock), atomically,
  so each is handed to one process at a time even with many processes polling; and say when
  the next one is due, so the poller sleeps until then without another round trip.

  With a lease the taken entries are not removed: they are moved to now + lease, and the
  taker removes each once it has acted on it (ack_due.lua). A taker that dies, or cannot act
  (Redis away for the write the entry stands for), leaves them to come due again a lease
  later, for whoever polls then: a deadline is never lost between its pop and its effect.
  Acting twice must therefore be harmless (the session machine ignores a stale firing).

  Input:
    KEYS[1] delayed   zset of entries by due time, ms since the Unix epoch

    ARGV[1] most entries to take
    ARGV[2] lease, ms ('0': remove the taken entries at once)

  Output:
    {{member, due_ms, member, due_ms, ...}, next_due_ms or nil, lease_score}: the taken
    entries earliest first (with their own due times), the due time of the earliest entry
    left (a leased one included), and the score the taken entries now have (ack_due.lua
    removes an entry only while it still has that score; '0' without a lease)
]]
local now = now_ms()
local due = redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', now, 'WITHSCORES', 'LIMIT', 0, tonumber(ARGV[1]))
local lease = tonumber(ARGV[2])
local until_ms = 0
if lease > 0 then
  until_ms = now + lease
  for i = 1, #due, 2 do redis.call('ZADD', KEYS[1], 'XX', until_ms, due[i]) end
else
  for i = 1, #due, 2 do redis.call('ZREM', KEYS[1], due[i]) end
end
local first = redis.call('ZRANGE', KEYS[1], 0, 0, 'WITHSCORES')
return {due, first[2] or false, tostring(until_ms)}
