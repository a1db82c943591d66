-- REAP: running jobs whose lease expired (their worker died or hung) fail with code
-- `cancelled`, keep their charge, and are never queued again.
-- ARGV: 3 job_ttl_s, 4 limit. Returns the ids reaped.
local now = now_ms()
local reaped = {}
local ids = redis.call('ZRANGEBYSCORE', P .. 'queue:running', '-inf', now, 'LIMIT', 0, tonumber(ARGV[4]))
for _, jid in ipairs(ids) do
  local jk = P .. 'job:' .. jid
  local f = redis.call('HMGET', jk, 'state', 'lease_until')
  if f[1] == 'running' and tonumber(f[2]) <= now then
    redis.call('HSET', jk, 'state', 'failed', 'finished', now, 'failure', cjson.encode({
      code = 'cancelled',
      message = 'the worker running this job stopped before it finished (its lease expired); the job was not re-run and stays charged; submit it again with a new idempotencyKey'}))
    count_done(jk, 'failed')
    redis.call('EXPIRE', jk, tonumber(ARGV[3]))
    redis.call('PUBLISH', P .. 'done:' .. jid, 'failed')
    reaped[#reaped + 1] = jid
  end
  if f[1] ~= 'running' or tonumber(f[2]) <= now then
    redis.call('ZREM', P .. 'queue:running', jid)
  end
end
return reaped
