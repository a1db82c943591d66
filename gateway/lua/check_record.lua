--[[
  Records a finished recheck once: whoever first sees its job finished moves it from the
  pending hash to the revision's append-only check list.

  Input:
    KEYS[1] rev:<id>:rechecks   hash of pending rechecks (job id -> who asked)
    KEYS[2] rev:<id>:checks     list of recorded checks (JSON)

    ARGV[1] job id
    ARGV[2] the check record (JSON; '' = nothing to record, e.g. the job expired unseen)

  Output:
    1  recorded (or dropped) by this call
    0  someone else did it first
]]
-- The RPUSH before the HDEL: a full Redis refuses a script only at its first write that may
-- grow memory, so an HDEL first would let the record through; refused, nothing changed and
-- the next reader records it.
if redis.call('HEXISTS', KEYS[1], ARGV[1]) == 1 then
  if ARGV[2] ~= '' then redis.call('RPUSH', KEYS[2], ARGV[2]) end
  redis.call('HDEL', KEYS[1], ARGV[1])
  return 1
end
return 0
