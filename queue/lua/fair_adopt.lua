--[[
  FAIR-ADOPT: move the fair turns and the waiting counts of versions before queue:fair into
  it, once (an upgrade with jobs waiting keeps their turns, and the per-account cap counts
  them). The turns hashes are folded in and deleted; the waiting counts (each account's, and
  'n', the lanes' together) are counted afresh from the lanes (the old counters are left for
  the caller to delete: their names are known only from a SCAN). Atomic and idempotent: a second call, or a call by a second
  process starting at the same time, finds 'layout' set and changes nothing.

  Input:
    KEYS[1] queue:fair              the new hash (keys.rs)
    KEYS[2] queue:turns:planner     the planner lane's turns before queue:fair: 'round',
    KEYS[3] queue:turns:referee     'seq' and 'a:<account>'; likewise the referee lane's
    KEYS[4] queue:lane:planner      the lanes (waiting ids by turn)
    KEYS[5] queue:lane:referee
    KEYS[6] the queue group's base  (claim.lua): the waiting jobs' records are named from it

    ARGV[1] the layout written to 'layout' once adopted

  Output:
    1  adopted now: there were turns or waiting jobs from before
    2  adopted now: there was nothing from before (a new store; the layout is only marked)
    0  adopted before (nothing changed)

  Cluster note: every key is a queue key, in the group's hash slot; the waiting jobs'
  records are named from KEYS[6] (group_key), as in claim.lua.
]]
local fk = KEYS[1]
if redis.call('HEXISTS', fk, 'layout') == 1 then return 0 end
-- A later value wins: a process of this version may have admitted jobs already.
local function at_least(field, value)
  local have = tonumber(redis.call('HGET', fk, field))
  if not have or have < tonumber(value) then redis.call('HSET', fk, field, value) end
end
local names = {'planner', 'referee'}
local found = false
for i = 1, 2 do
  local old = redis.call('HGETALL', KEYS[1 + i])
  if #old > 0 then found = true end
  for j = 1, #old, 2 do
    local field, value = old[j], old[j + 1]
    if field == 'round' or field == 'seq' then
      at_least(field .. ':' .. names[i], value)
    elseif string.sub(field, 1, 2) == 'a:' then
      at_least('a:' .. names[i] .. ':' .. string.sub(field, 3), value)
    end
  end
  redis.call('DEL', KEYS[1 + i])
end
-- Each account's waiting jobs, and the lanes' together, as the lanes hold them now.
local counts, n = {}, 0
for i = 4, 5 do
  for _, jid in ipairs(redis.call('ZRANGE', KEYS[i], 0, -1)) do
    n = n + 1
    local f = rare().job_fields(group_key(KEYS[6], 'job:', jid), 'account', 'state')
    if f[1] and f[2] == 'queued' then counts[f[1]] = (counts[f[1]] or 0) + 1 end
  end
end
for account, c in pairs(counts) do redis.call('HSET', fk, 'w:' .. account, c) end
redis.call('HSET', fk, 'n', n, 'layout', ARGV[1], HASH_TABLE_FIELD, HASH_TABLE_VALUE)
if found or n > 0 then return 1 end
return 2
