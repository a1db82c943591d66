--[[
  Records a sign-in's outcome for sign_in_wait.lua. A failure counts on all three counters
  (each kept ARGV[3] ms after its newest failure); a success forgets the pair's failures and
  remembers the client as one the name signs in from (ARGV[4] ms). Successes never count.

  Input:
    KEYS[1] signin:pair:<name hash>|<client>
    KEYS[2] signin:client:<client>
    KEYS[3] signin:name:<name hash>
    KEYS[4] signin:known:<name>

    ARGV[1] 'fail' or 'ok'
    ARGV[2] the client (as in KEYS[1])
    ARGV[3] how long failures are remembered, ms
    ARGV[4] how long a known client is remembered, ms
    ARGV[5] this attempt's id (random, one per sign-in): kept in KEYS[1] as `attempt`

  Output:
    the pair's failures now (0 after a success)

  A resend of the same attempt (a cluster connection resends a request whose connection
  broke or whose reply timed out, and Redis may have run the first) counts nothing again: a
  failure whose attempt KEYS[1] already names returns the count as it is. A success is
  idempotent by itself.
]]
local now = now_ms()
if ARGV[1] == 'ok' then
  -- The SADD first: a full Redis refuses a script only at its first write that may grow
  -- memory, so a DEL first would let this one through.
  redis.call('SADD', KEYS[4], ARGV[2])
  redis.call('DEL', KEYS[1])
  redis.call('PEXPIRE', KEYS[4], ARGV[4])
  return 0
end
local seen = redis.call('HMGET', KEYS[1], 'attempt', 'n')
if seen[1] == ARGV[5] then
  return tonumber(seen[2] or '0')
end
local n = 0
for i = 1, 3 do
  local c = redis.call('HINCRBY', KEYS[i], 'n', 1)
  if i == 1 then
    n = c
    redis.call('HSET', KEYS[i], 'last', now, 'attempt', ARGV[5])
  else
    redis.call('HSET', KEYS[i], 'last', now)
  end
  redis.call('PEXPIRE', KEYS[i], ARGV[3])
end
return n
