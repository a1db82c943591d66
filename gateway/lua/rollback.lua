--[[
  Restores the previously promoted revision of a level: the current one is retired, the
  newest of the history becomes promoted again. A history entry that is no longer retired
  (quarantined or withdrawn since, or the promoted one itself) never comes back: it is taken
  off the history and the caller reads again.

  Input:
    KEYS[1] level:<level>:promoted   the promoted revision id
    KEYS[2] level:<level>:history    list of earlier promoted revisions, newest first
    KEYS[3] rev:<cur>:state          state of the revision the caller read as promoted
    KEYS[4] rev:<prev>:state         state of the revision the caller read as newest in history

    ARGV[1] <cur>, the promoted revision id the caller read
    ARGV[2] <prev>, the newest history entry the caller read
    ARGV[3] '' or the revision the operator expects to come back: another one is refused

  Output:
    {'ok', cur, prev}   rolled back from cur to prev
    {'none'}            the level has no promoted revision
    {'nohistory'}       there is no earlier promoted revision
    {'moved'}           the promoted id or the history changed since the caller read them:
                        read again and retry
    {'skipped', prev, state}   prev is no longer retired (state, '' for none): it was taken
                        off the history; read again and retry
    {'expected', prev}  prev would come back, not ARGV[3] (nothing written)

  Cluster note: both state keys depend on what is stored, so the caller reads the two ids
  first (two steps) and passes their keys. Safe because the script checks, atomically, that
  the ids are still the ones read before it writes either key.
]]
local cur = redis.call('GET', KEYS[1])
if not cur then return {'none'} end
local prev = redis.call('LINDEX', KEYS[2], 0)
if not prev then return {'nohistory'} end
if cur ~= ARGV[1] or prev ~= ARGV[2] then return {'moved'} end
local prev_state = redis.call('GET', KEYS[4])
if prev_state ~= 'retired' or prev == cur then
  redis.call('LPOP', KEYS[2])
  return {'skipped', prev, prev_state or ''}
end
if ARGV[3] ~= '' and ARGV[3] ~= prev then return {'expected', prev} end
-- The SETs before the LPOP: a full Redis refuses a script only at its first write that may
-- grow memory, so an LPOP first would let it through.
redis.call('SET', KEYS[3], 'retired')
redis.call('SET', KEYS[4], 'promoted')
redis.call('SET', KEYS[1], prev)
redis.call('LPOP', KEYS[2])
return {'ok', cur, prev}
