--[[
  IDLE: register a slot as idle in its pool (or refresh its entry), then look once more
  whether a job waits in its lanes; one atomic step. A new entry marks the pool as possibly
  holding an idle slot in queue:fair ('idle:<pool>' = '1'), which admission reads before it
  pops one (admit.lua): in the same step, so no admission can find the mark cleared while
  this slot is registered.

  Input:
    KEYS[1] queue:idle:<pool>       the pool's idle slots (admit.lua)
    KEYS[2] queue:fair              (keys.rs)
    KEYS[3] queue:lane:<lane>       the lanes the pool claims from (a referee slot: the
    KEYS[4] queue:lane:<lane>       referee lane twice)

    ARGV[1] the slot's id
    ARGV[2] its pool ('general' or 'referee')
    ARGV[3] the entry's score: the server's time in ms, as the caller knows it

  Output:
    1  a job waits in the lanes: claim it (an admission before the registration woke nobody
       for it)
    0  none waits: the slot is registered and an admission will wake it
]]
if redis.call('ZADD', KEYS[1], ARGV[3], ARGV[1]) == 1 then
  redis.call('HSET', KEYS[2], 'idle:' .. ARGV[2], '1')
end
if redis.call('EXISTS', KEYS[3], KEYS[4]) > 0 then return 1 end
return 0
