--[[
  Writes a session with compare-and-set on its stored rev, appends the apply's new events to
  the event log, keeps the index of unfinished sessions, applies the write's deadline changes
  to the delayed set and publishes the wake-up: one atomic step, so a process dying right
  after the write loses neither a deadline nor a wake-up of a state that was stored.

  The record is a string '<rev> ~<delta>': a delta against the base in KEYS[7] (record.rs).
  It is written with SET KEEPTTL GET, which hands back the value it replaced: the
  compare-and-set checks that value's rev and, in the rare case another write came first,
  puts it back. So a winning write is one command on the session key (two when the writer
  rebases), and a losing one gets the stored record and its base in the reply and
  re-applies without another read. The base changes only here, after the compare-and-set,
  so the stored delta is always against the stored base.

  Input:
    KEYS[1] ses:<id>          the session record ('<rev> <record>'; earlier versions: a hash
                              {rev, json})
    KEYS[2] sessions:open     set of unfinished session ids
    KEYS[3] ses:<id>:events   list of the latest events (record.rs: tagged MessagePack;
                              earlier forms before)
    KEYS[4] delayed           zset of deadlines by due time (the delayed set)
    KEYS[5] ses:<id>:replay   list of the replay's lines (replay.rs: MessagePack; the
                              'truncated' line this script writes, and earlier versions'
                              lines, are JSON, which reads too)
    KEYS[6] ratings:pending   zset of finished games to rate, by when to try (ms)
    KEYS[7] ses:<id>:base     the base of the record (MessagePack, deflated: record.rs)
    A key the write does not touch may be sent as any name in the session's slot (store.rs
    sends the bare prefix): KEYS[2] is touched only when ARGV[5] is not '', KEYS[3] only
    with new events, a trim or ARGV[5], KEYS[4] only with deadline changes, KEYS[5] only
    with replay lines or ARGV[5], KEYS[6] only when the game is rated.

    ARGV[1] the expected stored rev ('' = create: the session must not exist, nor its
            replay or event log: KEYS[3] and KEYS[5] are always named on a create)
    ARGV[2] the new rev (the record's rev and a random tag: '<rev>.<tag>')
    ARGV[3] the new record ('~' and its delta); the stored value is '<ARGV[2]> <ARGV[3]>'
    ARGV[4] session id when the listing changes, else ''
    ARGV[5] listing: '1' unfinished (listed, kept), '0' finished (unlisted, expires),
            '' unchanged since the loaded record (no index or expiry command)
    ARGV[6] how long a finished session is kept, ms (when ARGV[5] is '0', else '')
    ARGV[7] trim the event log to this many entries ('0' = no trim this time)
    ARGV[8] E, the number of new events
    ARGV[9] D, the number of deadline changes
    ARGV[10] '1' = wake the session's waiters: publish the new rev on the channel named
            like KEYS[1] (keys.rs: a session's channel is its key's name); '' = no wake-up
    ARGV[11] '1' = the stored record is an earlier version's hash (replaced by the string)
    ARGV[12] the new base ('' = the base stays)
    then E events (stored form), then D triples (op 'a' add / 'r' remove, due ms, member),
    then, when the write adds to the replay or finishes the game (else nothing), the
    replay: R (the number of its lines), how long a finished game's replay is
    kept (ms), how many of the R lines are essential (kept past the cap: the end), the cap
    (lines), '1' = rate this game (it finishes now), then R lines (stored form)

  Output:
    1        written; the wake-up message is the new rev
    {value, base}  not written: the stored rev is not ARGV[1] (or a create's id is taken);
             the stored value (nil if none) and base (nil if none)
    0        not written: the stored rev of an earlier version's hash moved, or another process
             already replaced the hash with the current form (read it again)
]]
local value = ARGV[2] .. ' ' .. ARGV[3]
if ARGV[11] == '1' then
  -- Another process may have replaced the hash with the string already (a HGET of it would
  -- be a WRONGTYPE error): read it again.
  if redis.call('TYPE', KEYS[1])['ok'] ~= 'hash' or redis.call('HGET', KEYS[1], 'rev') ~= ARGV[1] then
    return 0
  end
  local ttl = redis.call('PTTL', KEYS[1])
  -- SET replaces the hash (no DEL first: a full Redis refuses a script only at its first
  -- write that may grow memory, and a DEL first would let this one through).
  redis.call('SET', KEYS[1], value)
  if ttl > 0 then
    redis.call('PEXPIRE', KEYS[1], ttl)
  end
