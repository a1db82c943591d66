-- The queue's Lua helpers, shared by every queue script: the registry sends the store's
-- prelude (`now_ms()`, `day_of`, `to_midnight_s`), then this file, then the script
-- (horst_store::script, `Script::with_helpers`). Not a script of its own: no KEYS, no ARGV.
-- Keys arrive in KEYS (Redis Cluster), with one exception: `group_key` names a key of the
-- queue group from KEYS[n], the group's base (its prefix and hash tag), and parts read in the
-- same script (claim.lua: the head job's record and the keys it names). Such a key is in
-- the base's hash slot, so the script stays on one shard (tests/it/tidy.rs allows exactly
-- `group_key(KEYS[n], ...)`).
-- Counters of a day live a little longer than the day, for the admin overview.
local COUNTER_TTL = 3 * 86400
-- A lane's waiting jobs are a zset scored round * TURN_SPAN + seq: the round is the account's
-- turn (admit.lua), seq keeps arrival order within a round.
local TURN_SPAN = 2097152

-- A whole number as the text Redis is sent. Lua 5.1 has only doubles, and a number passed
-- to redis.call as it is becomes text through '%.14g', whose exact conversion of a 13-digit
-- timestamp costs thousands of instructions (a tenth of a job's Redis time, by callgrind);
-- '%d' formats it as the integer it is, for a fraction of that. For whole numbers only.
local function int(n) return string.format('%d', n) end

-- The shared hashes every job reads and writes a few fields of (queue:fair, budget:<day>)
-- hold a field or more per account. Redis keeps a hash of up to 128 short fields as a
-- listpack, where finding a field is a scan of the list: at 50 to 128 fields that scan cost
-- a job more than the commands it saved. A value longer than `hash-max-listpack-value` (64
-- by default) makes Redis convert the hash to a hash table, and it never converts back, so
-- each is given this field when it is made: a field is then found by its hash. (A literal:
-- a constant of the compiled script, where string.rep would build it on every call.)
local HASH_TABLE_FIELD = '_table'
local HASH_TABLE_VALUE = 'a hash table, not a listpack: a value this long (over 64 bytes) makes Redis convert the hash for good'

-- The name of a lane ('planner', 'referee') from its key `...queue:lane:<name>`: the
-- fields of queue:fair are named by it.
local function lane_name(lane_key)
  return string.match(lane_key, 'queue:lane:(%w+)$')
end

-- The queue key `base .. name parts` (see above; one to four parts): base is a script's
-- KEYS entry. Joined by `..`: a table for table.concat cost three times as much.
local function group_key(base, a, b, c, d)
  if d then return base .. a .. b .. c .. d end
  if c then return base .. a .. b .. c end
  if b then return base .. a .. b end
  return base .. a
end

-- An empty list for a local that is only read (never written to): no table made per call.
local NO_ENTRIES = {}

-- admit.lua's refusals. Each is a function of the helpers, made once a script run, not a
-- closure of the admission's locals made on every admission (the admission's code runs once
-- per call of a group: as a local function of admit.lua, each cost about 550 instructions and
-- 420 more for every local it captured, about 12,000 an admission in all).
-- An admission refused after it took its idempotency key's first use gives the key back, so
-- only an admitted job keeps it.
local function give_back(taken, idem_key, reply)
  if taken then redis.call('DEL', idem_key) end
  return reply
end

