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

  Output:
    the pair's failures now (0 after a success)
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
local n = 0
for i = 1, 3 do
  local c = redis.call('HINCRBY', KEYS[i], 'n', 1)
  if i == 1 then n = c end
  redis.call('HSET', KEYS[i], 'last', now)
  redis.call('PEXPIRE', KEYS[i], ARGV[3])
end
return n
