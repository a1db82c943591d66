-- CANCEL-QUEUED: drop a job that has not started (its caller left, or its wait ran out).
-- ARGV: 3 job_id, 4 state, 5 code, 6 message, 7 job_ttl_s. Returns 1 if dropped, 0 if it
-- was no longer queued (a started job runs to its end and stays charged).
local now = now_ms()
local jid = ARGV[3]
local jk = P .. 'job:' .. jid
local f = redis.call('HMGET', jk, 'state', 'account')
if f[1] ~= 'queued' then return 0 end
redis.call('LREM', P .. 'queue:waiting', 0, jid)
redis.call('DECR', P .. 'waiting:' .. f[2])
release(jk, jid, now, ARGV[4], ARGV[5], ARGV[6], tonumber(ARGV[7]))
return 1
