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
    KEYS[12] queue:idle:<pool>      the pool's idle slots (admit.lua): the claiming slot
                                    leaves it (with ARGV[11] '1')

    ARGV[1] job id                  ARGV[6] the job's day, likewise
    ARGV[2] worker id               ARGV[7] the job's idempotency key, likewise
    ARGV[3] lease, ms               ARGV[8] the job's completion channel (done:<job_id>)
    ARGV[4] job ttl, s              ARGV[9] the job's waiter, as the caller read it ('' none)
    ARGV[5] the job's account, as the caller read it
    ARGV[10] the claiming slot's pool ('general' or 'referee')
    ARGV[11] '1' when the claiming slot is registered idle (it woke by itself), else ''

  Output:
    {'claimed', token, fields, more}  claimed (fields: the record's fields the worker needs,
                                 as HGETALL would give them;
                                 more: 1 if another job waits in the lane, else 0)
    {'skipped'}                  the head job was taken off the lane without running (no
                                 longer queued, or timed out and released): try the next
    {'moved'}                    the head is no longer ARGV[1] (another worker took it), or
                                 the record is not the one read: read the head again
    {'empty'}                    the lane is empty

  Cluster note: which job is next is known only from the lane, so the caller reads the head
  and the job's account, day and idempotency key first (two steps) and passes the keys
  they name; the script checks, atomically, that the head and the record are still those.
]]
-- The head and whether another waits behind it.
local head = redis.call('ZRANGE', KEYS[1], 0, 1, 'WITHSCORES')
if #head == 0 then return {'empty'} end
if head[1] ~= ARGV[1] then return {'moved'} end
local jid, jk = ARGV[1], KEYS[2]
-- One read of every field the checks and the claimed record need (never HGETALL).
local names = {'state', 'account', 'day', 'idem', 'waiter', 'deadline', 'exec_ms', 'reserved',
  'id', 'kind', 'trust', 'input', 'created', 'request'}
local f = redis.call('HMGET', jk, unpack(names))
if f[1] ~= 'queued' then
  redis.call('ZREM', KEYS[1], jid)
  return {'skipped'}
end
if f[2] ~= ARGV[5] or f[3] ~= ARGV[6] or f[4] ~= ARGV[7] then return {'moved'} end
local waiter = f[5] or ''
if waiter ~= ARGV[9] then return {'moved'} end
redis.call('ZREM', KEYS[1], jid)
redis.call('DECR', KEYS[3])
-- The lane's turn moves on to this job's round; an account with nothing later waiting
-- needs no entry (its next job gets the round after the lane's).
local tk = KEYS[10]
local round = math.floor(tonumber(head[2]) / TURN_SPAN)
local mine = 'a:' .. ARGV[5]
local t = redis.call('HMGET', tk, 'round', mine)
if round > (tonumber(t[1]) or 0) then redis.call('HSET', tk, 'round', round) end
if (tonumber(t[2]) or 0) <= round then redis.call('HDEL', tk, mine) end
local now = now_ms()
if waiter ~= '' and redis.call('EXISTS', KEYS[9]) == 0 then
  release(jk, KEYS[6], KEYS[7], KEYS[8], jid, now, 'cancelled', 'cancelled',
    'the API process the caller waited in stopped before the job started; it was dropped and nothing was charged; call again (the same idempotencyKey starts afresh)',
    tonumber(ARGV[4]), ARGV[8])
  return {'skipped'}
end
if now + tonumber(f[7]) > tonumber(f[6]) then
  release(jk, KEYS[6], KEYS[7], KEYS[8], jid, now, 'failed', 'timeout',
    'the job waited too long in the queue to finish within the wait limit; it did not run and nothing was charged; try again',
    tonumber(ARGV[4]), ARGV[8])
  return {'skipped'}
end
local token = redis.call('INCR', KEYS[4])
local function text(n) return string.format('%.0f', n) end
local set = {'state', 'running', 'started', text(now), 'token', text(token), 'worker', ARGV[2],
  'lease_until', text(now + tonumber(ARGV[3])), 'charged', f[8], 'pool', ARGV[10]}
redis.call('HSET', jk, unpack(set))
redis.call('ZADD', KEYS[5], now + tonumber(ARGV[3]), jid)
redis.call('ZADD', KEYS[11], now + tonumber(f[7]), jid)
redis.call('HINCRBY', KEYS[6], 'charged', tonumber(f[8]))
if ARGV[11] == '1' then redis.call('ZREM', KEYS[12], ARGV[2]) end
-- The claimed record as the fields read and written (what the worker needs of it).
local fields = set
for i = 2, #names do
  if f[i] then fields[#fields + 1] = names[i]; fields[#fields + 1] = f[i] end
end
return {'claimed', token, fields, #head / 2 - 1}