-- What admission's start-in-time check read afresh (the live slots' sum `cap`, the pool's
-- latest end `end_v` in field `end_f`), added to a write of queue:fair `set`.
local function keep_fresh(set, cap, end_f, end_v)
  if cap then
    set[#set + 1] = 'cap'
    set[#set + 1] = cap
  end
  if end_v then
    set[#set + 1] = end_f
    set[#set + 1] = end_v
  end
end

-- A refusal for want of room (`cap`: 'global', 'reserved' or 'late', with the seconds until it
-- would fit and, for 'late', the jobs ahead): the account's turn is kept until then and a
-- grace after (owed: queue:owed:<lane>; owed_f its latest time in fk, queue:fair, which it
-- moves; owed_until and kept: what the admission read of them), the stale turns (before
-- kept_since) and the dead workers' slots (`dead`, in the live slots' hash `slots`) are
-- forgotten only now, after a write that may grow memory, and what the start-in-time check
-- read afresh is kept (keep_fresh). Returns admit.lua's reply.
local function admit_refuse(owed, fk, owed_f, owed_until, kept, now, kept_since, account, grace,
  slots, dead, fresh_cap, end_f, fresh_end, cap, retry_s, ahead)
  local until_ms = now + retry_s * 1000
  redis.call('ZADD', owed, until_ms, account)
  -- Not known before: the latest of the turns read (those not read are past keeping).
  local latest = owed_until or 0
  if not owed_until then
    for i = 2, #kept, 2 do latest = math.max(latest, tonumber(kept[i])) end
  end
  local set = {'HSET', fk}
  if latest < until_ms or not owed_until then
    set[#set + 1] = owed_f
    set[#set + 1] = int(math.max(latest, until_ms))
  end
  keep_fresh(set, fresh_cap, end_f, fresh_end)
  if #set > 2 then redis.call(unpack(set)) end
  redis.call('ZREMRANGEBYSCORE', owed, '-inf', '(' .. kept_since)
  if dead and #dead > 0 then redis.call('HDEL', slots, unpack(dead)) end
  local keep = retry_s * 1000 + grace
  if redis.call('PTTL', owed) < keep then redis.call('PEXPIRE', owed, keep) end
  if ahead then return {'busy', cap, retry_s, ahead} end
  return {'busy', cap, retry_s}
end

-- The helpers of rare paths (a job's record read by name, a failed or dropped job's end, the
-- stall's check), made on their first use in a script run and kept for the rest of it:
-- `rare().release(...)`. Redis runs a script's whole text on every call, and each `local
-- function` of it is a closure made again, used or not: as top-level helpers these (with
-- PACKED_AT's and CLAIM_FIELDS' tables) cost every completion call about 17,600 instructions
-- (callgrind, ops/queue-script-cost), though its common path (the held claim, a succeeded
-- job, the next job claimed) calls none of them. Defined inside `rare`, they are made only
-- when a run takes such a path; the one closure made on every call is `rare` itself.
local rare_made = false
local function rare()
if rare_made then return rare_made end

-- The queued record's packed form (admit.lua): the fields an admission writes once and
-- nothing changes afterwards are one field, `p`, their values (strings) packed by cmsgpack
-- in this order, where the previous release wrote each as a field of its own (every written
-- argument costs Redis about 1,500 instructions: its parsing, the hash's entry, the AOF). A
-- record keeps every other field by name (state, the claim's, the outcome's). Records of
-- the previous release, and those written with `queue.write_previous_forms`, have only the
-- named fields: every reader reads both (job_fields, claim_values; horst_queue's
-- record::PACKED_FIELDS is this list, a test compares them). A named field wins over the
-- packed one: detach.lua writes `waiter` by name over a packed record's.
local PACKED_AT = {account = 1, day = 2, idem = 3, waiter = 4, deadline = 5, exec_ms = 6,
  reserved = 7, id = 8, kind = 9, trust = 10, input = 11, created = 12, request = 13, fp = 14}

-- Fields `...` of the record `jk`, in either form (PACKED_AT), as HMGET gives them (false
-- for a missing one).
local function job_fields(jk, ...)
  local v = redis.call('HMGET', jk, 'p', ...)
  local p = table.remove(v, 1)
  if p then
    local packed, names = {cmsgpack.unpack(p)}, {...}
    for i = 1, #names do
      local at = PACKED_AT[names[i]]
      if not v[i] and at then v[i] = packed[at] or false end
    end
  end
  return v
end

-- Counts a finished job in its day's budget hash `bk`, by kind and final state (the overview).
local function count_done(jk, bk, state)
  local kind = job_fields(jk, 'kind')[1]
  if kind then redis.call('HINCRBY', bk, 'done:' .. kind .. ':' .. state, 1) end
end

-- The jobs that ended failed or cancelled, across accounts: queue:ended (zset of ids by end
-- time, keys::ended), the operator's listing `horst admin job list --state failed` without an
-- account. Kept as long as the records (the job ttl) and at most ENDED_KEEP ids; a succeeded
-- job, the bulk, is not noted (a command more for every job), it is listed per account.
local ENDED_KEEP = 10000
local function note_ended(ek, jid, now, state, job_ttl)
  if state ~= 'failed' and state ~= 'cancelled' then return end
  redis.call('ZADD', ek, int(now), jid)
  redis.call('ZREMRANGEBYSCORE', ek, '-inf', '(' .. int(now - tonumber(job_ttl) * 1000))
  redis.call('ZREMRANGEBYRANK', ek, 0, -(ENDED_KEEP + 1))
end

-- A queued job that will never run: give back what admission took (reservation, daily
-- count), forget its idempotency key so a retry starts afresh, record why, and wake waiters.
-- jk: job:<id>, bk: budget:<day> (the day's counts and its accounts', admit.lua),
-- ik: idem:<account>:<key>, both of the job's own day and account (see same_job).
-- ek: queue:ended (note_ended).
local function release(jk, bk, ik, ek, jid, now, state, code, message, job_ttl, channel)
  local f = job_fields(jk, 'trust', 'kind', 'reserved', 'account')
  local trust, kind, reserved = f[1], f[2], tonumber(f[3])
  -- A day whose counts expired (a job left queued for days: no worker ran) has nothing to
  -- give back; counting into it would make a hash of negative counts that never expires.
  local day_kept = redis.call('EXISTS', bk) == 1
  if day_kept then
    redis.call('HINCRBY', bk, 'used', -reserved)
    if trust == '0' then redis.call('HINCRBY', bk, 'trust0', -reserved) end
    redis.call('HINCRBY', bk, 'd:' .. f[4] .. ':' .. kind, -1)
  end
  local rec = redis.call('GET', ik)
  if rec and string.sub(rec, -string.len(jid)) == jid then redis.call('DEL', ik) end
  redis.call('HSET', jk, 'state', state, 'finished', now,
    'failure', cjson.encode({code = code, message = message}))
  if day_kept then count_done(jk, bk, state) end
  note_ended(ek, jid, now, state, job_ttl)
  redis.call('EXPIRE', jk, job_ttl)
  redis.call('PUBLISH', channel, state)
end

-- Time nobody saw Redis does not count against a lease (a stall of Redis, or of every process):
-- each housekeeping round notes the server clock in `wk` (queue:clock: seen, since). A gap of
-- more than stall_ms since the last note restarts `since`, and no lease is reaped before a
-- whole lease has passed after it, so a worker that lived through the stall heartbeats (or
-- completes) first. Returns whether leases may be reaped now.
local function reaping_allowed(wk, now, stall_ms, lease_ms)
  local f = redis.call('HMGET', wk, 'seen', 'since')
  local seen, since = tonumber(f[1]), tonumber(f[2]) or 0
  if seen and now - seen > stall_ms then since = now end
  redis.call('HSET', wk, 'seen', now, 'since', since)
  return now >= since + lease_ms
end

-- An API process's presence (callers:<process>) lives this long without a refresh, and a
-- gap of more than this between housekeeping rounds is a stall (the Rust side's
-- CALLER_PRESENCE_TTL and STALL_AFTER; a test checks they agree).
local PRESENCE_TTL_MS = 10000
local STALL_MS = 3000

-- A queued job whose waiter's presence is missing is an orphan to drop, unless a stall ended
-- less than a whole presence ago: a live API process frozen with Redis (or cut off from it)
-- had no chance to refresh its presence, and its callers may have been answered `pending`.
-- The stall is told as for leases (reaping_allowed, `wk` = queue:clock).
local function orphan_drop_allowed(wk, now)
  return reaping_allowed(wk, now, STALL_MS, PRESENCE_TTL_MS)
end

-- What the caller of a dropped orphan reads (its wait, get_submission): the process it waited
-- in may have died, or may live cut off from Redis (a partition) after answering it
-- `pending`; either way nothing ran and nothing was charged. presence.rs's sweep says the same
-- (ORPHAN_MESSAGE there; a test checks they agree).
local ORPHAN_MESSAGE = 'the API process the caller waited in stopped, or lost its connection to the job store, before the job started; the job was dropped and nothing was charged; call again (the same idempotencyKey starts afresh)'

-- One read of every field the checks and the claimed record need (never HGETALL). The
-- claim's reply gives their values in this order: scripts::CLAIM_FIELDS is the same list
-- (a test compares them).
local CLAIM_FIELDS = {'state', 'account', 'day', 'idem', 'waiter', 'deadline', 'exec_ms',
  'reserved', 'id', 'kind', 'trust', 'input', 'created', 'request'}

rare_made = {job_fields = job_fields, count_done = count_done,
  note_ended = note_ended, release = release, reaping_allowed = reaping_allowed,
  orphan_drop_allowed = orphan_drop_allowed, ORPHAN_MESSAGE = ORPHAN_MESSAGE,
  CLAIM_FIELDS = CLAIM_FIELDS}
return rare_made
end

-- The caller built the job's day keys from the account, day and idempotency key it read
-- from the record; they never change after admission, so a mismatch means the record is not
-- the one the caller read (it expired and the id was reused): the caller reads again.
local function same_job(jk, account, day, idem)
  local f = rare().job_fields(jk, 'account', 'day', 'idem')
  return f[1] == account and f[2] == day and f[3] == idem
end

-- The values of CLAIM_FIELDS of the record `jk`, in either form: a packed record's in one
-- read of three fields (CLAIM_FIELDS but its state are PACKED_AT's first 13, in order), a
-- named one's in a second read of them all. A missing record: the first read's falses.
-- For a packed record, also that read (state, a waiter written by name, the packed field):
-- a claim's reply gives them as they are (claim_next).
local function claim_values(jk)
  local r = redis.call('HMGET', jk, 'state', 'waiter', 'p')
  if not r[3] then
    if not r[1] then return r end
    return redis.call('HMGET', jk, unpack(rare().CLAIM_FIELDS))
  end
  local f = {r[1], cmsgpack.unpack(r[3])}
  f[15] = nil -- fp: no claim field
  if r[2] then f[5] = r[2] end
  return f, r
end

-- The job running under slot `slot`'s claim that the slot does not know it holds, as
-- claimed_by.lua answers it (its reply, or nil): a claim whose answer was lost, or a job an
-- admission handed to the slot while it was idle (admit.lua) whose wake-up it did not get.
-- ri, bi: the KEYS indices of queue:running and the queue group's base. Only a claim newer
-- than the token `newer_than` counts (a token is the claim's time); with `known` (a set of
-- the job ids the slot knows it holds or was handed), a claim of that same millisecond
-- counts too unless it is known: a trivial job's completion claims the next job within the
-- millisecond of its own claim, so a lost claim may be no newer than the slot's newest
-- (found by token alone, it was skipped and reaped after its lease). A scan of the running
-- jobs: only paid where a slot finds itself taken off the idle slots without having heard
-- why (idle.lua, claim.lua) or after a failed call.
local function held_claim(ri, bi, slot, newer_than, known)
  local floor = newer_than + 0
  for _, id in ipairs(redis.call('ZRANGE', KEYS[ri], 0, -1)) do
    if not (known and known[id]) then
      local jk = group_key(KEYS[bi], 'job:', id)
      -- A claim's token is its start (claim_next writes no `token` field; a hand-off does).
      local f = redis.call('HMGET', jk, 'state', 'worker', 'token', 'started')
      local tt = f[3] or f[4]
      local t = tt and tt + 0
      if f[1] == 'running' and f[2] == slot and t and (t > floor or (known and t == floor)) then
        -- Answered to the slot, it is taken up here (a hand-off's mark, admit.lua, goes):
        -- from now on a death of its worker fails it as any claimed job's (reap.lua).
        redis.call('HDEL', jk, 'handed')
        local v = claim_values(jk)
        local run = redis.call('HMGET', jk, 'started', 'worker', 'charged')
        for i = 1, 3 do v[#rare().CLAIM_FIELDS + i] = run[i] end
        return {'claimed', tt, v, 0}
      end
    end
  end
  return nil
end

-- A put-back job's score in its lane: below every turn (a turn's score is round *
-- TURN_SPAN + seq, from 0 up), so the lane's next claim takes it, and put-back jobs among
-- themselves by their creation (ms, added to it). 2^52: every such score is still a whole
-- number a double holds exactly. The claim's round, floor(score / TURN_SPAN), is negative,
-- so it never moves the lane's round (the job's turn was taken when it was handed).
local PUT_BACK_FRONT = -4503599627370496

-- A job an admission handed to an idle slot (admit.lua) that no slot took up (its record is
-- still marked `handed`: the slot's worker died, or stalled, between its idle refresh and the
-- hand-off) goes back to its lane instead of failing: queued again at the lane's front
-- (PUT_BACK_FRONT), off the running jobs, its charge given back (the record's and the day's
-- in queue:fair; the reservation and the day's job count stay, as for any waiting job: the
-- claim that runs it takes neither again), and back in its account's and the lanes' waiting
-- counts (the claim takes it off them). Its claim's token, worker and lease go with the
-- mark: the next claim gives it a new token (a later time: the hand-off's lease or the
-- worker's death came between), so a slow holder of the old one is fenced, and that holder
-- never runs it anyway, since it finds the mark gone when it would take the job up.
-- It wakes one idle slot that claims from its lane, as an admission does (admit.lua's
-- pop_idle: referee work a referee slot first, then a general one; a pool whose idle mark in
-- queue:fair is '0' has none, and a pop that finds none sets it), so the job does not wait
-- for an idle refresh or the next completion to be found.
-- jk: job:<id>, rk: queue:running, fk: queue:fair, lane: queue:lane:<the job's lane>,
-- gk, refk: queue:handoff:general and :referee, wake: the wake-up channels' prefix
-- (queue:new; the woken slot's channel is wake:<slot>).
local function put_back(jk, jid, rk, fk, lane, gk, refk, wake)
  local f = rare().job_fields(jk, 'account', 'day', 'charged', 'created')
  redis.call('HSET', jk, 'state', 'queued', 'charged', '0')
  redis.call('HDEL', jk, 'handed', 'worker', 'started', 'token', 'lease_until', 'pool')
  redis.call('ZREM', rk, jid)
  redis.call('ZADD', lane, int(PUT_BACK_FRONT + (tonumber(f[4]) or 0)), jid)
  local wf, cf = 'w:' .. (f[1] or ''), 'charged:' .. (f[2] or '')
  local t = redis.call('HMGET', fk, wf, 'n', cf, 'idle:referee', 'idle:general')
  local set = {'HSET', fk, wf, int((tonumber(t[1]) or 0) + 1), 'n', int((tonumber(t[2]) or 0) + 1),
    cf, int(math.max(0, (tonumber(t[3]) or 0) - (tonumber(f[3]) or 0)))}
  local pools = {{gk, 'idle:general', t[5]}}
  if lane_name(lane) == 'referee' then table.insert(pools, 1, {refk, 'idle:referee', t[4]}) end
  local woken = {}
  for _, p in ipairs(pools) do
    if #woken == 0 and p[3] ~= '0' then
      woken = redis.call('ZPOPMAX', p[1])
      if #woken == 0 then set[#set + 1] = p[2]; set[#set + 1] = '0' end
    end
  end
  redis.call(unpack(set))
  if #woken > 0 then redis.call('PUBLISH', wake .. ':' .. woken[1], jid) end
end

-- A completing slot registers idle (complete.lua): fk queue:fair, ik its pool's idle slots,
-- token the completed job's, slot its id, mark_f its pool's idle mark in queue:fair, done_f
-- nil or the finished count's field still to add; `f`: queue:fair's 'n', the mark and the
-- count, when read: then the mark is written only when it is not set already, and the count
-- with it. A function of the helpers, not of complete.lua: a local function of a script is
-- a closure made on every call, used or not.
local function idle_after_completion(fk, ik, now, token, slot, mark_f, done_f, f)
  local set = {'HSET', fk}
  -- Its entry's score is never older than this job's token, the slot's newest claim (a hand-off
  -- passes the score: admit.lua).
  if redis.call('ZADD', ik, int(math.max(now, token + 0)), slot) == 1
    and (not f or f[2] ~= '1') then
    set[#set + 1] = mark_f; set[#set + 1] = '1'
  end
  if done_f then
    if f then
      set[#set + 1] = done_f; set[#set + 1] = int((f[3] or 0) + 1)
    else
      redis.call('HINCRBY', fk, done_f, 1)
    end
  end
  if #set > 2 then redis.call(unpack(set)) end
end

-- The clock's text (`int(now_ms())`), made once a run: a group of admissions or completions
-- shares one clock (the prelude's now_ms), so its text is made once for all of them, and a
-- completion's claim of the next job uses the completion's (each int() is about 2,300
-- instructions).
local clock_text = false
local function now_text()
  if not clock_text then clock_text = int(now_ms()) end
  return clock_text
end

-- The next turn of a slot's lanes, claimed (claim.lua has the whole story; complete.lua
-- claims the completing slot's next job with it). l1, l2, fi, ri, ii, bi: the KEYS indices
-- of lane1, lane2, fair (queue:fair: the lanes' turns and the accounts' waiting counts),
-- running, idle (the slot's pool's idle slots) and base (the queue group's base);
-- `count`: nil, or a field of queue:fair to add 1 to in the claim's write of it; slot: the
-- claiming slot's id; the rest as in claim.lua's arguments. Returns claim.lua's reply and
-- `count` if the claim did not write it (nil if it did: a caller still holding it must add
-- it itself). Positional, not a table of indices: a table made per call cost more than the
-- arguments.
local function claim_next(l1, l2, fi, ri, ii, bi, count, now, slot, lease_ms, job_ttl, pool,
  bound, registered, sure_ms)
local lane1, lane2 = KEYS[l1], KEYS[l2]
if lane2 == lane1 then lane2 = nil end
for _ = 1, bound + 0 do
  -- Each lane's head, taken off; of two, the one created first, and the other put back with
  -- its score (its place is unchanged: nobody sees the lane in between). Taking the head off
  -- with the look costs one command where a look and a removal cost two; with both lanes
  -- waiting, the put-back costs what the removal did.
  local h1 = redis.call('ZPOPMIN', lane1)
  local h2 = lane2 and redis.call('ZPOPMIN', lane2)
  local head, lane, f, jk, read
  local other = false
  if h1[1] then
    head, lane = h1, lane1
    jk = group_key(KEYS[bi], 'job:', h1[1])
    f, read = claim_values(jk)
  end
  if h2 and h2[1] then
    local gk = group_key(KEYS[bi], 'job:', h2[1])
    local g, g_read = claim_values(gk)
    if not head or (tonumber(g[13]) or math.huge) < (tonumber(f[13]) or math.huge) then
      if head then
        redis.call('ZADD', lane1, h1[2], h1[1])
        other = true
      end
      head, lane, jk, f, read = h2, lane2, gk, g, g_read
    else
      redis.call('ZADD', lane2, h2[2], h2[1])
      other = true
    end
  end
  if not head then return {'empty'}, count end
  local jid = head[1]
  local fk = KEYS[fi]
  if f[1] ~= 'queued' then
    -- Off the lane, so off the lanes' count (its account's was taken off when it stopped
    -- being queued).
    redis.call('HINCRBY', fk, 'n', -1)
  else
    local account, day = f[2], f[3]
    -- The lane's turn moves on to this job's round, and the job leaves its account's and the
    -- lanes' counts: one read and one write of queue:fair. An account's entries are left when
    -- its count reaches zero (fair_sweep.lua drops them later): admission ignores the turn of
    -- an account with nothing waiting, and a second write here would cost every job.
    -- The lane's name ('planner', 'referee') is what its key has after the base and
    -- 'queue:lane:' (11 bytes): a cut, where lane_name's pattern match cost about 2,000
    -- instructions.
    local round_f = 'round:' .. string.sub(lane, #KEYS[bi] + 12)
    local round = math.floor(head[2] / TURN_SPAN)
    local wf = 'w:' .. account
    local end_f = 'end:' .. pool
    -- The day's charge is kept here too (keys::fair_day_charged), so the claim that reads
    -- and writes queue:fair anyway adds the job's seconds without a command of its own.
    local charged_f = 'charged:' .. day
    local t = redis.call('HMGET', fk, round_f, wf, 'n', end_f, charged_f, count or 'n')
    local set = {'HSET', fk, wf, int(math.max(0, (t[2] or 0) - 1)),
      'n', int(math.max(0, (t[3] or 0) - 1))}
    if count then
      set[7] = count; set[8] = int((t[6] or 0) + 1)
      count = nil
    end
    if round > (t[1] or 0) + 0 then
      set[#set + 1] = round_f; set[#set + 1] = int(round)
    end
    local ends_at = now + f[7]
    local waiter = f[5] or ''
    local gone, late = false, false
    -- The waiter's process is looked for only once its presence may have lapsed: until
    -- then it lives (admission refreshed it, or it was refreshed shortly before).
    if waiter ~= '' and now - (f[13] or 0) >= sure_ms + 0 then
      gone = redis.call('EXISTS', group_key(KEYS[bi], 'callers:', waiter)) == 0
        and rare().orphan_drop_allowed(group_key(KEYS[bi], 'queue:clock'), now)
    end
    if not gone then late = ends_at > f[6] + 0 end
    if gone or late then
      redis.call(unpack(set))
      local bk = group_key(KEYS[bi], 'budget:', day)
      local channel = KEYS[bi] .. 'done:' .. jid
      local ik = group_key(KEYS[bi], 'idem:', account, ':', f[4])
      local ek = group_key(KEYS[bi], 'queue:ended')
      if gone then
        rare().release(jk, bk, ik, ek, jid, now, 'cancelled', 'cancelled',
          rare().ORPHAN_MESSAGE,
          tonumber(job_ttl), channel)
      else
        rare().release(jk, bk, ik, ek, jid, now, 'failed', 'timeout',
          'the job waited too long in the queue to finish within the wait limit; it did not run and nothing was charged; try again',
          tonumber(job_ttl), channel)
      end
    else
      -- The pool's latest end (admit.lua's bound) rises to this job's. Only kept once
      -- admission has set it from the ends themselves (it then covers every job running), so
      -- a claim never makes it look earlier than a running job's end.
      if t[4] and ends_at > t[4] + 0 then
        set[#set + 1] = end_f; set[#set + 1] = int(ends_at)
      end
      set[#set + 1] = charged_f
      set[#set + 1] = int((t[5] or 0) + (f[8] or 0))
      redis.call(unpack(set))
      -- The fencing token: the claim's time. A job is claimed once (never queued again), so
      -- it tells this claim from any other holder; a counter would cost a write a job. It is
      -- the record's `started`, which every check of a token reads when the record has no
      -- `token` field: only a hand-off (admit.lua) writes one (a worker of a version before
      -- this one reads only `token`, and may be the slot handed the job), and each field
      -- written costs Redis about 1,500 instructions (its arguments, the AOF).
      local token = now
      local lease_until = int(now + lease_ms)
      redis.call('HSET', jk, 'state', 'running', 'started', now_text(), 'worker', slot,
        'lease_until', lease_until, 'charged', f[8], 'pool', pool)
      redis.call('ZADD', KEYS[ri], lease_until, jid)
      if registered == '1' then redis.call('ZREM', KEYS[ii], slot) end
      -- Another waits: the other lane's head, or any beyond this one in the lanes' count.
      local more = 0
      if other or (t[3] or 0) + 0 > 1 then more = 1 end
      -- The claimed record as read (CLAIM_FIELDS' values in their order, false for a
      -- missing one): the worker knows what the claim wrote (its state, start and token
      -- are the token, its worker the slot, its charge the reservation), and names the
      -- values itself (horst_queue's scripts::CLAIM_FIELDS): a reply of names and values
      -- cost Redis about 30,000 instructions more (building it, and the reply's strings).
      -- A packed record's as read instead (its state, a waiter written by name, the packed
      -- field), which the worker unpacks (scripts::claim_reply_values): three values where
      -- there were 14, each about 500 instructions to make a reply of.
      return {'claimed', token, read or f, more}, count
    end
  end
end
return {'skipped'}, count
end
