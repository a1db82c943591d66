--[[
  COMPLETE: record the outcome if the job still runs under its claim (a reaped or stopped
  job's worker is refused), then wake the waiters.

  Input:
    KEYS[1] job:<job_id>    the job record
    KEYS[2] queue:running   zset of running job ids by lease expiry
    KEYS[3] budget:<day>    the job's day's counts (the day from the claimed record);
                            this script counts the finished job in queue:fair instead
                            ('done:<day>:<kind>:<state>', keys::fair_day_done), in the
                            write of queue:fair it makes anyway, when it has one
    KEYS[4] queue:handoff:<pool>  the completing slot's pool's idle slots (admit.lua)
    KEYS[5] queue:lane:<lane>   the lanes that pool claims from (a referee slot's: the
    KEYS[6] queue:lane:<lane>   referee lane twice)
    KEYS[7] queue:fair          the lanes' turns and the accounts' waiting counts (claim.lua),
                                and the pools' idle marks (idle.lua)
    KEYS[8] the queue group's base (claim.lua: the next job's keys are named from it)

    ARGV[1] job id             ARGV[5] failure (JSON, '' = none)
    ARGV[2] fencing token      ARGV[6] job ttl, s
    ARGV[3] final state        ARGV[7] the completion channel (done:<job_id>)
    ARGV[4] result (JSON, '' = none)
    ARGV[8] the job's day (KEYS[3] is its budget)
    ARGV[9] the completing slot's id ('' when no slot goes on: then KEYS[4]-[8] are unused)
    ARGV[10] lease, ms            ARGV[11] the completing slot's pool ('general' or 'referee')
    ARGV[12] '1': the slot claims its next job here (claim.lua, with KEYS[4]-[8]); '2': the
             same, but its claim saw nothing else waiting, so queue:fair's count of waiting
             jobs is read first (nothing waits: the slot registers idle without the lanes'
             pops); '': it only looks whether one waits (by that count)
    ARGV[13] claim.lua's ARGV[7] (how long a job's waiter's presence surely lives)
    ARGV[14] '' or the job's kind, from its claim: then ARGV[15] its start, ms, ARGV[16]
             its charge, s, and ARGV[17] its worker, all from the claim, and the record is
             not read (the fence is the job's running entry, below); '': read and checked
    ARGV[18] with ARGV[14]: the message published on ARGV[7] but for its end, which is the
             time it finished (ms) and '}' (record::Finished::prefix); else ''

  Publishes on ARGV[7] the final state as JSON (state, started, finished, charged, worker,
  result and failure as the strings given, '' for none): `horst_queue::record::Finished`.

  Output:
    {3, token, values, more}  recorded, and the slot claimed its next job (claim.lua's
       'claimed' reply: the values of CLAIM_FIELDS, its worker the slot ARGV[9])
    1  recorded (with a slot: jobs may wait in its lanes, it claims the next)
    2  recorded, and nothing waits: the slot ARGV[9] is registered idle, in the same step as
       the look, so the next admission wakes it
    0  refused: the token is stale
]]
local now = now_ms()
local jk = KEYS[1]
local kind, started, charged, worker
local held = (ARGV[14] or '') ~= ''
if held then
  -- The worker holds what its claim recorded, so the record is not read: the job's running
  -- entry is the fence. Every way out of running (this completion, reap.lua, stop.lua)
  -- removes it in the step that ends the job, and a job is claimed once, so while the entry
  -- is there the job runs under its one claim. A job handed to an idle slot (admit.lua) that
  -- the slot never took up is queued again (put_back, helpers.lua) and claimed anew; but no
  -- slot ran it under the first claim: a slot runs a handed job only once it took it up
  -- (deleted its `handed` mark), and a job taken up is never put back. The exception is
  -- a claim lost with a failover and made again on the promoted replica: then the first of
  -- the two runs to complete is recorded and the other refused, as with the token.
  if redis.call('ZREM', KEYS[2], ARGV[1]) == 0 then return 0 end
  kind = ARGV[14]
else
  -- One read of what the check, the counts and the waiters' payload need (never the record).
  local f = rare().job_fields(jk, 'state', 'token', 'day', 'kind', 'started', 'charged', 'worker')
  -- A claim's token is its start (claim_next writes no `token` field; a hand-off does).
  if f[1] ~= 'running' or (f[2] or f[5]) ~= ARGV[2] then return 0 end
  if f[3] ~= ARGV[8] then return redis.error_reply('complete: KEYS[3] is not the budget of the job\'s day') end
  redis.call('ZREM', KEYS[2], ARGV[1])
  kind, started, charged, worker = f[4], tonumber(f[5]), tonumber(f[6]), f[7]
end
-- The clock's text, once for the whole group of completions (helpers.lua).
local finished = now_text()
-- One command for each shape (no table of arguments made and unpacked).
if ARGV[4] == '' and ARGV[5] == '' then
  redis.call('HSET', jk, 'state', ARGV[3], 'finished', finished)
elseif ARGV[5] == '' then
  redis.call('HSET', jk, 'state', ARGV[3], 'finished', finished, 'result', ARGV[4])
elseif ARGV[4] == '' then
  redis.call('HSET', jk, 'state', ARGV[3], 'finished', finished, 'failure', ARGV[5])
else
  redis.call('HSET', jk, 'state', ARGV[3], 'finished', finished, 'result', ARGV[4],
    'failure', ARGV[5])
end
redis.call('EXPIRE', jk, ARGV[6])
-- A failed job is noted for the operator's listing across accounts (a succeeded one is not:
-- no command more for it, nor the key's name). KEYS[8], the group's base, is always given.
if ARGV[3] ~= 'succeeded' then
  rare().note_ended(group_key(KEYS[8], 'queue:ended'), ARGV[1], now, ARGV[3], ARGV[6])
end
-- The final state itself, so a waiter needs no read after its wake-up (Queue::wait).
-- The worker that holds the claim sent the message but for its end (cjson.encode of it here
-- cost about 18,000 instructions).
if ARGV[18] ~= '' then
  redis.call('PUBLISH', ARGV[7], ARGV[18] .. finished .. '}')
else
  if held then
    started, charged, worker = tonumber(ARGV[15]), tonumber(ARGV[16]), ARGV[17]
  end
  redis.call('PUBLISH', ARGV[7], cjson.encode({state = ARGV[3], started = started,
    finished = now, charged = charged, worker = worker, result = ARGV[4],
    failure = ARGV[5]}))
end
-- The finished job's count: without a slot that goes on (nothing else of queue:fair is
-- written) in the day's budget hash, as earlier versions counted it; else in queue:fair,
-- riding on a write of it below (the day's figures add both, day_stats).
local fk = KEYS[7]
local done_f
if kind then
  if ARGV[9] == '' then
    redis.call('HINCRBY', KEYS[3], 'done:' .. kind .. ':' .. ARGV[3], 1)
  else
    done_f = 'done:' .. ARGV[8] .. ':' .. kind .. ':' .. ARGV[3]
  end
end
if ARGV[9] == '' then return 1 end
-- The slot registers idle (idle_after_completion, helpers.lua); a new entry marks its pool
-- as possibly holding an idle slot (queue:fair's 'idle:<pool>', which admission reads before
-- it pops one), in this step.
local mark_f = 'idle:' .. ARGV[11]
if ARGV[12] ~= '1' then
  -- The lanes' count of waiting jobs (kept by every script that adds or removes one, and
  -- set right by each fair sweep) says whether one waits, with the mark and the count in
  -- the same read.
  local f = redis.call('HMGET', fk, 'n', mark_f, done_f or 'n')
  if not done_f then f[3] = nil end
  local none = (f[1] or 0) + 0 <= 0
  if not none and ARGV[12] == '' and KEYS[5] == KEYS[6] then
    -- A referee slot: the count holds the planner lane's jobs too.
    none = redis.call('EXISTS', KEYS[5]) == 0
  end
  if none then
    idle_after_completion(fk, KEYS[4], now, ARGV[2], ARGV[9], mark_f, done_f, f)
    return 2
  end
  if ARGV[12] == '' then
    if done_f then redis.call('HSET', fk, done_f, int((f[3] or 0) + 1)) end
    return 1
  end
end
-- No look first: the claim reads the lanes' heads itself. A busy queue (the claim finds a
-- job) saves the look's command; an idle general slot pays a second lane's ZPOPMIN instead,
-- when Redis has little else to do. The count rides on the claim's write of queue:fair;
-- what the claim did not write with it (no head, or none still queued) comes back.
local next
next, done_f = claim_next(5, 6, 7, 2, 4, 8, done_f, now, ARGV[9], ARGV[10], ARGV[6],
  ARGV[11], 16, '', ARGV[13])
if next[1] == 'empty' then
  -- The heads waiting were dropped on the way (released, or no longer queued), or none was.
  idle_after_completion(fk, KEYS[4], now, ARGV[2], ARGV[9], mark_f, done_f, nil)
  return 2
end
if done_f then redis.call('HINCRBY', fk, done_f, 1) end
if next[1] == 'claimed' then
  -- The claim's own reply, marked as this script's (no table made for a copy of it).
  next[1] = 3
  return next
end
return 1
