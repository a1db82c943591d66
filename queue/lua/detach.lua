--[[
  DETACH: a queued job's caller was answered `pending` (its API process is shutting down):
  the job no longer depends on that process's presence, so it stays queued and runs, and a
  retry with the same idempotency key reads it.

  Input:
    KEYS[1] job:<job_id>   the job record

    ARGV[1] the process id the job's waiter must be

  Output:
    1  detached
    0  not queued, or another waiter (nothing changed)
]]
local jk = KEYS[1]
if redis.call('HGET', jk, 'state') ~= 'queued' then return 0 end
if rare().job_fields(jk, 'waiter')[1] ~= ARGV[1] then return 0 end
-- By name, over a packed record's waiter too (helpers.lua's PACKED_AT: the name wins).
redis.call('HSET', jk, 'waiter', '')
return 1
