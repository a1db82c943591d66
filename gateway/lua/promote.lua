--[[
  Promotes exactly one revision of a level, if the level's promoted revision is still the
  one the operator expects (compare-and-set), and retires that one.

  Input:
    KEYS[1] level:<level>:promoted     the promoted revision id of the level
    KEYS[2] rev:<id>:state             the new revision's state
    KEYS[3] labor                      zset of Labor candidates
    KEYS[4] owner:<owner>:candidates   set of the owner's candidates
    KEYS[5] level:<level>:history      list of earlier promoted revisions, newest first
    KEYS[6] rev:<expected>:state       the expected current revision's state ('rev::state'
                                       when none is expected; then it is not touched)

    ARGV[1] revision id
    ARGV[2] expected current revision id ('' = none promoted yet)

  Output:
    'ok'             promoted
    'stale:<cur>'    the level's promoted revision is <cur> ('' = none), not ARGV[2]
    'state:<state>'  the revision is neither a Labor candidate nor retired

  Cluster note: the previous revision's state key is known to the caller only as the
  expected current revision. That is safe: the script touches KEYS[6] only when the stored
  promoted id equals ARGV[2], i.e. when KEYS[6] is exactly the key of the revision it retires.
]]
local cur = redis.call('GET', KEYS[1]) or ''
if cur ~= ARGV[2] then return 'stale:' .. cur end
local state = redis.call('GET', KEYS[2]) or 'labor'
if state ~= 'labor' and state ~= 'retired' then return 'state:' .. state end
if cur ~= '' then
  redis.call('SET', KEYS[6], 'retired')
  redis.call('LPUSH', KEYS[5], cur)
end
redis.call('SET', KEYS[1], ARGV[1])
redis.call('SET', KEYS[2], 'promoted')
redis.call('ZREM', KEYS[3], ARGV[1])
redis.call('SREM', KEYS[4], ARGV[1])
return 'ok'
