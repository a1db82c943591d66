--[[
  REAP: a running job whose lease expired (its worker died or hung) fails with code
  `cancelled`, keeps its charge, and is never queued again; unless an admission handed it
  to an idle slot that never took it up (its record still marked `handed`, admit.lua): it
  never ran, and goes back to the front of its lane uncharged (put_back, helpers.lua).

  Input:
    KEYS[1] job:<job_id>    the job record
    KEYS[2] queue:running   zset of running job ids by lease expiry
    KEYS[3] budget:<day>    the job's day's counts
    KEYS[4] queue:clock     the housekeeping's clock (expired.lua)
    KEYS[5] queue:ended     failed and cancelled jobs by end time (note_ended)
    KEYS[6] queue:fair      the accounts' and lanes' waiting counts, the day's charge
    KEYS[7] queue:lane:<lane>  the job's lane (its kind's), where a job handed to nobody
                            goes back
    KEYS[8] queue:handoff:general  the idle slots, one of which a job put back wakes
    KEYS[9] queue:handoff:referee  (put_back, helpers.lua)

    ARGV[1] job id
    ARGV[2] job ttl, s
    ARGV[3] the completion channel (done:<job_id>)
    ARGV[4] the job's day (KEYS[3] is its budget)
    ARGV[5] stall, ms       ARGV[6] lease, ms (expired.lua)
    ARGV[7] the wake-up channels' prefix (queue:new, as admission's)

  Output:
    'reaped'   failed now
    'requeued' handed to a slot that never took it up: waiting again at its lane's front
    'alive'    its lease still holds (a heartbeat came in between), or a stall's grace lasts
    'gone'     not running (finished, or no record); its running entry was dropped

  Cluster note: which leases expired is known from queue:running, so the caller reads it
  and each job's day first (two steps); the script re-checks the lease atomically, and the
  stall rule too (a round whose reads ran before a stall and this script after it).
]]
local now = now_ms()
local jk = KEYS[1]
local f = rare().job_fields(jk, 'state', 'lease_until', 'day', 'handed')
if f[1] ~= 'running' then
  redis.call('ZREM', KEYS[2], ARGV[1])
  return 'gone'
end
if tonumber(f[2]) > now then return 'alive' end
if not rare().reaping_allowed(KEYS[4], now, tonumber(ARGV[5]), tonumber(ARGV[6])) then return 'alive' end
if f[3] ~= ARGV[4] then return redis.error_reply('reap: KEYS[3] is not the budget of the job\'s day') end
if f[4] then
  put_back(jk, ARGV[1], KEYS[2], KEYS[6], KEYS[7], KEYS[8], KEYS[9], ARGV[7])
  return 'requeued'
end
redis.call('HSET', jk, 'state', 'failed', 'finished', now, 'failure', cjson.encode({
  code = 'cancelled',
  message = 'the worker running this job stopped, or lost its connection to the job store, before its outcome was recorded (its lease expired); the job was not re-run and stays charged (the worker may have done the work); call again with a new idempotencyKey to run it again'}))
rare().count_done(jk, KEYS[3], 'failed')
rare().note_ended(KEYS[5], ARGV[1], now, 'failed', ARGV[2])
redis.call('EXPIRE', jk, tonumber(ARGV[2]))
redis.call('PUBLISH', ARGV[3], 'failed')
redis.call('ZREM', KEYS[2], ARGV[1])
return 'reaped'
