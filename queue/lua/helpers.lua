-- The queue's Lua helpers, shared by every queue script: the registry sends the store's
-- prelude (`now_ms()`, `day_of`, `to_midnight_s`), then this file, then the script
-- (horst_store::script, `Script::with_helpers`). Not a script of its own: no KEYS, no ARGV.
-- No helper builds a key: every key a script touches arrives in KEYS (Redis Cluster).
-- Counters of a day live a little longer than the day, for the admin overview.
local COUNTER_TTL = 3 * 86400
-- A lane's waiting jobs are a zset scored round * TURN_SPAN + seq: the round is the account's
-- turn (admit.lua), seq keeps arrival order within a round.
local TURN_SPAN = 2097152

-- Counts a finished job in its day's budget hash `bk`, by kind and final state (the overview).
local function count_done(jk, bk, state)
  local kind = redis.call('HGET', jk, 'kind')
  if kind then redis.call('HINCRBY', bk, 'done:' .. kind .. ':' .. state, 1) end
end

-- The caller built the job's day keys from the account, day and idempotency key it read
-- from the record; they never change after admission, so a mismatch means the record is not
-- the one the caller read (it expired and the id was reused): the caller reads again.
local function same_job(jk, account, day, idem)
  local f = redis.call('HMGET', jk, 'account', 'day', 'idem')
  return f[1] == account and f[2] == day and f[3] == idem
end

-- A queued job that will never run: give back what admission took (reservation, daily
-- count), forget its idempotency key so a retry starts afresh, record why, and wake waiters.
-- jk: job:<id>, bk: budget:<day>, dk: daily:<day>:<account>, ik: idem:<account>:<key>, all of
-- the job's own day and account (see same_job).
local function release(jk, bk, dk, ik, jid, now, state, code, message, job_ttl, channel)
  local f = redis.call('HMGET', jk, 'trust', 'kind', 'reserved')
  local trust, kind, reserved = f[1], f[2], tonumber(f[3])
  redis.call('HINCRBY', bk, 'used', -reserved)
  if trust == '0' then redis.call('HINCRBY', bk, 'trust0', -reserved) end
  redis.call('HINCRBY', dk, kind, -1)
  local rec = redis.call('GET', ik)
  if rec and string.sub(rec, -string.len(jid)) == jid then redis.call('DEL', ik) end
  redis.call('HSET', jk, 'state', state, 'finished', now,
    'failure', cjson.encode({code = code, message = message}))
  count_done(jk, bk, state)
  redis.call('EXPIRE', jk, job_ttl)
  redis.call('PUBLISH', channel, state)
end

-- Time nobody saw Redis does not count against a lease (a stall of Redis, or of every process):
-- each housekeeping round notes the server clock in `wk` (queue:clock: seen, since). A gap of
-- more than stall_ms since the last note restarts `since`, and no lease is reaped before a
-- whole lease has passed after it, so a worker that lived through the stall heartbeats (or
-- completes) first. Returns whether leases may be reaped now.
local function reaping_allowed(wk, now, stall_ms, lease_ms)
  local f = redis.call('HMGET', wk, 'seen', 'since')
  local seen, since = tonumber(f[1]), tonumber(f[2]) or 0
  if seen and now - seen > stall_ms then since = now end
  redis.call('HSET', wk, 'seen', now, 'since', since)
  return now >= since + lease_ms
end
