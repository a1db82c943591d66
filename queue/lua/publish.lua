--[[
  PUBLISH: records what became of a won submission (stored as a revision, refused, or not
  published because its caller left), once: the only writer of a job's 'publication'. A
  later call finds the first answer and gets it back, except that a stored revision
  replaces 'unpublished' (the revision exists: that is the truth a retry must answer).

  Input:
    KEYS[1] job:<job_id>   the job record

    ARGV[1] the publication (JSON, `horst_queue::Publication`)
    ARGV[2] its kind: 'stored', 'refused' or 'unpublished'

  Output:
    {'recorded', publication}   ARGV[1] is recorded now
    {'kept', publication}       an earlier publication stands: it is returned
    {'not_succeeded'}           the job is not a succeeded one (or has no record)
]]
local jk = KEYS[1]
local f = redis.call('HMGET', jk, 'state', 'published_as', 'publication')
if f[1] ~= 'succeeded' then return {'not_succeeded'} end
if f[2] and not (f[2] == 'unpublished' and ARGV[2] == 'stored') then
  return {'kept', f[3]}
end
redis.call('HSET', jk, 'publication', ARGV[1], 'published_as', ARGV[2])
return {'recorded', ARGV[1]}
