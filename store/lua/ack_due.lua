--[[
  ACK-DUE: remove delayed entries a taker has acted on (pop_due.lua with a lease), each only
  while it still has the leased score: an entry scheduled again meanwhile (a new due time)
  stays.

  Input:
    KEYS[1] delayed   zset of entries by due time, ms since the Unix epoch

    ARGV[1] the leased score pop_due.lua answered
    then the members

  Output:
    the number of entries removed
]]
local removed = 0
for i = 2, #ARGV do
  local score = redis.call('ZSCORE', KEYS[1], ARGV[i])
  if score and tonumber(score) == tonumber(ARGV[1]) then
    redis.call('ZREM', KEYS[1], ARGV[i])
    removed = removed + 1
  end
end
return removed
