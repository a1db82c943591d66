--[[
  A new browser session (`/account` or `/admin`) and its entry in its owner's index.

  Input:
    KEYS[1] websession:<sha256 of the id>   the session hash
    KEYS[2] account:<name>:websessions or admintoken:<id>:websessions   the owner's index

    ARGV[1] kind ('account', 'operator' or 'admin')
    ARGV[2] account ('' for an admin-token sign-in)
    ARGV[3] token id ('' unless an admin-token sign-in)
    ARGV[4] operator name ('' unless an admin-token sign-in)
    ARGV[5] CSRF token
    ARGV[6] idle expiry, ms
    ARGV[7] absolute lifetime, ms (the index lives at least as long)
    ARGV[8] the session's hash (the index's member)

  Output:
    how many sessions the owner's index holds now (live ones and ones that expired unused;
    the caller trims it to MAX_SESSIONS)
]]
local now = now_ms()
redis.call('HSET', KEYS[1], 'kind', ARGV[1], 'account', ARGV[2], 'tokenId', ARGV[3],
  'operatorName', ARGV[4], 'csrf', ARGV[5], 'createdAtMs', now, 'authAtMs', now)
redis.call('PEXPIRE', KEYS[1], ARGV[6])
redis.call('SADD', KEYS[2], ARGV[8])
-- Only ever longer: the index also holds the owner's other kind of session.
if redis.call('PTTL', KEYS[2]) < tonumber(ARGV[7]) then redis.call('PEXPIRE', KEYS[2], ARGV[7]) end
return redis.call('SCARD', KEYS[2])
