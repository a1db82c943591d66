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
  stop ends it as any running job, and takes the mark away, so the slot does not run it.

  Input:
    KEYS[1] job:<job_id>          the job record
    KEYS[2] queue:running         zset of running job ids by lease expiry
    KEYS[3] budget:<day>          the job's day's counts
    KEYS[4] queue:ended           failed and cancelled jobs by end time (note_ended)
    KEYS[5] queue:fair            the accounts' and lanes' waiting counts, the day's charge
    KEYS[6] queue:lane:<lane>     the job's lane (its kind's)
    KEYS[7] queue:handoff:general the idle slots, one of which a job put back wakes
    KEYS[8] queue:handoff:referee (put_back, helpers.lua)

    ARGV[1] job id
    ARGV[2] failure (JSON: code `cancelled` and the operator's reason)
    ARGV[3] job ttl, s
    ARGV[4] the completion channel (done:<job_id>)
    ARGV[5] the job's day (KEYS[3] is its budget)
    ARGV[6] the final state: `cancelled` (an operator's stop) or `failed` (its worker died)
    ARGV[7] the wake-up channels' prefix (queue:new, as admission's)

  Output:
    1  stopped
    2  (ARGV[6] `failed`) handed to a slot that never took it up: waiting again at its
       lane's front
    0  not running (queued, finished or no record): nothing changed

  Cluster note: the job's day names KEYS[3]; the caller reads it first and the script checks.
]]
local jk = KEYS[1]
local f = redis.call('HMGET', jk, 'state', 'day', 'handed')
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
  redis.call('HDEL', jk, 'handed')
end
redis.call('HSET', jk, 'state', state, 'finished', now, 'failure', ARGV[2])
count_done(jk, KEYS[3], state)
note_ended(KEYS[4], ARGV[1], now, state, ARGV[3])
redis.call('ZREM', KEYS[2], ARGV[1])
redis.call('EXPIRE', jk, tonumber(ARGV[3]))
redis.call('PUBLISH', ARGV[4], state)
return 1
