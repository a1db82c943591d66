--[[
  HEARTBEAT: extend the lease, only for the holder of the current token.

  Input:
    KEYS[1] job:<job_id>    the job record
    KEYS[2] queue:running   zset of running job ids by lease expiry

    ARGV[1] job id
    ARGV[2] fencing token
    ARGV[3] lease, ms

  Output:
    1  extended
    0  the lease is lost (reaped, or another token holds the job)
]]
local now = now_ms()
-- A claim's token is its start (claim_next writes no `token` field; a hand-off does).
local f = redis.call('HMGET', KEYS[1], 'state', 'token', 'started')
if f[1] ~= 'running' or (f[2] or f[3]) ~= ARGV[2] then return 0 end
redis.call('HSET', KEYS[1], 'lease_until', now + tonumber(ARGV[3]))
redis.call('ZADD', KEYS[2], now + tonumber(ARGV[3]), ARGV[1])
return 1
