--[[
  STOP: an operator cancels a running job (or `horst up` ends the job of its worker process
  that died or was killed over its memory limit: ARGV[6] `failed`, at once rather than a lease
  later, with the cause). It ends `cancelled` with the operator's reason
  now, keeps its charge (started work stays charged), and its waiters are woken at once; its
  worker hears the same wake-up and stops the run within 100 ms; the worker's completion is
  refused afterwards (the job is no longer running). Its slot counts as free for admission at
  once (it leaves queue:running, where admission finds the running jobs).

  A job an admission handed to an idle slot that has not taken it up (its record still marked
  `handed`, admit.lua) never ran: when its worker died (ARGV[6] `failed`) it goes back to the
  front of its lane uncharged (put_back, helpers.lua) and another slot runs it; an operator's
  stop drops it as a queued job is dropped (cancel.lua): off the running jobs, its charge,
  reservation and day's count given back, its idempotency key forgotten, its claim (worker,
  start, token, lease) gone with the mark, so the slot, when it would take the job up, finds
  the mark gone and runs nothing. The mark is the evidence: the slot's take-up deletes it
  (one HDEL, before the job runs), so a job whose mark is there has not run.

  Input:
    KEYS[1] job:<job_id>          the job record
    KEYS[2] queue:running         zset of running job ids by lease expiry
    KEYS[3] budget:<day>          the job's day's counts
    KEYS[4] queue:ended           failed and cancelled jobs by end time (note_ended)
    KEYS[5] queue:fair            the accounts' and lanes' waiting counts, the day's charge
    KEYS[6] queue:lane:<lane>     the job's lane (its kind's)
    KEYS[7] queue:handoff:general the idle slots, one of which a job put back wakes
    KEYS[8] queue:handoff:referee (put_back, helpers.lua)
    KEYS[9] idem:<account>:<idem> the job's idempotency record (a dropped hand-off forgets it)

    ARGV[1] job id
    ARGV[2] failure (JSON: code `cancelled` and the operator's reason)
    ARGV[3] job ttl, s
    ARGV[4] the completion channel (done:<job_id>)
    ARGV[5] the job's day (KEYS[3] is its budget)
    ARGV[6] the final state: `cancelled` (an operator's stop) or `failed` (its worker died)
    ARGV[7] the wake-up channels' prefix (queue:new, as admission's)
    ARGV[8] (ARGV[6] `cancelled`) the message of a job handed to a slot that had not taken it
            up: it never ran (code `cancelled`, the operator's reason, nothing charged)
    ARGV[9] the job's account, ARGV[10] its idempotency key, as the caller read them
            (KEYS[9] is named by them; the script checks)

  Output:
    1  stopped
    2  (ARGV[6] `failed`) handed to a slot that never took it up: waiting again at its
       lane's front
    3  (ARGV[6] `cancelled`) handed to a slot that had not taken it up: dropped uncharged,
       as a queued job is (it never ran)
    0  not running (queued, finished or no record): nothing changed

  Cluster note: the job's day names KEYS[3]; the caller reads it first and the script checks.
]]
local jk = KEYS[1]
local f = rare().job_fields(jk, 'state', 'day', 'handed')
if f[1] ~= 'running' then return 0 end
if f[2] ~= ARGV[5] then return redis.error_reply('stop: KEYS[3] is not the budget of the job\'s day') end
local now = now_ms()
local state = ARGV[6]
if state ~= 'cancelled' and state ~= 'failed' then
  return redis.error_reply('stop: the final state must be cancelled or failed')
end
if f[3] then
  if state == 'failed' then
    put_back(jk, ARGV[1], KEYS[2], KEYS[5], KEYS[6], KEYS[7], KEYS[8], ARGV[7])
    return 2
  end
  if not same_job(jk, ARGV[9], ARGV[5], ARGV[10]) then
    return redis.error_reply('stop: KEYS[9] is not the idempotency record of the job')
  end
  -- Never ran: the hand-off's claim and charge are undone (the day's charge in queue:fair
  -- too), then it is dropped as a queued job is (release: reservation, day's count, key).
  local g = rare().job_fields(jk, 'charged', 'day')
  local cf = 'charged:' .. g[2]
  local charged = tonumber(redis.call('HGET', KEYS[5], cf)) or 0
  redis.call('HSET', KEYS[5], cf, string.format('%d', math.max(0, charged - (tonumber(g[1]) or 0))))
  redis.call('HSET', jk, 'charged', '0')
  redis.call('HDEL', jk, 'handed', 'worker', 'started', 'token', 'lease_until', 'pool')
  redis.call('ZREM', KEYS[2], ARGV[1])
  rare().release(jk, KEYS[3], KEYS[9], KEYS[4], ARGV[1], now, 'cancelled', 'cancelled', ARGV[8],
    tonumber(ARGV[3]), ARGV[4])
  return 3
end
redis.call('HSET', jk, 'state', state, 'finished', now, 'failure', ARGV[2])
rare().count_done(jk, KEYS[3], state)
rare().note_ended(KEYS[4], ARGV[1], now, state, ARGV[3])
redis.call('ZREM', KEYS[2], ARGV[1])
redis.call('EXPIRE', jk, tonumber(ARGV[3]))
redis.call('PUBLISH', ARGV[4], state)
return 1
