-- COMPLETE: record the outcome if the token still holds (a reaped or re-claimed job's old
-- worker is refused), then wake the waiters.
-- ARGV: 3 job_id, 4 token, 5 state, 6 result_json, 7 failure_json, 8 job_ttl_s
local now = now_ms()
local jid = ARGV[3]
local jk = P .. 'job:' .. jid
local f = redis.call('HMGET', jk, 'state', 'token')
if f[1] ~= 'running' or f[2] ~= ARGV[4] then return 0 end
redis.call('HSET', jk, 'state', ARGV[5], 'finished', now)
count_done(jk, ARGV[5])
if ARGV[6] ~= '' then redis.call('HSET', jk, 'result', ARGV[6]) end
if ARGV[7] ~= '' then redis.call('HSET', jk, 'failure', ARGV[7]) end
redis.call('ZREM', P .. 'queue:running', jid)
redis.call('EXPIRE', jk, tonumber(ARGV[8]))
redis.call('PUBLISH', P .. 'done:' .. jid, ARGV[5])
return 1
