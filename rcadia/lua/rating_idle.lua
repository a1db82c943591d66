--[[
  Moves the ranked agents that idleness made provisional (their RD grew past the limit since
  their last game) off the ranked board onto the provisional one, with their rating as
  score, so both the leaderboard and an agent's own page count only agents ranked as of
  ARGV[1]. Run before every leaderboard and agent read; a later game puts an agent back
  where it belongs (`rating_apply.lua`, which also renews its time in KEYS[3]).

  Input:
    KEYS[1] leaderboard:<game>              zset of ranked agents by rating
    KEYS[2] leaderboard:<game>:provisional  zset of provisional agents by rating
    KEYS[3] leaderboard:<game>:idle         zset of ranked agents by when idleness makes
                                            them provisional (ms)
    KEYS[4] leaderboard:<game>:idle:built   set once KEYS[3] holds every ranked agent

    ARGV[1] now, ms (the caller's reading of the clock, which it rates standings at)
    ARGV[2] how many to move at most

  Output:
    {moved, built}  how many agents were moved; 1 if KEYS[4] is set, else 0 (the caller
                    indexes the board first)
]]
local due = redis.call('ZRANGEBYSCORE', KEYS[3], '-inf', ARGV[1], 'LIMIT', 0, tonumber(ARGV[2]))
local moved = 0
for _, agent in ipairs(due) do
  local score = redis.call('ZSCORE', KEYS[1], agent)
  if score then
    redis.call('ZREM', KEYS[1], agent)
    redis.call('ZADD', KEYS[2], score, agent)
    moved = moved + 1
  end
  redis.call('ZREM', KEYS[3], agent)
end
return {moved, redis.call('EXISTS', KEYS[4])}
