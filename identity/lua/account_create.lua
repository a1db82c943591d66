--[[
  Creates a human (operator-made) account, unless the name is taken.

  Input:
    KEYS[1] account:<name>       the account hash

    ARGV[1] name
    ARGV[2] trust tier (0, 1, 2)
    ARGV[3] creation time, ms (the Redis clock, read by the caller)

  Output:
    1  created
    0  the account exists (nothing written)
]]
if redis.call('EXISTS', KEYS[1]) == 1 then return 0 end
redis.call('HSET', KEYS[1], 'name', ARGV[1], 'kind', 'human', 'trust', ARGV[2],
  'blocked', '0', 'displayName', '', 'createdAtMs', ARGV[3])
return 1
