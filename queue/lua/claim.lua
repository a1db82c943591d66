--[[
  CLAIM: the job at the head of a lane (the next turn), with a lease and a fencing token;
  the reservation becomes a charge. A job that can no longer finish within its caller's
  wait is failed with `timeout` instead (its reservation released), and one whose caller's
  API process is gone (its presence expired) is dropped as `cancelled` (released), as the
  orphan sweep would.

  Input:
    KEYS[1] queue:lane:<lane>       the lane's waiting ids by turn (zset, head = lowest)
    KEYS[2] job:<job_id>            the record of the job the caller read at the head
    KEYS[3] waiting:<account>       its account's waiting jobs (counter)
    KEYS[4] fence                   the fencing token counter
    KEYS[5] queue:running           zset of running job ids by lease expiry
    KEYS[6] budget:<day>            the job's day's seconds and counts
    KEYS[7] daily:<day>:<account>   the job's account's jobs that day (for a release)
    KEYS[8] idem:<account>:<idem>   the job's idempotency record (for a release)
    KEYS[9] callers:<process>       the presence of the job's waiter, as the caller read it
                                    (any key when it has none: then unused)
    KEYS[10] queue:turns:<lane>     the lane's turns (admit.lua): the claim moves 'round'
    KEYS[11] queue:ends:<pool>      running jobs of the claiming slot's pool, by latest end

    ARGV[1] clock offset, ms        ARGV[6] the job's account, as the caller read it
    ARGV[2] job id                  ARGV[7] the job's day, likewise
    ARGV[3] worker id               ARGV[8] the job's idempotency key, likewise
    ARGV[4] lease, ms               ARGV[9] the job's completion channel (done:<job_id>)
    ARGV[5] job ttl, s              ARGV[10] the job's waiter, as the caller read it ('' none)
    ARGV[11] the claiming slot's pool ('general' or 'referee')

  Output:
    {'claimed', token, fields}   claimed (fields: the record, as HGETALL gives it)
    {'skipped'}                  the head job was taken off the lane without running (no
                                 longer queued, or timed out and released): try the next
    {'moved'}                    the head is no longer ARGV[2] (another worker took it), or
                                 the record is not the one read: read the head again
    {'empty'}                    the lane is empty

  Cluster note: which job is next is known only from the lane, so the caller reads the head
  and the job's account, day and idempotency key first (two steps) and passes the keys
  they name; the script checks, atomically, that the head and the record are still those.
]]
local head = redis.call('ZRANGE', KEYS[1], 0, 0, 'WITHSCORES')
if #head == 0 then return {'empty'} end
if head[1] ~= ARGV[2] then return {'moved'} end
local jid, jk = ARGV[2], KEYS[2]
local state = redis.call('HGET', jk, 'state')
if state ~= 'queued' then
  redis.call('ZREM', KEYS[1], jid)
  return {'skipped'}
end
if not same_job(jk, ARGV[6], ARGV[7], ARGV[8]) then return {'moved'} end
local waiter = redis.call('HGET', jk, 'waiter') or ''
if waiter ~= ARGV[10] then return {'moved'} end
redis.call('ZREM', KEYS[1], jid)
redis.call('DECR', KEYS[3])
-- The lane's turn moves on to this job's round; an account with nothing later waiting
-- needs no entry (its next job gets the round after the lane's).
local tk = KEYS[10]
local round = math.floor(tonumber(head[2]) / TURN_SPAN)
if round > (tonumber(redis.call('HGET', tk, 'round')) or 0) then
  redis.call('HSET', tk, 'round', round)
end
local mine = 'a:' .. ARGV[6]
if (tonumber(redis.call('HGET', tk, mine)) or 0) <= round then redis.call('HDEL', tk, mine) end
local now = now_ms()
if waiter ~= '' and redis.call('EXISTS', KEYS[9]) == 0 then
  release(jk, KEYS[6], KEYS[7], KEYS[8], jid, now, 'cancelled', 'cancelled',
    'the API process the caller waited in stopped before the job started; it was dropped and nothing was charged; call again (the same idempotencyKey starts afresh)',
    tonumber(ARGV[5]), ARGV[9])
  return {'skipped'}
end
local f = redis.call('HMGET', jk, 'deadline', 'exec_ms', 'reserved')
if now + tonumber(f[2]) > tonumber(f[1]) then
  release(jk, KEYS[6], KEYS[7], KEYS[8], jid, now, 'failed', 'timeout',
    'the job waited too long in the queue to finish within the wait limit; it did not run and nothing was charged; try again',
    tonumber(ARGV[5]), ARGV[9])
  return {'skipped'}
end
local token = redis.call('INCR', KEYS[4])
redis.call('HSET', jk, 'state', 'running', 'started', now, 'token', token,
  'worker', ARGV[3], 'lease_until', now + tonumber(ARGV[4]), 'charged', f[3], 'pool', ARGV[11])
redis.call('ZADD', KEYS[5], now + tonumber(ARGV[4]), jid)
redis.call('ZADD', KEYS[11], now + tonumber(f[2]), jid)
redis.call('HINCRBY', KEYS[6], 'charged', tonumber(f[3]))
return {'claimed', token, redis.call('HGETALL', jk)}
