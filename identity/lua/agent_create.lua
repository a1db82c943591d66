--[[
  Self-service: an agent account (trust 0) and its first key in one atomic step, within the
  rolling caps per network and in total.

  Input:
    KEYS[1] agentkeys:net:<network>   zset of creations from this network, by time
    KEYS[2] agentkeys:all             zset of all creations, by time
    KEYS[3] account:<username>        the new account hash
    KEYS[4] account:<username>:keys   set of its key hashes
    KEYS[5] key:<hash>                the new key's record
    KEYS[6] keyprefix:<prefix>        prefix -> hash

    ARGV[1] window, ms (the caps are rolling over it)
    ARGV[2] cap per network
    ARGV[3] cap in total
    ARGV[4] a random member for the two zsets
    ARGV[5] username
    ARGV[6] display name ('' = none)
    ARGV[7] key hash
    ARGV[8] key id
    ARGV[9] key prefix
    ARGV[10] label

  Output:
    {'ok', now_ms}             created (now_ms: the creation time); also when this very call
                               created it already (a client on a cluster sends a script
                               again after a timeout or a cut connection: the second run
                               finds its own random key, and neither counts it again nor
                               makes another account)
    {'network_cap', wait_ms}   the network's cap is reached; room in wait_ms
    {'daily_cap', wait_ms}     the total cap is reached; room in wait_ms
    {'collision', 0}           the random name or prefix is taken: try another
]]
local now = now_ms()
local window = tonumber(ARGV[1])
-- Counts only read (entries older than the window are ignored, and trimmed after the first
-- write): Redis at maxmemory refuses a script only at its first write that may grow memory,
-- so that first write must be the ZADD, not a trim, or a full Redis would take the account.
local since = '(' .. (now - window)
if redis.call('GET', KEYS[6]) == ARGV[7] then
  return {'ok', tonumber(redis.call('HGET', KEYS[3], 'createdAtMs')) or now}
end
local function wait(k)
  local oldest = redis.call('ZRANGEBYSCORE', k, since, '+inf', 'WITHSCORES', 'LIMIT', 0, 1)
  if oldest[2] then return tonumber(oldest[2]) + window - now end
  return window
end
if redis.call('ZCOUNT', KEYS[1], since, '+inf') >= tonumber(ARGV[2]) then return {'network_cap', wait(KEYS[1])} end
if redis.call('ZCOUNT', KEYS[2], since, '+inf') >= tonumber(ARGV[3]) then return {'daily_cap', wait(KEYS[2])} end
if redis.call('EXISTS', KEYS[3]) == 1 or redis.call('EXISTS', KEYS[6]) == 1 then return {'collision', 0} end
redis.call('ZADD', KEYS[1], now, ARGV[4])
redis.call('ZADD', KEYS[2], now, ARGV[4])
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now - window)
redis.call('ZREMRANGEBYSCORE', KEYS[2], '-inf', now - window)
redis.call('PEXPIRE', KEYS[1], window)
redis.call('PEXPIRE', KEYS[2], window)
redis.call('HSET', KEYS[3], 'name', ARGV[5], 'kind', 'agent', 'trust', '0', 'blocked', '0',
  'displayName', ARGV[6], 'createdAtMs', now)
redis.call('HSET', KEYS[5], 'hash', ARGV[7], 'id', ARGV[8], 'prefix', ARGV[9],
  'account', ARGV[5], 'label', ARGV[10], 'createdAtMs', now, 'revoked', '0')
redis.call('SADD', KEYS[4], ARGV[7])
redis.call('SET', KEYS[6], ARGV[7])
return {'ok', now}
