--[[
  Publishes one shipped level as a promoted revision of the operator's account, once: a
  revision id that exists already means this level on this engine is published (by this or
  another process), and nothing changes.

  Input:
    KEYS[1]  rev:<id>                  the new revision's hash (written once)
    KEYS[2]  rev:<id>:state            its state
    KEYS[3]  level:<name>:owner        who holds the name
    KEYS[4]  level:<name>:promoted     the level's promoted revision id
    KEYS[5]  level:<name>:history      earlier promoted revisions, newest first
    KEYS[6]  owner:<owner>:revs        zset of the owner's revisions
    KEYS[7]  account:<owner>           the operator's account (created if missing)
    KEYS[8]  levels:promoted           set of the names with a promoted revision
    KEYS[9]  rev:<cur>                 the revision the caller read as promoted ('rev:' if none)
    KEYS[10] rev:<cur>:state           its state

    ARGV[1] revision id        ARGV[2] owner           ARGV[3] level name (lowercase)
    ARGV[4] evidence bytes     ARGV[5] map text        ARGV[6] replay JSON
    ARGV[7] seed               ARGV[8] ticks           ARGV[9] mapHash
    ARGV[10] engineVersion     ARGV[11] <cur> ('' = none promoted)
    ARGV[12] the owner's display name                  ARGV[13] policyVersion
    ARGV[14] acceptance report JSON
    ARGV[15] the map's title (its `name:` line, cleaned), so listing cards never parses maps

  Output:
    {'present'}             stored before: nothing to do
    {'kept', cur}           another owner's revision <cur> is promoted (the operator's choice)
    {'moved'}               the promoted id changed since the caller read it: read again
    {'published', detail}   stored and promoted; detail is the retired revision (or '') or
                            'took the name over from <account>'

  A new revision of the same map on the same engine (only the replay changed: the shipped
  replay was made easier, or the previous one's hash was of other text) is the same level to
  play: its 'progressFrom' names the revision it replaces and the ones that one named (newest
  first, at most 8), so a browser's progress on them counts for it (web/game/progress.js).

  Cluster note: KEYS[9] and KEYS[10] depend on what is stored, so the caller reads the
  promoted id first and passes their keys; the script checks it is still that id.
]]
local now = now_ms()
if redis.call('EXISTS', KEYS[1]) == 1 then return {'present'} end
local cur = redis.call('GET', KEYS[4]) or ''
if cur ~= ARGV[11] then return {'moved'} end
if cur ~= '' and redis.call('HGET', KEYS[9], 'owner') ~= ARGV[2] then return {'kept', cur} end
if redis.call('EXISTS', KEYS[7]) == 0 then
  redis.call('HSET', KEYS[7], 'name', ARGV[2], 'kind', 'operator', 'trust', '2', 'blocked', '0',
    'displayName', ARGV[12], 'createdAtMs', now)
end
local progress_from = ''
if cur ~= '' and redis.call('HGET', KEYS[9], 'mapHash') == ARGV[9]
    and redis.call('HGET', KEYS[9], 'engineVersion') == ARGV[10] then
  local ids = {cur}
  for id in string.gmatch(redis.call('HGET', KEYS[9], 'progressFrom') or '', '%S+') do
    if #ids >= 8 then break end
    ids[#ids + 1] = id
  end
  progress_from = table.concat(ids, ' ')
end
local claimed = redis.call('GET', KEYS[3]) or ''
redis.call('SET', KEYS[3], ARGV[2])
redis.call('HSET', KEYS[1], 'revisionId', ARGV[1], 'owner', ARGV[2], 'name', ARGV[3],
  'parentRevisionId', cur, 'bytes', ARGV[4], 'createdAtMs', now,
  'map', ARGV[5], 'replay', ARGV[6], 'seed', ARGV[7], 'ticks', ARGV[8], 'mapHash', ARGV[9],
  'engineVersion', ARGV[10], 'policyVersion', ARGV[13], 'acceptance', ARGV[14], 'jobId', '',
  'title', ARGV[15], 'progressFrom', progress_from)
redis.call('SET', KEYS[2], 'promoted')
redis.call('ZADD', KEYS[6], now, ARGV[1])
if cur ~= '' then
  redis.call('SET', KEYS[10], 'retired')
  redis.call('LPUSH', KEYS[5], cur)
end
redis.call('SET', KEYS[4], ARGV[1])
redis.call('SADD', KEYS[8], ARGV[3])
if claimed ~= '' and claimed ~= ARGV[2] then return {'published', 'took the name over from ' .. claimed} end
return {'published', cur}
