--[[
  Writes a session with compare-and-set on its `rev`, appends the apply's new events to the
  event log, keeps the index of unfinished sessions, applies the write's deadline changes to
  the delayed set and publishes the wake-up: one atomic step, so a process dying right after
  the write loses neither a deadline nor a wake-up of a state that was stored.

  Input:
    KEYS[1] ses:<id>          the session hash {rev, json}
    KEYS[2] sessions:open     set of unfinished session ids
    KEYS[3] ses:<id>:events   list of the latest events (JSON)
    KEYS[4] delayed           zset of deadlines by due time (the delayed set)

    ARGV[1] expected rev ('0' = create: the session must not exist)
    ARGV[2] new rev
    ARGV[3] the session record (JSON)
    ARGV[4] session id
    ARGV[5] '1' unfinished (listed, kept), '0' finished (unlisted, expires)
    ARGV[6] how long a finished session is kept, ms
    ARGV[7] how many events the log keeps
    ARGV[8] E, the number of new events
    ARGV[9] D, the number of deadline changes
    ARGV[10] the wake-up channel ('' = no wake-up); a channel, not a key
    then E events (JSON), then D triples (op 'a' add / 'r' remove, due ms, member)

  Output:
    1  written
    0  the stored rev is not ARGV[1] (another write came first): nothing written
]]
local cur = redis.call('HGET', KEYS[1], 'rev')
if ARGV[1] == '0' then
  if cur then return 0 end
elseif cur ~= ARGV[1] then
  return 0
end
redis.call('HSET', KEYS[1], 'rev', ARGV[2], 'json', ARGV[3])
local ne = tonumber(ARGV[8])
if ne > 0 then
  redis.call('RPUSH', KEYS[3], unpack(ARGV, 11, 10 + ne))
  redis.call('LTRIM', KEYS[3], -tonumber(ARGV[7]), -1)
end
if ARGV[5] == '1' then
  redis.call('SADD', KEYS[2], ARGV[4])
  redis.call('PERSIST', KEYS[1])
  redis.call('PERSIST', KEYS[3])
else
  redis.call('SREM', KEYS[2], ARGV[4])
  redis.call('PEXPIRE', KEYS[1], ARGV[6])
  redis.call('PEXPIRE', KEYS[3], ARGV[6])
end
local i = 11 + ne
for _ = 1, tonumber(ARGV[9]) do
  if ARGV[i] == 'a' then
    redis.call('ZADD', KEYS[4], ARGV[i + 1], ARGV[i + 2])
  else
    redis.call('ZREM', KEYS[4], ARGV[i + 2])
  end
  i = i + 3
end
-- The wake-up carries the record itself: waiters in every process take the new state from
-- the message instead of each reading it back.
if ARGV[10] ~= '' then
  redis.call('PUBLISH', ARGV[10], ARGV[3])
end
return 1
