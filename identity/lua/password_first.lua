--[[
  Gives account:<name> a password, creating the human account if there is none; refuses an
  agent account, one that has a password already and (ARGV[5] = 'new') any account that
  exists.

  Input:
    KEYS[1] account:<name>   the account hash

    ARGV[1] name
    ARGV[2] trust tier of a new account (0, 1, 2)
    ARGV[3] creation time of a new account, ms (the Redis clock, read by the caller)
    ARGV[4] password (PHC string)
    ARGV[5] 'new' (only a new account) or 'any' (an existing human account without one too)

  Output:
    'ok'      the password is set
    'exists'  ARGV[5] is 'new' and the account exists
    'agent'   an agent account
    'taken'   the person has a password
]]
local kind = redis.call('HGET', KEYS[1], 'kind')
if kind and ARGV[5] == 'new' then return 'exists' end
if kind and kind ~= 'human' then return 'agent' end
if redis.call('HEXISTS', KEYS[1], 'password') == 1 then return 'taken' end
if not kind then
  redis.call('HSET', KEYS[1], 'name', ARGV[1], 'kind', 'human', 'trust', ARGV[2],
    'blocked', '0', 'displayName', '', 'createdAtMs', ARGV[3])
end
redis.call('HSET', KEYS[1], 'password', ARGV[4])
redis.call('HDEL', KEYS[1], 'deletedAtMs')
return 'ok'
