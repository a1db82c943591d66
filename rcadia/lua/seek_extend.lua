--[[
  Keeps a seek lock while its holder still picks a table: its expiry starts again, if the
  caller still holds it (a lock that expired and was taken by another seeker is left alone,
  and the caller stops picking).

  Input:
    KEYS[1] seek:<game>   the lock, holding its holder's random token

    ARGV[1] the caller's token
    ARGV[2] the new expiry, ms

  Output:
    1 still held (expiry renewed), 0 not held by the caller
]]
if redis.call('GET', KEYS[1]) == ARGV[1] then
  return redis.call('PEXPIRE', KEYS[1], ARGV[2])
end
return 0
