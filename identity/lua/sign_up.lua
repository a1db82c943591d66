--[[
  Sign-up on /account: a person's account (trust 0) with its password, within the rolling
  caps of self-service agent keys (the same zsets as agent_create.lua: a new person is one
  more trust-0 identity from that network) and sign-up's own caps, in one atomic step. The
  caps are checked before the name (sign_up_caps.lua).

  Input:
    KEYS[1] agentkeys:net:<network>   zset of self-service creations from this network
    KEYS[2] agentkeys:all             zset of all self-service creations
    KEYS[3] signup:net:<network>      zset of sign-ups from this network
    KEYS[4] signup:all                zset of all sign-ups
    KEYS[5] signup:taken:<network>    zset of taken names this network was told of
    KEYS[6] account:<name>            the new account hash

    ARGV[1] window, ms (every cap is rolling over it)
    ARGV[2] self-service cap per network
    ARGV[3] self-service cap in total
    ARGV[4] sign-up cap per network
    ARGV[5] sign-up cap in total
    ARGV[6] taken-name answers per network
    ARGV[7] a random member for the zsets
    ARGV[8] name
    ARGV[9] password (PHC string)

  Output:
    {'ok', now_ms}             created (or created by this very call already: a client on a
                               cluster sends a script again after a timeout or a cut
                               connection, and the second run finds its own account, whose
                               salted password hash no other call can have)
    {'network_cap', wait_ms}   this network's cap (either) is reached; room in wait_ms
    {'daily_cap', wait_ms}     a total cap (either) is reached; room in wait_ms
    {'taken_cap', wait_ms}     this network was told of ARGV[6] taken names; room in wait_ms
    {'exists', 0}              the name is taken (by anyone, with or without a password);
                               only said while the caps leave room, and counted in
                               KEYS[5]: a network learns of at most ARGV[6] taken names
                               in a window
]]
local now = now_ms()
local window = tonumber(ARGV[1])
local mine = redis.call('HMGET', KEYS[6], 'password', 'createdAtMs')
if mine[1] == ARGV[9] then return {'ok', tonumber(mine[2])} end
-- The caps before the name: once they are spent, every answer is the cap, so sign-up is no
-- oracle of which names exist. The caps' counts only read (sign_up_caps.lua; entries older
-- than the window are trimmed after the first write): Redis at maxmemory refuses a script
-- only at its first write that may grow memory, so that first write must be a ZADD, not a
-- trim, or a full Redis would take the account (agent_create.lua likewise).
local capped = sign_up_cap(now)
if capped then return capped end
if redis.call('EXISTS', KEYS[6]) == 1 then
  -- Counted (a resent run adds its own member again, not a second one).
  redis.call('ZADD', KEYS[5], now, ARGV[7])
  redis.call('ZREMRANGEBYSCORE', KEYS[5], '-inf', now - window)
  redis.call('PEXPIRE', KEYS[5], window)
  return {'exists', 0}
end
for i = 1, 4 do
  redis.call('ZADD', KEYS[i], now, ARGV[7])
  redis.call('ZREMRANGEBYSCORE', KEYS[i], '-inf', now - window)
  redis.call('PEXPIRE', KEYS[i], window)
end
redis.call('HSET', KEYS[6], 'name', ARGV[8], 'kind', 'human', 'trust', '0', 'blocked', '0',
  'displayName', '', 'createdAtMs', now, 'password', ARGV[9])
return {'ok', now}
