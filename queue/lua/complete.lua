--[[
  COMPLETE: record the outcome if the token still holds (a reaped or re-claimed job's old
  worker is refused), then wake the waiters.

  Input:
    KEYS[1] job:<job_id>    the job record
    KEYS[2] queue:running   zset of running job ids by lease expiry
    KEYS[3] budget:<day>    the job's day's counts (the day from the claimed record)
    KEYS[4] queue:ends:general  running jobs by latest end (admit.lua), of either pool
    KEYS[5] queue:ends:referee

    ARGV[1] clock offset, ms   ARGV[5] result (JSON, '' = none)
    ARGV[2] job id             ARGV[6] failure (JSON, '' = none)
    ARGV[3] fencing token      ARGV[7] job ttl, s
    ARGV[4] final state        ARGV[8] the completion channel (done:<job_id>)
    ARGV[9] the job's day (KEYS[3] is its budget)

  Output:
    1  recorded
    0  refused: the token is stale
]]
local now = now_ms()
local jk = KEYS[1]
local f = redis.call('HMGET', jk, 'state', 'token', 'day')
if f[1] ~= 'running' or f[2] ~= ARGV[3] then return 0 end
if f[3] ~= ARGV[9] then return redis.error_reply('complete: KEYS[3] is not the budget of the job\'s day') end
redis.call('HSET', jk, 'state', ARGV[4], 'finished', now)
count_done(jk, KEYS[3], ARGV[4])
if ARGV[5] ~= '' then redis.call('HSET', jk, 'result', ARGV[5]) end
if ARGV[6] ~= '' then redis.call('HSET', jk, 'failure', ARGV[6]) end
redis.call('ZREM', KEYS[2], ARGV[2])
redis.call('ZREM', KEYS[4], ARGV[2])
redis.call('ZREM', KEYS[5], ARGV[2])
redis.call('EXPIRE', jk, tonumber(ARGV[7]))
redis.call('PUBLISH', ARGV[8], ARGV[4])
return 1
