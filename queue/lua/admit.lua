-- ADMIT: idempotency, caps, daily quota, seconds budget, then enqueue; one atomic step.
-- ARGV: 3 job_id, 4 account, 5 trust, 6 kind, 7 idem_key, 8 fingerprint, 9 input,
-- 10 reserve_s, 11 per_account_cap, 12 global_cap, 13 kind_limit, 14 daily_seconds,
-- 15 trust0_cap_s, 16 idem_ttl_s, 17 wait_ms, 18 exec_ms, 19 retention_ms
local jid, account, trust, kind = ARGV[3], ARGV[4], ARGV[5], ARGV[6]
local idem_key, fp, input = ARGV[7], ARGV[8], ARGV[9]
local reserve = tonumber(ARGV[10])
local now = now_ms()
local day = day_of(now)

local ik = P .. 'idem:' .. account .. ':' .. idem_key
local rec = redis.call('GET', ik)
if rec then
  local sep = string.find(rec, '|', 1, true)
  local old_fp, old_jid = string.sub(rec, 1, sep - 1), string.sub(rec, sep + 1)
  if old_fp ~= fp then return {'conflict', old_jid} end
  local old = redis.call('HGETALL', P .. 'job:' .. old_jid)
  if #old > 0 then return {'replayed', old_jid, old} end
  -- The job record expired before its key did: treat the key as new.
end

local retry = math.max(1, math.ceil(tonumber(ARGV[18]) / 1000))
if (tonumber(redis.call('GET', P .. 'waiting:' .. account)) or 0) >= tonumber(ARGV[11]) then
  -- Name the caller's oldest waiting job (the global queue holds at most waiting_global ids).
  local waiting = redis.call('LRANGE', P .. 'queue:waiting', 0, -1)
  for i = #waiting, 1, -1 do
    if redis.call('HGET', P .. 'job:' .. waiting[i], 'account') == account then
      return {'busy', 'account', retry, waiting[i]}
    end
  end
  return {'busy', 'account', retry}
end
if redis.call('LLEN', P .. 'queue:waiting') >= tonumber(ARGV[12]) then
  return {'busy', 'global', retry}
end

local dk = daily_key(day, account)
if (tonumber(redis.call('HGET', dk, kind)) or 0) >= tonumber(ARGV[13]) then
  return {'quota', 'owner', to_midnight_s(now)}
end
local bk = budget_key(day)
if (tonumber(redis.call('HGET', bk, 'used')) or 0) + reserve > tonumber(ARGV[14]) then
  return {'quota', 'global', to_midnight_s(now)}
end
if trust == '0' and (tonumber(redis.call('HGET', bk, 'trust0')) or 0) + reserve > tonumber(ARGV[15]) then
  return {'quota', 'global_new', to_midnight_s(now)}
end

redis.call('HINCRBY', dk, kind, 1)
redis.call('EXPIRE', dk, COUNTER_TTL)
redis.call('HINCRBY', bk, 'used', reserve)
if trust == '0' then redis.call('HINCRBY', bk, 'trust0', reserve) end
redis.call('HINCRBY', bk, 'jobs:' .. kind, 1)
redis.call('EXPIRE', bk, COUNTER_TTL)

local jk = P .. 'job:' .. jid
redis.call('HSET', jk, 'id', jid, 'kind', kind, 'account', account, 'trust', trust,
  'state', 'queued', 'fp', fp, 'idem', idem_key, 'input', input, 'created', now,
  'deadline', now + tonumber(ARGV[17]), 'exec_ms', ARGV[18], 'reserved', reserve,
  'charged', 0, 'day', day)
redis.call('SET', ik, fp .. '|' .. jid, 'EX', tonumber(ARGV[16]))
redis.call('INCR', P .. 'waiting:' .. account)
redis.call('LPUSH', P .. 'queue:waiting', jid)
local lk = P .. 'jobs:' .. account
redis.call('ZADD', lk, now, jid)
redis.call('ZREMRANGEBYSCORE', lk, '-inf', now - tonumber(ARGV[19]))
redis.call('PUBLISH', P .. 'queue:new', jid)
return {'new', jid, redis.call('HGETALL', jk)}
