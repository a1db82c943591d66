-- CLAIM: the oldest waiting job, with a lease and a fencing token; the reservation becomes
-- a charge. A job that can no longer finish within its caller's wait is failed with
-- `timeout` instead (its reservation released), and the next one is tried.
-- ARGV: 3 worker_id, 4 lease_ms, 5 job_ttl_s
-- Returns false, or {job_id, token}.
local now = now_ms()
for _ = 1, 32 do
  local jid = redis.call('RPOP', P .. 'queue:waiting')
  if not jid then return false end
  local jk = P .. 'job:' .. jid
  local f = redis.call('HMGET', jk, 'state', 'account', 'deadline', 'exec_ms', 'reserved', 'day')
  if f[1] == 'queued' then
    redis.call('DECR', P .. 'waiting:' .. f[2])
    if now + tonumber(f[4]) > tonumber(f[3]) then
      release(jk, jid, now, 'failed', 'timeout',
        'the job waited too long in the queue to finish within the wait limit; it did not run and nothing was charged; try again',
        tonumber(ARGV[5]))
    else
      local token = redis.call('INCR', P .. 'fence')
      redis.call('HSET', jk, 'state', 'running', 'started', now, 'token', token,
        'worker', ARGV[3], 'lease_until', now + tonumber(ARGV[4]), 'charged', f[5])
      redis.call('ZADD', P .. 'queue:running', now + tonumber(ARGV[4]), jid)
      redis.call('HINCRBY', budget_key(f[6]), 'charged', tonumber(f[5]))
      return {jid, token}
    end
  end
end
return false