else
  local old = redis.call('SET', KEYS[1], value, 'KEEPTTL', 'GET')
  local ok
  if ARGV[1] == '' then
    -- A new session's id must be new to its replay and event log too: those outlive the
    -- record (a finished game's replay is kept for days), and a session id minted again
    -- would add its game to an older game's replay. The caller mints another id.
    ok = not old and redis.call('EXISTS', KEYS[5], KEYS[3]) == 0
  else
    ok = old and string.sub(old, 1, #ARGV[1] + 1) == ARGV[1] .. ' '
  end
  if not ok then
    if old then
      redis.call('SET', KEYS[1], old, 'KEEPTTL')
    else
      redis.call('DEL', KEYS[1])
    end
    return {old, redis.call('GET', KEYS[7])}
  end
end
if ARGV[12] ~= '' then
  -- A first base (a new session, or one an earlier version stored) takes the record's
  -- expiry: a finished session's keys all go together.
  if not redis.call('SET', KEYS[7], ARGV[12], 'KEEPTTL', 'GET') then
    local ttl = redis.call('PTTL', KEYS[1])
    if ttl > 0 then
      redis.call('PEXPIRE', KEYS[7], ttl)
    end
  end
end
local ne = tonumber(ARGV[8])
if ne > 0 then
  redis.call('RPUSH', KEYS[3], unpack(ARGV, 13, 12 + ne))
end
if ARGV[7] ~= '0' then
  redis.call('LTRIM', KEYS[3], -tonumber(ARGV[7]), -1)
end
if ARGV[5] == '1' then
  redis.call('SADD', KEYS[2], ARGV[4])
  redis.call('PERSIST', KEYS[1])
  redis.call('PERSIST', KEYS[3])
  redis.call('PERSIST', KEYS[7])
elseif ARGV[5] == '0' then
  redis.call('SREM', KEYS[2], ARGV[4])
  redis.call('PEXPIRE', KEYS[1], ARGV[6])
  redis.call('PEXPIRE', KEYS[3], ARGV[6])
  redis.call('PEXPIRE', KEYS[7], ARGV[6])
end
local i = 13 + ne
for _ = 1, tonumber(ARGV[9]) do
  if ARGV[i] == 'a' then
    redis.call('ZADD', KEYS[4], ARGV[i + 1], ARGV[i + 2])
  else
    redis.call('ZREM', KEYS[4], ARGV[i + 2])
  end
  i = i + 3
end
-- The replay (after the deadlines): one RPUSH of this write's lines. Past the cap they are
-- taken back and only what still fits, the essential lines (the end) and one 'truncated'
-- line where the first was dropped are pushed again: rare, so the common write stays one
-- command.
local nr = tonumber(ARGV[i] or '0')
-- Whether this write's lines made the replay list (a replay that was gone).
local made = false
if nr > 0 then
  local essential = tonumber(ARGV[i + 2])
  local cap = tonumber(ARGV[i + 3])
  local first = i + 5
  local len = redis.call('RPUSH', KEYS[5], unpack(ARGV, first, first + nr - 1))
  made = len == nr
  if len > cap then
    local before = len - nr
    redis.call('LTRIM', KEYS[5], 0, before - 1)
    for k = 0, nr - 1 do
      if before + k < cap or k >= nr - essential then
        redis.call('RPUSH', KEYS[5], ARGV[first + k])
      elseif before + k == cap then
        redis.call('RPUSH', KEYS[5], '{"kind":"truncated","at":' .. now_ms() .. '}')
      end
    end
  end
end
if ARGV[5] == '1' then
  redis.call('PERSIST', KEYS[5])
elseif ARGV[5] == '0' then
  redis.call('PEXPIRE', KEYS[5], ARGV[i + 1])
elseif made and redis.call('PTTL', KEYS[1]) > 0 then
  -- A finished session (its record expires) whose replay was kept shorter and is gone: a
  -- late write (the rematch link's line) made a new list of that one line, which never
  -- expired. The replay stays gone. (An unfinished session's replay always exists, so the
  -- common write pays no command for this.)
  redis.call('DEL', KEYS[5])
end
if ARGV[i + 4] == '1' then
  redis.call('ZADD', KEYS[6], 'NX', now_ms(), ARGV[4])
end
-- The wake-up carries the new rev only: a waiter whose process holds that record (the
-- writer's own, in its record cache) reads nothing; others read it once per process.
if ARGV[10] == '1' then
  redis.call('PUBLISH', KEYS[1], ARGV[2])
end
return 1
