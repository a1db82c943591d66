--[[
  Writes the ratings of one finished game, exactly once: the game's marker, both agents'
  ratings, their histories and thinking times and the leaderboard change in one atomic step.
  A game already rated (its marker is set) writes nothing; a rating that moved since the
  caller read it (another game of the same agent was rated in between) writes nothing
  either, and the caller computes again. A pair of agents has at most ARGV[16] games rated
  per UTC day (KEYS[11] counts them): a further game writes the marker and both histories'
  entries saying it was not rated, and nothing else. Every key is in the records group's
  slot; the caller takes the game off its bucket's pending set afterwards (idempotent: a
  game left there answers 0 here next time).

  Input:
    KEYS[1] rated:<sessionId>          the game's marker
    KEYS[2] rating:<game>:<a>          seat 0's rating (JSON)
    KEYS[3] rating:<game>:<b>          seat 1's rating (JSON)
    KEYS[4] rating:<game>:<a>:history  seat 0's latest rating changes (JSON), newest first
    KEYS[5] rating:<game>:<b>:history
    KEYS[6] rating:<game>:<a>:think    seat 0's latest thinking times (ms), newest first
    KEYS[7] rating:<game>:<b>:think
    KEYS[8] leaderboard:<game>         zset of ranked agents (not provisional) by rating
    KEYS[9] leaderboard:games         set of games with ratings
    KEYS[10] rating:<game>:excluded    set of agents the operator excluded
    KEYS[11] rating:<game>:pair:<day>:<a>:<b>  the pair's rated games that UTC day (the two
                                       agent ids in order)
    KEYS[12] leaderboard:<game>:provisional  zset of provisional agents by rating
    KEYS[13] leaderboard:<game>:idle   zset of ranked agents by when idleness makes them
                                       provisional (ms; `lua/rating_idle.lua` moves them)

    ARGV[1] the session id
    ARGV[2] seat 0's rating as read ('' = none)
    ARGV[3] seat 1's rating as read ('' = none)
    ARGV[4] seat 0's new rating (JSON)
    ARGV[5] seat 1's new rating (JSON)
    ARGV[6] seat 0's agent id (the leaderboard member)
    ARGV[7] seat 1's agent id
    ARGV[8] seat 0's new rating (the leaderboard score)
    ARGV[9] seat 1's new rating
    ARGV[10] seat 0's history entry (JSON)
    ARGV[11] seat 1's history entry (JSON)
    ARGV[12] history entries kept per agent
    ARGV[13] thinking times kept per agent
    ARGV[14] how long the marker is kept, ms
    ARGV[15] the game id
    ARGV[16] games a pair of agents may have rated per UTC day
    ARGV[17] how long the pair's count is kept, ms
    ARGV[18] seat 0's history entry if the game is not rated (the pair's cap; JSON)
    ARGV[19] seat 1's history entry if the game is not rated
    ARGV[20] '1' = seat 0 is provisional after the game (KEYS[12], else KEYS[8])
    ARGV[21] '1' = seat 1 is provisional after the game
    ARGV[22] when seat 0 turns provisional by idleness, ms ('' = never or provisional now)
    ARGV[23] the same for seat 1
    ARGV[24] N0, seat 0's number of thinking times
    then N0 thinking times of seat 0, then N1 and N1 thinking times of seat 1

  Output:
    1   rated
    0   already rated (nothing written)
    2   not rated: an agent is excluded (marked, nothing else written)
    3   not rated: the pair's games of the day are rated already (marked, histories say so)
    -1  a rating moved since it was read (nothing written; compute again)
]]
if redis.call('EXISTS', KEYS[1]) == 1 then
  return 0
end
if redis.call('SISMEMBER', KEYS[10], ARGV[6]) == 1 or redis.call('SISMEMBER', KEYS[10], ARGV[7]) == 1 then
  redis.call('SET', KEYS[1], '0', 'PX', ARGV[14])
  return 2
end
local function same(key, expected)
  local v = redis.call('GET', key)
  if not v then
    return expected == ''
  end
  return v == expected
end
if not same(KEYS[2], ARGV[2]) or not same(KEYS[3], ARGV[3]) then
  return -1
end
local function history(key, entry)
  redis.call('LPUSH', key, entry)
  redis.call('LTRIM', key, 0, tonumber(ARGV[12]) - 1)
end
local pair = redis.call('INCR', KEYS[11])
if pair == 1 then
  redis.call('PEXPIRE', KEYS[11], ARGV[17])
end
if pair > tonumber(ARGV[16]) then
  history(KEYS[4], ARGV[18])
  history(KEYS[5], ARGV[19])
  redis.call('SET', KEYS[1], '3', 'PX', ARGV[14])
  return 3
end
redis.call('SET', KEYS[2], ARGV[4])
redis.call('SET', KEYS[3], ARGV[5])
-- Each agent in one of the two boards: ranked, or provisional (listed apart).
for seat = 0, 1 do
  local agent, score = ARGV[6 + seat], ARGV[8 + seat]
  if ARGV[20 + seat] == '1' then
    redis.call('ZADD', KEYS[12], score, agent)
    redis.call('ZREM', KEYS[8], agent)
    redis.call('ZREM', KEYS[13], agent)
  else
    redis.call('ZADD', KEYS[8], score, agent)
    redis.call('ZREM', KEYS[12], agent)
    if ARGV[22 + seat] == '' then
      redis.call('ZREM', KEYS[13], agent)
    else
      redis.call('ZADD', KEYS[13], ARGV[22 + seat], agent)
    end
  end
end
redis.call('SADD', KEYS[9], ARGV[15])
history(KEYS[4], ARGV[10])
history(KEYS[5], ARGV[11])
local i = 24
for seat = 0, 1 do
  local n = tonumber(ARGV[i])
  local key = KEYS[6 + seat]
  for j = i + 1, i + n do
    redis.call('LPUSH', key, ARGV[j])
  end
  if n > 0 then
    redis.call('LTRIM', key, 0, tonumber(ARGV[13]) - 1)
  end
  i = i + n + 1
end
redis.call('SET', KEYS[1], '1', 'PX', ARGV[14])
return 1
