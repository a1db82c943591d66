--[[
  PROGRESS: a running job's worker records how far it got (for get_submission and the
  operator's job view), only while it holds the job's current token.

  Input:
    KEYS[1] job:<job_id>   the job record

    ARGV[1] fencing token
    ARGV[2] progress (JSON)

  Output:
    1  recorded
    0  not running under this token (finished, cancelled or reaped): nothing changed
]]
-- A claim's token is its start (claim_next writes no `token` field; a hand-off does).
local f = redis.call('HMGET', KEYS[1], 'state', 'token', 'started')
if f[1] ~= 'running' or (f[2] or f[3]) ~= ARGV[1] then return 0 end
redis.call('HSET', KEYS[1], 'progress', ARGV[2])
return 1
