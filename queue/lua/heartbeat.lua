-- HEARTBEAT: extend the lease, only for the holder of the current token.
-- ARGV: 3 job_id, 4 token, 5 lease_ms. Returns 1, or 0 when the lease is lost.
local now = now_ms()
local jk = P .. 'job:' .. ARGV[3]
local f = redis.call('HMGET', jk, 'state', 'token')
if f[1] ~= 'running' or f[2] ~= ARGV[4] then return 0 end
redis.call('HSET', jk, 'lease_until', now + tonumber(ARGV[5]))
redis.call('ZADD', P .. 'queue:running', now + tonumber(ARGV[5]), ARGV[3])
return 1
