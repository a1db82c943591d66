--[[
  Stores a winning submission as an immutable Labor revision, within the owner's Labor cap
  and the storage budgets, and claims the level name for its owner on first use. Once per
  job: a second call for the same job (a retry after its first caller stopped between this
  script and recording the publication on the job) answers the revision stored first.

  Input:
    KEYS[1] rev:<id>                  the revision hash (must not exist)
    KEYS[2] rev:<id>:state            its state ('labor')
    KEYS[3] level:<name>:owner        the name's owner (claimed with NX)
    KEYS[4] labor                     zset of Labor candidates by time
    KEYS[5] owner:<owner>:revs        zset of the owner's revisions by time
    KEYS[6] owner:<owner>:candidates  set of the owner's candidates
    KEYS[7] storage:<owner>           bytes stored by the owner
    KEYS[8] storage:total             bytes stored in total
    KEYS[9] rev:<parent>              the parent revision hash ('rev:' when there is none)
    KEYS[10] revjob:<job_id>          the revision stored for the submission job ARGV[17]

    ARGV[1] revision id          ARGV[10] replay (JSON)
    ARGV[2] owner                ARGV[11] seed
    ARGV[3] level name           ARGV[12] ticks
    ARGV[4] parent id ('' none)  ARGV[13] map hash
    ARGV[5] Labor cap            ARGV[14] engine version
    ARGV[6] owner's byte budget  ARGV[15] policy version
    ARGV[7] total byte budget    ARGV[16] acceptance (JSON)
    ARGV[8] evidence bytes       ARGV[17] job id
    ARGV[9] map                  ARGV[18] how long KEYS[10] is kept, s (the job's retention)
    ARGV[19] the map's title (its `name:` line, cleaned), so listing cards never parses maps

  Output:
    {'ok', now_ms}                           stored at now_ms
    {'stored', revision_id}                  the job's revision was stored before: this one
    {'conflict', 'revision id taken'}
    {'forbidden', 'name'}                    the name belongs to another account
    {'validation_failed', 'parent_missing'}
    {'validation_failed', 'parent_foreign'}  the parent is another owner's or another level's
                                             (or the same level's name written otherwise)
    {'quota', 'labor' | 'owner' | 'global'}  the Labor cap or a byte budget is reached
]]
local now = now_ms()
local earlier = redis.call('GET', KEYS[10])
if earlier then return {'stored', earlier} end
if redis.call('EXISTS', KEYS[1]) == 1 then return {'conflict', 'revision id taken'} end
local claimed = redis.call('GET', KEYS[3])
if claimed and claimed ~= ARGV[2] then return {'forbidden', 'name'} end
if ARGV[4] ~= '' then
  local p = redis.call('HMGET', KEYS[9], 'owner', 'name')
  if not p[1] then return {'validation_failed', 'parent_missing'} end
  if p[1] ~= ARGV[2] or p[2] ~= ARGV[3] then return {'validation_failed', 'parent_foreign'} end
end
if redis.call('SCARD', KEYS[6]) >= tonumber(ARGV[5]) then return {'quota', 'labor'} end
local bytes = tonumber(ARGV[8])
if tonumber(redis.call('GET', KEYS[7]) or '0') + bytes > tonumber(ARGV[6]) then return {'quota', 'owner'} end
if tonumber(redis.call('GET', KEYS[8]) or '0') + bytes > tonumber(ARGV[7]) then return {'quota', 'global'} end
redis.call('SET', KEYS[3], ARGV[2], 'NX')
redis.call('HSET', KEYS[1], 'revisionId', ARGV[1], 'owner', ARGV[2], 'name', ARGV[3],
  'parentRevisionId', ARGV[4], 'bytes', ARGV[8], 'createdAtMs', now,
  'map', ARGV[9], 'replay', ARGV[10], 'seed', ARGV[11], 'ticks', ARGV[12], 'mapHash', ARGV[13],
  'engineVersion', ARGV[14], 'policyVersion', ARGV[15], 'acceptance', ARGV[16], 'jobId', ARGV[17],
  'title', ARGV[19])
redis.call('SET', KEYS[2], 'labor')
redis.call('ZADD', KEYS[4], now, ARGV[1])
redis.call('ZADD', KEYS[5], now, ARGV[1])
redis.call('SADD', KEYS[6], ARGV[1])
redis.call('INCRBY', KEYS[7], bytes)
redis.call('INCRBY', KEYS[8], bytes)
redis.call('SET', KEYS[10], ARGV[1], 'EX', tonumber(ARGV[18]))
return {'ok', tostring(now)}
