--[[
  ADMIT: idempotency, caps, start before the deadline, daily quota, seconds budget, then
  enqueue in the job's lane at its account's turn; one atomic step.

  Input:
    KEYS[1] idem:<account>:<idem_key>   fingerprint|job id of the key's first use
    KEYS[2] waiting:<account>           the account's waiting jobs (counter)
    KEYS[3] queue:lane:<lane>           the job's lane: waiting ids by turn (zset)
    KEYS[4] daily:<day>:<account>       the account's jobs today, by kind (hash)
    KEYS[5] budget:<day>                today's seconds and job counts (hash)
    KEYS[6] job:<job_id>                the new job's record
    KEYS[7] jobs:<account>              zset of the account's jobs by creation
    KEYS[8] callers:<process>           presence of the API process whose caller waits
                                        (refreshed here; only used when ARGV[22] is set)
    KEYS[9] job:<ARGV[21]>              the record the caller found gone (with ARGV[21]
                                        empty: any key of the group, never read)
    KEYS[10] queue:lane:<other lane>    the other lane (the waiting places are shared)
    KEYS[11] queue:turns:<lane>         the lane's turns: 'round' (of the last claim),
                                        'seq', and 'a:<account>' (its last job's round)
    KEYS[12] queue:slots                live workers' slots: id -> 'general referee until_ms'
    KEYS[13] queue:ends:general         running jobs on general slots, by latest end (zset)
    KEYS[14] queue:ends:referee         running jobs on referee slots, likewise
    KEYS[15] queue:owed:<lane>          accounts refused for want of room, by the time they
                                        were told to come back (zset): their turn is kept

    ARGV[1] clock offset, ms           ARGV[11] per-account waiting cap
    ARGV[2] <day> the keys are for     ARGV[12] global waiting cap
    ARGV[3] job id                     ARGV[13] the kind's daily limit
    ARGV[4] account                    ARGV[14] daily seconds
    ARGV[5] trust                      ARGV[15] trust-0 share, s
    ARGV[6] kind                       ARGV[16] idempotency record ttl, s
    ARGV[7] idempotency key            ARGV[17] the caller's wait, ms
    ARGV[8] fingerprint of the input   ARGV[18] execution time, ms
    ARGV[9] input (JSON)               ARGV[19] retention of jobs:<account>, ms
    ARGV[10] reserved seconds          ARGV[20] channel for the wake-up (queue:new)
    ARGV[21] '' or a job id whose record the caller found gone: its idempotency record
             no longer answers (the job record expired before the key did)
    ARGV[22] '' or the id of the API process whose caller waits for the job: if that
             process's presence (KEYS[8]) expires while the job is queued, the job is
             dropped (cancel.lua)
    ARGV[23] the presence's time to live, s
    ARGV[24] the job's lane: 'planner' or 'referee'
    ARGV[25] waiting places only referee work may take
    ARGV[26] a slot's slack between two jobs, ms (claim, completion, the worker's margin)
    ARGV[27] '' or the id of the HTTP request that admits the job (X-Request-Id), for logs
    ARGV[28] how long past its retry time an owed turn is kept, ms

  Output:
    {'new', job_id, fields}        queued (fields: the record, as HGETALL gives it)
    {'replayed', job_id}           the key was used with the same input: read job_id
    {'conflict', job_id}           the key was used with other input
    {'busy', 'account'|'global'|'reserved', retry_after_s}
    {'busy', 'late', retry_after_s, jobs_ahead}   no slot frees in time for the job to finish
                                   within the caller's wait; retry_after_s is when it would
    {'quota', 'owner'|'global'|'global_new', to_midnight_s}
    {'day', day}                   ARGV[2] is not today on the server clock: call again with
                                   the keys of `day`

  Cluster note: the day is part of two keys and only the server clock knows it; the caller
  passes its guess and the script checks it (a wrong guess writes nothing). The recorded job
  of a replay is read by the caller in a second step, so its key is never touched here.
  KEYS[8] names the calling process, which the caller knows without reading; it shares the
  queue group's slot (ARCHITECTURE.md, "Lua scripts, keys and hash slots") with the rest.
  KEYS[9] is named by what the caller read in its first step (the replayed job's id).
  KEYS[10]-[14] are fixed names of the queue group.
]]
local jid, account, trust, kind = ARGV[3], ARGV[4], ARGV[5], ARGV[6]
local fp, input = ARGV[8], ARGV[9]
local reserve = tonumber(ARGV[10])
local now = now_ms()
local day = day_of(now)
if tostring(day) ~= ARGV[2] then return {'day', day} end

local rec = redis.call('GET', KEYS[1])
if rec then
  local sep = string.find(rec, '|', 1, true)
  local old_fp, old_jid = string.sub(rec, 1, sep - 1), string.sub(rec, sep + 1)
  if old_fp ~= fp then return {'conflict', old_jid} end
  if old_jid ~= ARGV[21] then return {'replayed', old_jid} end
  -- The caller found the record gone. Believe it only if it really is: a read that came
  -- back empty for any other reason must never start a second job under one key.
  if redis.call('EXISTS', KEYS[9]) == 1 then return {'replayed', old_jid} end
  -- The job record expired before its key did: treat the key as new.
end

local retry = math.max(1, math.ceil(tonumber(ARGV[18]) / 1000))
local mine = tonumber(redis.call('GET', KEYS[2])) or 0
if mine >= tonumber(ARGV[11]) then
  return {'busy', 'account', retry}
end

-- Owed turns. An account refused for want of room is told when to come back; until then
-- (and a grace after) its turn is kept: it counts as one job ahead of every account that
-- was not refused, or was told to come back later. Without this, an account whose job just
-- ended calls again at once and takes the place before the refused ones return, and a few
-- accounts keep the workers while the rest never get a turn. An account that does not come
-- back stops holding a place once the grace has passed.
-- Only reads until the first write that may grow memory: Redis refuses a script at maxmemory
-- only at that first write (one that frees memory before it would let the rest through).
local owed = KEYS[15]
local kept_since = now - tonumber(ARGV[28])
local promised = tonumber(redis.call('ZSCORE', owed, account))
local owed_ahead
if promised and promised >= kept_since then
  owed_ahead = redis.call('ZCOUNT', owed, kept_since, '(' .. promised)
else
  owed_ahead = redis.call('ZCOUNT', owed, kept_since, '+inf')
end
local function forget_stale()
  redis.call('ZREMRANGEBYSCORE', owed, '-inf', '(' .. kept_since)
end
-- Dead workers' slots are dropped from queue:slots only after a write that may grow memory,
-- for the same reason (an HDEL first would let an admission past maxmemory).
local dead = {}
local function forget_dead()
  if #dead > 0 then redis.call('HDEL', KEYS[12], unpack(dead)) end
end
local function refuse(cap, retry_s, ahead)
  redis.call('ZADD', owed, now + retry_s * 1000, account)
  forget_stale()
  forget_dead()
  local keep = retry_s * 1000 + tonumber(ARGV[28])
  if redis.call('PTTL', owed) < keep then redis.call('PEXPIRE', owed, keep) end
  if ahead then return {'busy', cap, retry_s, ahead} end
  return {'busy', cap, retry_s}
end

local lane = KEYS[3]
local waiting = redis.call('ZCARD', lane) + redis.call('ZCARD', KEYS[10])
if waiting >= tonumber(ARGV[12]) then
  return refuse('global', retry)
end
if ARGV[24] == 'planner' and waiting >= tonumber(ARGV[12]) - tonumber(ARGV[25]) then
  return refuse('reserved', retry)
end

-- The account's turn: one round after the lane's last claimed one, and after its own last
-- waiting job, so accounts with waiting jobs take turns (and arrival order within a round).
-- With none waiting (a dropped job leaves its entry behind) its entry does not count.
local tk = KEYS[11]
local t = redis.call('HMGET', tk, 'round', 'a:' .. account, 'seq')
local last = 0
if mine > 0 then last = tonumber(t[2]) or 0 end
local round = math.max(tonumber(t[1]) or 0, last) + 1
local seq = ((tonumber(t[3]) or 0) + 1) % TURN_SPAN
-- As text: Lua 5.1 would print a large number with 14 digits only.
local score = string.format('%.0f', round * TURN_SPAN + seq)

-- Would it start in time? The slots serving the lane (referee slots for referee work when
-- any live, else the general ones) free at their running jobs' latest ends, then every job
-- ahead of it in the lane takes the first free slot for its whole limit. Without any live
-- worker nothing is known: the job waits (and claim.lua times it out if it must).
local exec, slack = tonumber(ARGV[18]), tonumber(ARGV[26])
local general, referee = 0, 0
local slots = redis.call('HGETALL', KEYS[12])
for i = 1, #slots, 2 do
  local g, r, live = string.match(slots[i + 1], '^(%d+) (%d+) (%d+)$')
  if g and tonumber(live) > now then
    general, referee = general + tonumber(g), referee + tonumber(r)
  else
    dead[#dead + 1] = slots[i]
  end
end
local cap, ends = general, KEYS[13]
if ARGV[24] == 'referee' and referee > 0 then cap, ends = referee, KEYS[14] end
if cap > 0 then
  local free = {}
  local running = redis.call('ZRANGE', ends, 0, -1, 'WITHSCORES')
  for i = 2, #running, 2 do free[#free + 1] = math.max(now, tonumber(running[i]) + slack) end
  table.sort(free)
  while #free > cap do table.remove(free) end
  while #free < cap do table.insert(free, 1, now) end
  local ahead = redis.call('ZCOUNT', lane, '-inf', '(' .. score) + owed_ahead
  for _ = 1, ahead do
    free[1] = free[1] + exec + slack
    table.sort(free)
  end
  local late = free[1] + exec + slack - (now + tonumber(ARGV[17]))
  if late > 0 then return refuse('late', math.max(1, math.ceil(late / 1000)), ahead) end
end

local dk, bk = KEYS[4], KEYS[5]
if (tonumber(redis.call('HGET', dk, kind)) or 0) >= tonumber(ARGV[13]) then
  return {'quota', 'owner', to_midnight_s(now)}
end
if (tonumber(redis.call('HGET', bk, 'used')) or 0) + reserve > tonumber(ARGV[14]) then
  return {'quota', 'global', to_midnight_s(now)}
end
if trust == '0' and (tonumber(redis.call('HGET', bk, 'trust0')) or 0) + reserve > tonumber(ARGV[15]) then
  return {'quota', 'global_new', to_midnight_s(now)}
end

redis.call('HINCRBY', dk, kind, 1)
redis.call('EXPIRE', dk, COUNTER_TTL)
redis.call('HINCRBY', bk, 'used', reserve)
if trust == '0' then redis.call('HINCRBY', bk, 'trust0', reserve) end
redis.call('HINCRBY', bk, 'jobs:' .. kind, 1)
redis.call('EXPIRE', bk, COUNTER_TTL)

local jk = KEYS[6]
redis.call('HSET', jk, 'id', jid, 'kind', kind, 'account', account, 'trust', trust,
  'state', 'queued', 'fp', fp, 'idem', ARGV[7], 'input', input, 'created', now,
  'deadline', now + tonumber(ARGV[17]), 'exec_ms', ARGV[18], 'reserved', reserve,
  'charged', 0, 'day', day, 'waiter', ARGV[22], 'request', ARGV[27] or '')
if ARGV[22] ~= '' then redis.call('SET', KEYS[8], '1', 'EX', tonumber(ARGV[23])) end
redis.call('SET', KEYS[1], fp .. '|' .. jid, 'EX', tonumber(ARGV[16]))
redis.call('INCR', KEYS[2])
redis.call('ZADD', lane, score, jid)
redis.call('ZREM', owed, account)
forget_stale()
forget_dead()
redis.call('HSET', tk, 'a:' .. account, round, 'seq', seq)
redis.call('ZADD', KEYS[7], now, jid)
redis.call('ZREMRANGEBYSCORE', KEYS[7], '-inf', now - tonumber(ARGV[19]))
-- An account that stops using the gateway leaves no index behind.
redis.call('PEXPIRE', KEYS[7], tonumber(ARGV[19]))
redis.call('PUBLISH', ARGV[20], jid)
return {'new', jid, redis.call('HGETALL', jk)}
