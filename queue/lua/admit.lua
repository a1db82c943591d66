--[[
  ADMIT: idempotency, caps, start before the deadline, daily quota, seconds budget, then
  enqueue in the job's lane at its account's turn; one atomic step.

  Input:
    KEYS[1] idem:<account>:<idem_key>   fingerprint|job id of the key's first use
    KEYS[2] queue:fair                  the lanes' turns, the accounts' waiting counts and
                                        the jobs waiting in both lanes (keys.rs): read once
                                        (a hand-off reads the day's charge again),
                                        written once
    KEYS[3] queue:lane:<lane>           the job's lane: waiting ids by turn (zset)
    KEYS[4] budget:<day>                today's seconds and job counts (hash), and each
                                        account's: 'd:<account>:<kind>' (its jobs of the
                                        kind) and 'd:<account>:bytes' (input kept)
    KEYS[5] job:<job_id>                the new job's record
    KEYS[6] jobs:<account>              zset of the account's jobs by creation
    KEYS[7] callers:<process>           presence of the API process whose caller waits
                                        (refreshed here; only used when ARGV[21] is set)
    KEYS[8] job:<ARGV[20]>              the record the caller found gone (with ARGV[20]
                                        empty: any key of the group, never read)
    KEYS[9] queue:slots                live workers' slots: id -> 'general referee until_ms'
                                        (read only when queue:fair's 'cap', their sum, is
                                        missing or past its time)
    KEYS[10] queue:running              running job ids (by lease): their records give their
                                        slots' pool and latest end (read only when the bound
                                        from queue:fair's 'end:<pool>' is not in time)
    KEYS[11] the queue group's base     the running jobs' records are named from it
    KEYS[12] queue:owed:<lane>          accounts refused for want of room, by the time they
                                        were told to come back (zset): their turn is kept
    KEYS[13] blob:<sha256>              the job's inputs kept once (queue/src/inputs.rs),
    KEYS[14] blob:<sha256>              written by the caller just before (SET NX PX); only
                                        the first ARGV[31] are used (the rest: any key of
                                        the group, never read)
    KEYS[15] queue:handoff:general      idle slots by when they last said so (zset): one is
    KEYS[16] queue:handoff:referee      popped (referee work: a referee slot first), unless
                                        queue:fair's 'idle:<pool>' mark says none is, and
                                        handed the job or woken (below)

    ARGV[1] <day> the keys are for     ARGV[11] global waiting cap
    ARGV[2] job id                     ARGV[12] the kind's daily limit
    ARGV[3] account                    ARGV[13] daily seconds
    ARGV[4] trust                      ARGV[14] trust-0 share, s
    ARGV[5] kind                       ARGV[15] idempotency record ttl, s
    ARGV[6] the packed record's first  ARGV[16] the caller's wait, ms
            part (below)
    ARGV[7] fingerprint of the input   ARGV[17] execution time, ms
    ARGV[8] its second part            ARGV[18] retention of jobs:<account>, ms
    ARGV[9] reserved seconds           ARGV[19] the wake-up channels' prefix (queue:new):
                                                the woken slot's is ARGV[19]:<slot>
    ARGV[10] per-account waiting cap
    ARGV[20] '' or a job id whose record the caller found gone: its idempotency record
             no longer answers (the job record expired before the key did)
    ARGV[21] '' or the id of the API process whose caller waits for the job: if that
             process's presence (KEYS[7]) expires while the job is queued, the job is
             dropped (cancel.lua)
    ARGV[22] the presence's time to live, s (0: the process refreshed it just now, the
             script leaves it)
    ARGV[23] the job's lane: 'planner' or 'referee'
    ARGV[24] waiting places only referee work may take
    ARGV[25] a slot's slack between two jobs, ms (claim, completion, the worker's margin)
    ARGV[26] the packed record's third part. The record's values (helpers.lua's PACKED_AT:
             account, day, idempotency key, waiter, deadline, execution time, reserved
             seconds, id, kind, trust, input (JSON), created, the id of the HTTP request that
             admits it (X-Request-Id, or ''), fingerprint) as cmsgpack packs them, one string
             after another, but for the deadline and the creation, which this script knows:
             ARGV[6] is the first four packed, ARGV[8] the 6th to 11th, ARGV[26] the last two
             (horst_queue's record::packed_parts)
    ARGV[27] how long past its retry time an owed turn is kept, ms
    ARGV[28] how long the job's record may live, at the latest, from now, ms: the blobs
             are kept to the end of the UTC day this ends in
    ARGV[29] bytes of kept input an account may add per day
    ARGV[30] bytes of kept input the server may add per day
    ARGV[31] how many of KEYS[13], KEYS[14] are the job's blobs (0 to 2)
    ARGV[32] lease, ms (a handed job's, as claim.lua's ARGV[2])
    ARGV[33] how recent a popped idle slot's entry must be for the job to be handed to it,
             ms (its worker refreshes it every second while the slot waits)
    ARGV[34] the latest server time (ms) this call may run at, or 0 for no bound: the
             caller stops waiting for the answer then. Past it the call takes nothing and
             answers 'late' (below)
    ARGV[35] '1': write the record in the previous release's form, every field by name
             (`queue.write_previous_forms`, for a rolling upgrade: that release's claim,
             reap and readers read only names); '': the fields written once (id, kind,
             account, trust, fp, idem, input, created, deadline, exec_ms, reserved, day,
             waiter, request) packed into one, `p` (helpers.lua's PACKED_AT), which every
             reader of this release reads, as it reads the named form

  Handing: when nothing waits in the lanes (so no job is passed over) and the idle slot
  popped refreshed its entry within ARGV[33], the job is claimed for that slot here, as
  claim.lua would claim it (state running, its token the claim's time, its lease, the
  reservation becomes its charge, the lane's round and the day's charge in queue:fair's
  write): it never enters a lane, and the wake-up on the slot's channel carries the claim
  (`claim|<token>` and then each of CLAIM_FIELDS' values as `|<bytes>|<value>`;
  horst_queue's scripts::handed_claim), so the slot runs no claim script. The record is
  marked `handed` until the slot takes the job up: its worker deletes the mark (HDEL, one
  command) before it runs the job, and runs it only if the mark was there. A slot that
  misses the message finds the job at its next idle refresh (idle.lua, held_claim, which
  takes it up in the same step). A job whose mark is still there when its lease expires
  (reap.lua), or when `horst up` ends its dead worker child's jobs (stop.lua), was taken up
  by nobody (the slot's worker died, or stalled, between its idle refresh and this
  hand-off): it goes back to the front of its lane, uncharged (put_back, helpers.lua), and
  another slot claims it under a new token. An older entry (a worker that may have died,
  or lost its subscription) is only woken with the job's id, and the job waits in its lane
  for any slot, as before.

  Output:
    {'new', job_id, created_ms}    queued at created_ms (the caller knows the rest of the
                                   record: it is what it sent)
    {'replayed', job_id}           the key was used with the same input: read job_id
    {'conflict', job_id}           the key was used with other input
    {'busy', 'account'|'global'|'reserved', retry_after_s}
    {'busy', 'late', retry_after_s, jobs_ahead}   no slot frees in time for the job to finish
                                   within the caller's wait; retry_after_s is when it would
    {'quota', 'owner'|'global'|'global_new', to_midnight_s}
    {'quota', 'input_bytes'|'global_input_bytes', to_midnight_s}   ARGV[29] or [30] is used up
    {'inputs'}                     a blob of KEYS[13], KEYS[14] is gone (it expired before
                                   this admission adopted it): write it again and call again
    {'day', day}                   ARGV[1] is not today on the server clock: call again with
                                   the keys of `day`
    {'late', now}                  the server's time is past ARGV[34]: the caller has given up
                                   on this call (a partition held it and delivered it when it
                                   healed) and was told the store could not be reached, so
                                   nothing is taken; a caller still waiting (its bound was on a
                                   stale estimate of this clock) calls again with a new one

  Cluster note: the day is part of a key (budget:<day>) and only the server clock knows it;
  the caller passes its guess and the script checks it (a wrong guess writes nothing). The recorded job
  of a replay is read by the caller in a second step, so its key is never touched here.
  KEYS[7] names the calling process, which the caller knows without reading; it shares the
  queue group's slot (ARCHITECTURE.md, "Lua scripts, keys and hash slots") with the rest.
  KEYS[8] is named by what the caller read in its first step (the replayed job's id).
  KEYS[9]-[11] are fixed names of the queue group, and the running jobs' records are named
  from KEYS[11] in its hash slot (group_key, as in claim.lua). KEYS[13] and KEYS[14] are named by the
  input's bytes, which the caller has.
]]
local jid, account, trust, kind = ARGV[2], ARGV[3], ARGV[4], ARGV[5]
local fp = ARGV[7]
local reserve = (ARGV[9] + 0)
local now = now_ms()
-- Run after its caller gave up: the caller was told the admission failed (and its drop of
-- the job, Queue::drop_unclear, may have been held up with it), so a job queued now would
-- run and be charged for a caller that may never ask again.
if ARGV[34] ~= '0' and now > ARGV[34] + 0 then return {'late', now} end
local day = day_of(now)
if day ~= ARGV[1] + 0 then return {'day', day} end

-- The key's first use is taken and its earlier use read in one command. A refusal below gives
-- the key back (give_back, helpers.lua), so only an admitted job keeps it. At
-- maxmemory Redis refuses the SET before it looks (it may grow memory): then the key is only
-- read, as a replay needs no room, and the admission's first write fails as it would anyway.
local idem_taken = true
local rec = redis.pcall('SET', KEYS[1], fp .. '|' .. jid, 'NX', 'GET', 'EX', ARGV[15])
if type(rec) == 'table' and rec.err then
  idem_taken = false
  rec = redis.call('GET', KEYS[1])
end
if rec then
  idem_taken = false
  local sep = string.find(rec, '|', 1, true)
  local old_fp, old_jid = string.sub(rec, 1, sep - 1), string.sub(rec, sep + 1)
  if old_fp ~= fp then return {'conflict', old_jid} end
  if old_jid ~= ARGV[20] then return {'replayed', old_jid} end
  -- The caller found the record gone. Believe it only if it really is: a read that came
  -- back empty for any other reason must never start a second job under one key.
  if redis.call('EXISTS', KEYS[8]) == 1 then return {'replayed', old_jid} end
  -- The job record expired before its key did: treat the key as new.
end

-- Everything after the key's first use runs in the script's own body, with no function made
-- for it: every refusal returns through give_back (helpers.lua), which gives the key back.
-- (A `decide` function around it and five functions made inside it, closures over some
-- twenty locals, cost about 12,000 instructions an admission: Redis makes every closure of
-- the text again on each call.) A refusal's retry: the job's limit in whole seconds, at
-- least 1 (made only when refused).

-- queue:fair in one read: the lane's round and sequence, the account's last round in the
-- lane and its waiting jobs, how late the lane's owed turns run, and the jobs waiting in
-- both lanes (the lanes' ZCARDs, kept by every script that adds or removes one).
-- Each field read costs about 1,300 instructions (its name made a Redis string, its value a
-- Lua one): the day's charge, which only a hand-off writes, is read by that path alone.
local fk, ln = KEYS[2], ARGV[23]
local mine_f, wf, owed_f = 'a:' .. ln .. ':' .. account, 'w:' .. account, 'owed:' .. ln
local seq_f = 'seq:' .. ln
local t = redis.call('HMGET', fk, 'round:' .. ln, mine_f, seq_f, wf, owed_f, 'n', 'cap',
  'end:general', 'end:referee', 'idle:general', 'idle:referee')
local mine = (t[4] or 0) + 0
if mine >= (ARGV[10] + 0) then
  return give_back(idem_taken, KEYS[1],
    {'busy', 'account', math.max(1, math.ceil((ARGV[17] + 0) / 1000))})
end

-- Owed turns. An account refused for want of room is told when to come back; until then
-- (and a grace after) its turn is kept: it counts as one job ahead of every account that
-- was not refused, or was told to come back later. Without this, an account whose job just
-- ended calls again at once and takes the place before the refused ones return, and a few
-- accounts keep the workers while the rest never get a turn. An account that does not come
-- back stops holding a place once the grace has passed.
-- Only reads until the first write that may grow memory: Redis refuses a script at maxmemory
-- only at that first write (one that frees memory before it would let the rest through).
-- A refusal for want of room (admit_refuse, helpers.lua) keeps the account's turn, forgets
-- the stale turns and the dead workers' slots (only after a write that may grow memory,
-- for the same reason: an HDEL first would let an admission past maxmemory) and keeps what
-- the start-in-time check read afresh, as the admission's own write of queue:fair does.
local owed = KEYS[12]
local kept_since = now - (ARGV[27] + 0)
-- The turns still kept, in one read (few: accounts refused in the last seconds). None can be
-- when the latest time any was promised for (queue:fair's owed:<lane>, moved by every
-- refusal) is past: the common case costs no read. No field: not known (the lane's owed
-- turns of a version before it), so read.
local owed_until = tonumber(t[5])
local kept = NO_ENTRIES
if not owed_until or owed_until >= kept_since then
  kept = redis.call('ZRANGE', owed, kept_since, '+inf', 'BYSCORE', 'WITHSCORES')
end
local promised
for i = 1, #kept, 2 do
  if kept[i] == account then promised = tonumber(kept[i + 1]) end
end
local owed_ahead = #kept / 2
if promised then
  owed_ahead = 0
  for i = 2, #kept, 2 do
    if tonumber(kept[i]) < promised then owed_ahead = owed_ahead + 1 end
  end
end

local lane = KEYS[3]
local waiting, global_cap = (t[6] or 0) + 0, ARGV[11] + 0
if waiting >= global_cap or
  (ARGV[23] == 'planner' and waiting >= global_cap - (ARGV[24] + 0)) then
  local cap = 'global'
  if waiting < global_cap then cap = 'reserved' end
  return give_back(idem_taken, KEYS[1], admit_refuse(owed, fk, owed_f, owed_until, kept, now,
    kept_since, account, ARGV[27] + 0, KEYS[9], nil, nil, nil, nil, cap,
    math.max(1, math.ceil((ARGV[17] + 0) / 1000))))
end

-- The account's turn: one round after the lane's last claimed one, and after its own last
-- waiting job, so accounts with waiting jobs take turns (and arrival order within a round).
-- With none waiting (a dropped job leaves its entry behind) its entry does not count.
local last = 0
if mine > 0 then last = (t[2] or 0) + 0 end
local round = math.max((t[1] or 0) + 0, last) + 1
local seq = (((t[3] or 0) + 0) + 1) % TURN_SPAN
-- As text: Lua 5.1 would print a large number with 14 digits only.
local score = int(round * TURN_SPAN + seq)

-- Would it start in time? The slots serving the lane (referee slots for referee work when
-- any live, else the general ones) free at their running jobs' latest ends, then every job
-- ahead of it in the lane takes the first free slot for its whole limit. Without any live
-- worker nothing is known: the job waits (and claim.lua times it out if it must).
-- The live slots are summed in queue:fair's 'cap' ('general referee valid_until'), so most
-- admissions read no queue:slots: the sum holds until the first live worker's announcement
-- lapses (a worker that dies is counted no longer than that), and every announcement or
-- retirement drops it (Queue::announce_slots), so a new worker counts at once.
local exec, slack, wait_ms = (ARGV[17] + 0), (ARGV[25] + 0), (ARGV[16] + 0)
local general, referee
-- What the check read afresh (the live slots' sum, the pool's latest end), kept in
-- queue:fair by the write that ends the script, a refusal's too: under a flood of refusals
-- each would read them again otherwise. And the dead workers' slots to forget.
local fresh_cap, fresh_end, dead
do
  local g, r, u = string.match(t[7] or '', '^(%d+) (%d+) (%d+)$')
  if g and u + 0 > now then general, referee = g + 0, r + 0 end
end
if not general then
  general, referee = 0, 0
  dead = {}
  local soonest
  local slots = redis.call('HGETALL', KEYS[9])
  for i = 1, #slots, 2 do
    local g, r, live = string.match(slots[i + 1], '^(%d+) (%d+) (%d+)$')
    if g and tonumber(live) > now then
      general, referee = general + tonumber(g), referee + tonumber(r)
      soonest = math.min(soonest or math.huge, tonumber(live))
    else
      dead[#dead + 1] = slots[i]
    end
  end
  -- No live worker: looked at again within a second (an announcement drops it anyway).
  fresh_cap = general .. ' ' .. referee .. ' ' .. int(soonest or now + 1000)
end
local pool, latest = 'general', t[8]
local cap = general
if ARGV[23] == 'referee' and referee > 0 then pool, cap, latest = 'referee', referee, t[9] end
local end_f = 'end:' .. pool
if cap > 0 then
  local d, wait_until = exec + slack, now + wait_ms
  -- queue:fair's 'end:<pool>' is at least the latest end of every job running on the pool's
  -- slots (claims raise it; it is set below from the ends themselves when it is missing or
  -- the bound does not hold). With
  -- every slot free by then, the job with `ahead` before it finishes by
  -- free + (floor(ahead / cap) + 1) * d, and the model below can only be earlier: when that
  -- bound is in time, as it mostly is, the ends need not be read.
  local bound = latest and math.max(now, tonumber(latest) + slack)
    + (math.floor((waiting + owed_ahead) / cap) + 1) * d
  if not bound or bound > wait_until then
    -- The running jobs' latest ends, from their records (started + limit), those on the
    -- pool's slots (a record claimed before 'pool' was kept: either pool; one without its
    -- start or limit, which no script writes: busy for a whole limit from now).
    local free = {}
    local last = 0
    for _, id in ipairs(redis.call('ZRANGE', KEYS[10], 0, -1)) do
      -- Its limit from the packed record (helpers.lua's PACKED_AT: the 6th) when it has one.
      local r = redis.call('HMGET', group_key(KEYS[11], 'job:', id), 'state', 'started',
        'exec_ms', 'pool', 'p')
      if r[5] and not r[3] then r[3] = select(6, cmsgpack.unpack(r[5])) end
      if r[1] == 'running' and (r[4] or pool) == pool then
        local started, limit = tonumber(r[2]), tonumber(r[3])
        local e = now + exec
        if started and limit then e = started + limit end
        free[#free + 1] = math.max(now, e + slack)
        if e > last then last = e end
      end
    end
    -- Every job running on the pool was read, so the exact latest end replaces the kept one,
    -- lower too (a stopped long job no longer keeps admissions on this path).
    if last ~= tonumber(latest) then fresh_end = int(last) end
    table.sort(free)
    while #free > cap do table.remove(free) end
    while #free < cap do table.insert(free, 1, now) end
    -- How late the job would finish with `ahead` jobs before it: each takes the slot that
    -- frees first, for its whole limit d. Once the slots' free times lie within d of each
    -- other, that is round robin (the slot just taken frees last again), so only the first
    -- steps are played out and the rest is counted: the cost does not grow with the queue.
    -- (A function made only on this path, which reads the running jobs anyway.)
    local function late_with(ahead)
      local at, n, left = {unpack(free)}, #free, ahead
      while left > 0 and at[n] - at[1] > d do
        -- The first slot takes a job and frees at x: `at` stays sorted.
        local x, j = at[1] + d, 1
        while j < n and at[j + 1] < x do
          at[j] = at[j + 1]
          j = j + 1
        end
        at[j] = x
        left = left - 1
      end
      return at[left % n + 1] + math.floor(left / n) * d + d - wait_until
    end
    -- Every waiting job (of either lane) ahead of it at most: in time even so (the common
    -- case, with the slots not all busy), the exact count is not needed.
    if late_with(waiting + owed_ahead) > 0 then
      local ahead = redis.call('ZCOUNT', lane, '-inf', '(' .. score) + owed_ahead
      local late = late_with(ahead)
      if late > 0 then
        return give_back(idem_taken, KEYS[1], admit_refuse(owed, fk, owed_f, owed_until, kept,
          now, kept_since, account, ARGV[27] + 0, KEYS[9], dead, fresh_cap, end_f, fresh_end,
          'late', math.max(1, math.ceil(late / 1000)), ahead))
      end
    end
  end
end

-- The day's figures and the account's in one read and (below) one write. The kept input's
-- bytes (the day's and the account's) are read only when this job's blobs add some.
local bk = KEYS[4]
local d_kind, jobs_f = 'd:' .. account .. ':' .. kind, 'jobs:' .. kind
local b = redis.call('HMGET', bk, 'used', 'trust0', jobs_f, d_kind)
local mine_today = (b[4] or 0) + 0
if mine_today >= (ARGV[12] + 0) then
  return give_back(idem_taken, KEYS[1], {'quota', 'owner', to_midnight_s(now)})
end
local used, trust0 = (b[1] or 0) + 0, (b[2] or 0) + 0
if used + reserve > (ARGV[13] + 0) then
  return give_back(idem_taken, KEYS[1], {'quota', 'global', to_midnight_s(now)})
end
if trust == '0' and trust0 + reserve > (ARGV[14] + 0) then
  return give_back(idem_taken, KEYS[1], {'quota', 'global_new', to_midnight_s(now)})
end

-- Inputs kept once (queue/src/inputs.rs): every blob must still be there; one whose expiry
-- ends before the end of the day in which this job's record expires at the latest is
-- extended to it and its bytes count today (one extended to this day's end already differs
-- from it by a millisecond's rounding at most; any other is a day short or more).
local blobs = ARGV[31] + 0
local keep_ms, extend, added = 0, NO_ENTRIES, 0
if blobs > 0 then
  keep_ms = (day_of(now + (ARGV[28] + 0)) + 1) * DAY_MS - now
  extend = {}
  for i = 13, 12 + blobs do
    local ttl = redis.call('PTTL', KEYS[i])
    if ttl == -2 then return give_back(idem_taken, KEYS[1], {'inputs'}) end
    if ttl < keep_ms - 1000 then
      extend[#extend + 1] = KEYS[i]
      added = added + redis.call('STRLEN', KEYS[i])
    end
  end
end
local d_bytes, bytes
if added > 0 then
  d_bytes = 'd:' .. account .. ':bytes'
  bytes = redis.call('HMGET', bk, 'bytes', d_bytes)
  if ((bytes[2] or 0) + 0) + added > (ARGV[29] + 0) then
    return give_back(idem_taken, KEYS[1], {'quota', 'input_bytes', to_midnight_s(now)})
  end
  if ((bytes[1] or 0) + 0) + added > (ARGV[30] + 0) then
    return give_back(idem_taken, KEYS[1], {'quota', 'global_input_bytes', to_midnight_s(now)})
  end
end

-- The first write (Redis refuses it at maxmemory, before anything else is written): the
-- day's counts and the account's. The hash's expiry is set when it is made (the day's first
-- job), not on every job.
local first_today = mine_today == 0
local day_set = {'HSET', bk, 'used', int(used + reserve), jobs_f,
  int(((b[3] or 0) + 0) + 1), d_kind, int(mine_today + 1)}
if not b[1] then
  day_set[#day_set + 1] = HASH_TABLE_FIELD
  day_set[#day_set + 1] = HASH_TABLE_VALUE
end
if trust == '0' then
  day_set[#day_set + 1] = 'trust0'
  day_set[#day_set + 1] = int(trust0 + reserve)
end
if added > 0 then
  day_set[#day_set + 1] = 'bytes'
  day_set[#day_set + 1] = int(((bytes[1] or 0) + 0) + added)
  day_set[#day_set + 1] = d_bytes
  day_set[#day_set + 1] = int(((bytes[2] or 0) + 0) + added)
end
redis.call(unpack(day_set))
if not b[1] then redis.call('EXPIRE', bk, COUNTER_TTL) end
for _, blob in ipairs(extend) do redis.call('PEXPIRE', blob, keep_ms) end

local jk = KEYS[5]
-- The clock's text, once for the whole group of admissions (helpers.lua).
local created = now_text()
-- One idle slot is popped, in whichever process it is: the cost of an admission does not
-- grow with the workers. Referee work takes a referee slot first (general slots stay free
-- for playtests). A pool whose idle mark (queue:fair's 'idle:<pool>') is '0' has none: an
-- admission found its idle slots empty, and every registration since would have set the
-- mark in its own step (idle.lua, complete.lua). So with every slot busy, as under load,
-- no pop is made; a pop that finds none sets the mark, in the write of queue:fair.
local woken, wpool, none_referee, none_general = nil, 'general', false, false
if ARGV[23] == 'referee' and referee > 0 and t[11] ~= '0' then
  local w = redis.call('ZPOPMAX', KEYS[16])
  if #w == 0 then none_referee = true else woken, wpool = w, 'referee' end
end
if not woken and t[10] ~= '0' then
  local w = redis.call('ZPOPMAX', KEYS[15])
  if #w == 0 then none_general = true else woken = w end
end
-- Handed to the slot popped (the header): only with nothing waiting in the lanes (no job is
-- passed over), to a slot that said it was idle just now, and a job that can finish within
-- its caller's wait (else claim.lua would time it out: it waits in its lane for that).
local handed = woken and waiting == 0 and woken[2] + 0 >= now - ARGV[33]
  and exec <= wait_ms
-- queue:fair's one write: a queued job's turn, the lane's sequence, the account's and the
-- lanes' waiting counts (made with the table, which then needs no growing), and what else
-- this admission found: the lane's owed turns known to be none kept, the first time that is
-- found; what the start-in-time check read afresh; the pools found without an idle slot.
local fair
if handed then
  fair = {'HSET', fk}
else
  fair = {'HSET', fk, mine_f, int(round), seq_f, int(seq), wf, int(mine + 1),
    'n', int(waiting + 1)}
end
if not owed_until and #kept == 0 then
  fair[#fair + 1] = owed_f
  fair[#fair + 1] = '0'
end
keep_fresh(fair, fresh_cap, end_f, fresh_end)
if not t[6] then
  fair[#fair + 1] = HASH_TABLE_FIELD
  fair[#fair + 1] = HASH_TABLE_VALUE
end
if none_referee then
  fair[#fair + 1] = 'idle:referee'
  fair[#fair + 1] = '0'
end
if none_general then
  fair[#fair + 1] = 'idle:general'
  fair[#fair + 1] = '0'
end
-- The record is a hash table from its first write (HASH_TABLE_FIELD, as queue:fair's and
-- the day's hashes). Its completion writes a value over 64 bytes (the result, a failure), so
-- Redis would convert it then anyway; kept as a listpack until then, each field its claim and
-- completion read or write was a scan of the list, and the conversion copied every field:
-- about 56,000 instructions a job more (callgrind). A value over 64 bytes converts it
-- already (the packed fields, with the fingerprint's 64 alone; or the input): then the pair
-- is the id again (the previous form), or left out (the packed one).
local deadline = int(now + wait_ms)
-- The fields written once, packed (helpers.lua's PACKED_AT, in its order): the caller packed
-- them but for the two clock texts only this script knows, the deadline and the creation
-- (ARGV[6], ARGV[8], ARGV[26]: the parts before, between and after them), and each text goes
-- in with its header (a whole number's text is under 32 bytes: a msgpack fixstr, 0xa0 + its
-- length), so the value is the bytes `cmsgpack.pack` made of the 14 values here before (its
-- 14 strings made Lua values cost about 18,600 instructions an admission).
local packed = ARGV[6] .. string.char(160 + #deadline) .. deadline .. ARGV[8]
  .. string.char(160 + #created) .. created .. ARGV[26]
-- The previous release's form (ARGV[35], `queue.write_previous_forms`): every field by name,
-- which that release's claim reads; the values the caller sent packed are unpacked for it
-- (`named`, PACKED_AT's order). Else the packed value is one field: 4 arguments where there
-- were 34.
local named
local pad_f, pad_v = 'id', jid
if ARGV[35] == '1' then
  named = {cmsgpack.unpack(packed)}
  if #named[11] <= 64 then pad_f, pad_v = HASH_TABLE_FIELD, HASH_TABLE_VALUE end
end
-- A handed job's token (its claim's time) is newer than every claim the slot knows: its idle
-- entry's score is at least its newest claim's token (idle.lua, complete.lua), so the token
-- is at least that plus one. A slot tells a hand-off it already ran (found at its idle
-- refresh before the message came) by a token no newer than its newest: a job handed in the
-- same millisecond as the slot's last claim (a job that ran under a millisecond), or after
-- Redis's clock stepped back, was taken for one, never taken up, and waited for its lease to
-- run out (the queue benchmark crawled at 200 jobs/s).
local token_text
if handed then
  token_text = int(math.max(now, woken[2] + 1))
  -- Claimed for the slot as claim.lua claims (claim_next): running under the claim's time as
  -- its token, leased, charged its reservation, on the running jobs; the lane's turn moves
  -- on to its round, the pool's latest end rises to its end (when kept), and the day's
  -- charge grows. The account's and the lanes' waiting counts never held it.
  local lease_until = int(now + (ARGV[32] + 0))
  if not named then
    redis.call('HSET', jk, 'state', 'running', 'p', packed, 'charged', ARGV[9],
      'started', token_text, 'token', token_text, 'worker', woken[1], 'lease_until', lease_until,
      'pool', wpool, 'handed', '1')
  else
  redis.call('HSET', jk, 'id', jid, 'kind', kind, 'account', account, 'trust', trust,
    'state', 'running', 'fp', fp, 'idem', named[3], 'input', named[11], 'created', created,
    'deadline', deadline, 'exec_ms', ARGV[17], 'reserved', ARGV[9],
    'charged', ARGV[9], 'day', ARGV[1], 'waiter', ARGV[21], 'request', named[13],
    'started', token_text, 'token', token_text, 'worker', woken[1], 'lease_until', lease_until,
    'pool', wpool, 'handed', '1', pad_f, pad_v)
  end
  redis.call('ZADD', KEYS[10], lease_until, jid)
  if round > ((t[1] or 0) + 0) then
    fair[#fair + 1] = 'round:' .. ln
    fair[#fair + 1] = int(round)
  end
  local kept_end = t[8]
  if wpool == 'referee' then kept_end = t[9] end
  if fresh_end and end_f == 'end:' .. wpool then kept_end = fresh_end end
  if kept_end and now + exec > tonumber(kept_end) then
    fair[#fair + 1] = 'end:' .. wpool
    fair[#fair + 1] = int(now + exec)
  end
  -- The day's charge, read here only (not in the first read of queue:fair).
  local charged_f = 'charged:' .. ARGV[1]
  fair[#fair + 1] = charged_f
  fair[#fair + 1] = int(((redis.call('HGET', fk, charged_f) or 0) + 0) + reserve)
elseif not named then
  redis.call('HSET', jk, 'state', 'queued', 'p', packed)
  redis.call('ZADD', lane, score, jid)
else
  redis.call('HSET', jk, 'id', jid, 'kind', kind, 'account', account, 'trust', trust,
    'state', 'queued', 'fp', fp, 'idem', named[3], 'input', named[11], 'created', created,
    'deadline', deadline, 'exec_ms', ARGV[17], 'reserved', ARGV[9],
    'day', ARGV[1], 'waiter', ARGV[21], 'request', named[13], pad_f, pad_v)
  redis.call('ZADD', lane, score, jid)
end
-- A packed record is over 64 bytes with the fingerprint alone (64): a hash table already.
if not named and #packed <= 64 then redis.call('HSET', jk, HASH_TABLE_FIELD, HASH_TABLE_VALUE) end
if ARGV[21] ~= '' and (ARGV[22] + 0) > 0 then
  redis.call('SET', KEYS[7], '1', 'EX', ARGV[22])
end
if not idem_taken then redis.call('SET', KEYS[1], fp .. '|' .. jid, 'EX', ARGV[15]) end
-- Its kept turn is used now (a stale one is ignored, and dropped by the next refusal).
if promised then redis.call('ZREM', owed, account) end
if dead and #dead > 0 then redis.call('HDEL', KEYS[9], unpack(dead)) end
if #fair > 2 then redis.call(unpack(fair)) end
redis.call('ZADD', KEYS[6], created, jid)
-- The index is trimmed, and its expiry moved, once a day per account and kind (its first
-- job then): it lives a day longer than its retention, so no job of the day is dropped
-- early, and an account that stops using the gateway leaves no index behind.
if first_today then
  redis.call('ZREMRANGEBYSCORE', KEYS[6], '-inf', now - (ARGV[18] + 0))
  redis.call('PEXPIRE', KEYS[6], (ARGV[18] + 0) + DAY_MS)
end
-- The idle slot popped above is handed the job (the claim in the message) or woken. None:
-- every slot is busy, and the next to finish claims the job.
if handed then
  -- CLAIM_FIELDS' values: the state, then PACKED_AT's first 13 (helpers.lua's claim_values).
  local values = {'running', cmsgpack.unpack(packed)}
  values[15] = nil -- fp: no claim field
  local parts = {'claim|', token_text}
  for i = 1, #values do
    parts[#parts + 1] = '|' .. string.len(values[i]) .. '|'
    parts[#parts + 1] = values[i]
  end
  redis.call('PUBLISH', ARGV[19] .. ':' .. woken[1], table.concat(parts))
elseif woken then
  redis.call('PUBLISH', ARGV[19] .. ':' .. woken[1], jid)
end
return {'new', jid, now}
