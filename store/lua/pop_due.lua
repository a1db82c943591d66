--[[
  POP-DUE: take the delayed entries whose time has come (on the server clock), atomically,
  so each is handed to one process at a time even with many processes polling; and say when
  the next one is due, so the poller sleeps until then without another round trip.

  With a lease the taken entries are not removed: they are moved to now + lease, and the
  taker removes each once it has acted on it (ack_due.lua). A taker that dies, or cannot act
  (Redis away for the write the entry stands for), leaves them to come due again a lease
  later, for whoever polls then: a deadline is never lost between its pop and its effect.
  Acting twice must therefore be harmless (the session machine ignores a stale firing).

  Every pop also notes the server clock in KEYS[2]. Pollers pop every set at least every
  few hundred ms, so a gap of more than ARGV[3] since the last pop of any process means
  nobody could pop: Redis was stalled (or no poller could reach it, or none ran). Such a gap
  is remembered as a stall, from the last pop before it to this one, for ARGV[4] after it
  ended (at most the latest 16), and every pop answers the stalls remembered: a taker may
  then leave that time out of what it charges (the session clocks do: rcadia's stalls.rs).

  Input:
    KEYS[1] delayed          zset of entries by due time, ms since the Unix epoch
    KEYS[2] delayed:stalls   hash: seen (the last pop's clock, ms), stalls (the stalls
                             remembered, '<from>:<to> ...', oldest first)

    ARGV[1] most entries to take ('0': take none, only note the clock and answer the stalls)
    ARGV[2] lease, ms ('0': remove the taken entries at once)
    ARGV[3] stall, ms: a longer gap since the last pop is a stall
    ARGV[4] how long a stall is remembered after it ended, ms
    ARGV[5] the latest server time (ms) this pop may take entries at, or '0' for no bound:
            its caller stops waiting for the answer then. A pop that runs later (a partition
            held it and delivered it when it healed) takes none: leased to a taker that never
            heard, they would fire only a lease late; taken without a lease, never

  Output:
    {{member, due_ms, member, due_ms, ...}, next_due_ms or nil, lease_score, now_ms, stalls}:
    the taken entries earliest first (with their own due times), the due time of the
    earliest entry left (a leased one included), the score the taken entries now have
    (ack_due.lua removes an entry only while it still has that score; '0' without a lease),
    the server clock of this pop, and the stalls remembered ('<from>:<to> ...', '' none)
]]
local now = now_ms()
local limit = tonumber(ARGV[1])
if ARGV[5] ~= '0' and now > tonumber(ARGV[5]) then limit = 0 end
local due = {}
if limit > 0 then
  due = redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', now, 'WITHSCORES', 'LIMIT', 0, limit)
end
local lease = tonumber(ARGV[2])
local until_ms = 0
if lease > 0 then
  until_ms = now + lease
  for i = 1, #due, 2 do redis.call('ZADD', KEYS[1], 'XX', until_ms, due[i]) end
else
  for i = 1, #due, 2 do redis.call('ZREM', KEYS[1], due[i]) end
end
local first = redis.call('ZRANGE', KEYS[1], 0, 0, 'WITHSCORES')

-- The clock note: the last pop's clock, and the stalls remembered.
local note = redis.call('HMGET', KEYS[2], 'seen', 'stalls')
local seen, kept = tonumber(note[1]), {}
local keep = tonumber(ARGV[4])
for from, to in string.gmatch(note[2] or '', '(%d+):(%d+)') do
  if tonumber(to) + keep >= now then kept[#kept + 1] = from .. ':' .. to end
end
if seen and now - seen > tonumber(ARGV[3]) then
  kept[#kept + 1] = string.format('%d:%d', seen, now)
end
while #kept > 16 do table.remove(kept, 1) end
local stalls = table.concat(kept, ' ')
if stalls == (note[2] or '') then
  redis.call('HSET', KEYS[2], 'seen', string.format('%d', now))
else
  redis.call('HSET', KEYS[2], 'seen', string.format('%d', now), 'stalls', stalls)
end
return {due, first[2] or false, tostring(until_ms), string.format('%d', now), stalls}
