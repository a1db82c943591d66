--[[
  Releases a game's seek lock if the caller still holds it (a lock that expired and was
  taken by another seeker is left alone).

  Input:
    KEYS[1] seek:<game>   the lock, holding its holder's random token

    ARGV[1] the caller's token

  Output:
    1 released, 0 not held by the caller
]]
if redis.call('GET', KEYS[1]) == ARGV[1] then
  return redis.call('DEL', KEYS[1])
end
return 0
