--[[
  CANCEL-QUEUED: drop a job that has not started (its caller left, its wait ran out, or
  the API process its caller waited in died). A started job runs to its end and stays
  charged.

  Input:
    KEYS[1] job:<job_id>            the job record
    KEYS[2] queue:lane:<lane>       the job's lane (zset of waiting ids)
    KEYS[3] queue:fair              the accounts' and the lanes' waiting counts (keys.rs)
    KEYS[4] budget:<day>            the job's day's seconds and counts (its account's too)
    KEYS[5] idem:<account>:<idem>   the job's idempotency record
    KEYS[6] callers:<process>       the presence of the API process the caller waited in
                                    (with ARGV[10] '': any key of the group, never read)
    KEYS[7] queue:clock             the housekeeping's clock: no orphan is dropped within a
                                    presence's life after a stall (orphan_drop_allowed)
    KEYS[8] queue:ended             failed and cancelled jobs by end time (note_ended)

    ARGV[1] job id             ARGV[6] the completion channel (done:<job_id>)
    ARGV[2] final state        ARGV[7] the job's account, as the caller read it
    ARGV[3] failure code       ARGV[8] the job's day, likewise
    ARGV[4] failure message    ARGV[9] the job's idempotency key, likewise
    ARGV[5] job ttl, s
    ARGV[10] '' to drop the job whoever waits for it; or the process id the caller read
             as the job's waiter: drop only an orphan (that waiter, KEYS[6] gone)

  Output:
    1  dropped
    0  no longer queued (or not the record the caller read, or with ARGV[10]: the job's
       waiter is another process now, or that process is alive, or a stall ended less
       than a presence's life ago)

  Cluster note: the day and idempotency keys are named by the record, so the caller reads
  them first (two steps); the script checks the record still says so (same_job). The
  waiter's presence key is named by the record too; the script re-checks the waiter field.
]]
local jk = KEYS[1]
if redis.call('HGET', jk, 'state') ~= 'queued' then return 0 end
if not same_job(jk, ARGV[7], ARGV[8], ARGV[9]) then return 0 end
if ARGV[10] ~= '' then
  if rare().job_fields(jk, 'waiter')[1] ~= ARGV[10] then return 0 end
  if redis.call('EXISTS', KEYS[6]) == 1 then return 0 end
end
local now = now_ms()
if ARGV[10] ~= '' and not rare().orphan_drop_allowed(KEYS[7], now) then return 0 end
-- Off its lane: one less in its account's count and the lanes' (a count at zero is left for
-- fair_sweep.lua, as the claim leaves it).
if redis.call('ZREM', KEYS[2], ARGV[1]) == 1 then
  redis.call('HINCRBY', KEYS[3], 'w:' .. ARGV[7], -1)
  redis.call('HINCRBY', KEYS[3], 'n', -1)
end
rare().release(jk, KEYS[4], KEYS[5], KEYS[8], ARGV[1], now, ARGV[2], ARGV[3], ARGV[4],
  tonumber(ARGV[5]), ARGV[6])
return 1
