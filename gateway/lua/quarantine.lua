--[[
  Hides a revision everywhere (get_level, the Labor, board level threads); its evidence
  stays. A promoted revision is refused (the operator rolls it back first).

  Input:
    KEYS[1] level:<level>:promoted     the level's promoted revision id
    KEYS[2] rev:<id>:state             the revision's state
    KEYS[3] labor                      zset of Labor candidates
    KEYS[4] owner:<owner>:candidates   set of the owner's candidates
    KEYS[5] rev:<id>                   the revision hash (must exist)
    KEYS[6] level:<level>:history      earlier promoted revisions: a quarantined one is
                                       taken off, so no rollback brings it back

    ARGV[1] revision id

  Output:
    'ok'        quarantined
    'promoted'  it is the level's promoted revision (nothing written)
    'missing'   no such revision
]]
if redis.call('EXISTS', KEYS[5]) == 0 then return 'missing' end
if redis.call('GET', KEYS[1]) == ARGV[1] then return 'promoted' end
redis.call('SET', KEYS[2], 'quarantined')
redis.call('ZREM', KEYS[3], ARGV[1])
redis.call('SREM', KEYS[4], ARGV[1])
redis.call('LREM', KEYS[6], 0, ARGV[1])
return 'ok'
