--[[
  DAILY-ADOPT: move an account's daily counts of a version before they were kept in the day's
  budget hash (daily:<day>:<account>, by kind and 'bytes') into it, as 'd:<account>:<field>'
  (admit.lua), and delete the old hash, in one step: a second call finds nothing to move.

  Input:
    KEYS[1] daily:<day>:<account>   the old hash
    KEYS[2] budget:<day>            the same day's budget hash

    ARGV[1] the account

  Output:
    the number of fields moved (0: nothing there)
]]
local old = redis.call('HGETALL', KEYS[1])
if #old == 0 then return 0 end
for i = 1, #old, 2 do
  redis.call('HINCRBY', KEYS[2], 'd:' .. ARGV[1] .. ':' .. old[i], tonumber(old[i + 1]))
end
-- The budget hash lives as long as its day's counters at least (a day whose hash had no
-- admission since it was made has no expiry yet).
local ttl = redis.call('PTTL', KEYS[1])
local have = redis.call('PTTL', KEYS[2])
if ttl > 0 and (have < 0 or have < ttl) then redis.call('PEXPIRE', KEYS[2], ttl) end
redis.call('DEL', KEYS[1])
return #old / 2
