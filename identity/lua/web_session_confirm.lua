--[[
  Records that a browser session's person or token gave the credential again just now, only
  while the session exists: a sign-out, password change or deletion that ended it meanwhile
  is not undone by a hash holding only this field (and no expiry).

  Input:
    KEYS[1] websession:<hash>   the session

    ARGV[1] now, ms since the Unix epoch

  Output:
    1  recorded
    0  the session is gone; nothing written
]]
if redis.call('EXISTS', KEYS[1]) == 0 then return 0 end
redis.call('HSET', KEYS[1], 'authAtMs', ARGV[1])
return 1
