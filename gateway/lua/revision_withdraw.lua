--[[
  Withdraws a revision (hides it; evidence, storage charge and name claim stay). A promoted
  revision is refused: the operator rolls promoted revisions back. A quarantined one is
  refused too: the operator's quarantine hides it from everyone, its owner included, and a
  withdrawal would turn it into a revision its owner reads again.

  Input:
    KEYS[1] rev:<id>:state             the revision's state
    KEYS[2] labor                      zset of Labor candidates
    KEYS[3] owner:<owner>:candidates   set of the owner's candidates
    KEYS[4] level:<level>:history      earlier promoted revisions: a withdrawn one is taken
                                       off, so no rollback brings it back

    ARGV[1] revision id

  Output:
    'ok'        withdrawn
    'promoted'     refused (nothing written)
    'quarantined'  refused (nothing written)
]]
local s = redis.call('GET', KEYS[1])
if s == 'promoted' or s == 'quarantined' then return s end
redis.call('SET', KEYS[1], 'withdrawn')
redis.call('ZREM', KEYS[2], ARGV[1])
redis.call('SREM', KEYS[3], ARGV[1])
redis.call('LREM', KEYS[4], 0, ARGV[1])
return 'ok'
