--[[
  IDLE: register a slot as idle in its pool (or refresh its entry), then look once more
  whether a job waits in its lanes; one atomic step. A new entry marks the pool as possibly
  holding an idle slot in queue:fair ('idle:<pool>' = '1'), which admission reads before it
  pops one (admit.lua): in the same step, so no admission can find the mark cleared while
  this slot is registered.

  A slot that finds itself no longer registered (a new entry, where it had one) was taken
  off by an admission: woken, or handed a job (admit.lua) whose wake-up it has not heard
  (pub/sub is fire-and-forget). Then the job running under its name that it does not know
  of is looked for (held_claim, as claimed_by.lua), and answered instead: the slot leaves
  the idle slots again and runs it, so a lost wake-up never strands a handed job.

  Input:
    KEYS[1] queue:handoff:<pool>    the pool's idle slots (admit.lua)
    KEYS[2] queue:fair              (keys.rs)
    KEYS[3] queue:lane:<lane>       the lanes the pool claims from (a referee slot: the
    KEYS[4] queue:lane:<lane>       referee lane twice)
    KEYS[5] queue:running           running job ids by lease expiry
    KEYS[6] the queue group's base  the running jobs' records are named from it (group_key)

    ARGV[1] the slot's id
    ARGV[2] its pool ('general' or 'referee')
    ARGV[3] the newest claim token the slot was handed ('0': none): a job under its name
            with this token or an older one is known to it (run, or given up), never handed
    ARGV[4] '1': the slot was registered (this is a refresh): a new entry means it was
            taken off; '': a first registration (it was not registered)

  The entry's score is the server's time now: admission hands a job only to a slot whose
  entry is fresh (its worker refreshes it every second while it lives).

  Output:
    {'claimed', token, values, 0}   a job was handed to this slot: claimed_by.lua's reply;
                                    the slot is not registered
    1  a job waits in the lanes: claim it (an admission before the registration woke nobody
       for it)
    0  none waits: the slot is registered and an admission will wake it (or hand it a job)

  Cluster note: the running jobs' records are queue keys named from KEYS[6] in its hash
  slot, as in claimed_by.lua.
]]
-- Its entry's score: when it said so, but never older than its newest claim's token, which
-- admission's hand-off passes (admit.lua: a handed job's token is newer than the score).
local now_text = int(math.max(now_ms(), ARGV[3] + 0))
if redis.call('ZADD', KEYS[1], now_text, ARGV[1]) == 1 then
  if ARGV[4] == '1' then
    local held = held_claim(5, 6, ARGV[1], ARGV[3])
    if held then
      redis.call('ZREM', KEYS[1], ARGV[1])
      return held
    end
  end
  redis.call('HSET', KEYS[2], 'idle:' .. ARGV[2], '1')
end
if redis.call('EXISTS', KEYS[3], KEYS[4]) > 0 then return 1 end
return 0
