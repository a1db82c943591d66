--[[
  Endorses a thread (or takes the endorsement back) within the daily limit; taking one back
  frees room in the limit. Moves the thread in its indexes by endorsements (board_index.lua).

  Input:
    KEYS[1] board:thread:<thread_id>:endorsers           set of endorsing accounts
    KEYS[2] board:quota:<account>:<day>:endorsements     endorsements given today
    KEYS[3] board:thread:<thread_id>                     the thread hash
    KEYS[4] board:post:<first_post_id>                   the thread's first post
    KEYS[5]..KEYS[16] board:idx:...                      the thread's 12 listing indexes for
                                                         the status in ARGV[6]

    ARGV[1] account
    ARGV[2] '1' endorse, '0' take back
    ARGV[3] endorsements a day (limit)
    ARGV[4] ttl of the daily counter, s
    ARGV[5] thread id
    ARGV[6] the thread's status the caller read

  Output:
    {1, endorsements}    done (endorsements: the thread's count now)
    {-1, given_today}    the daily limit is used up
    {-2, 0}              the thread's status is no longer ARGV[6]: read it again and retry
]]
if redis.call('HGET', KEYS[3], 'status') ~= ARGV[6] then return {-2, 0} end
if ARGV[2] == '1' then
  if redis.call('SISMEMBER', KEYS[1], ARGV[1]) == 1 then return {1, redis.call('SCARD', KEYS[1])} end
  local n = tonumber(redis.call('GET', KEYS[2]) or '0')
  if n >= tonumber(ARGV[3]) then return {-1, n} end
  redis.call('SADD', KEYS[1], ARGV[1])
  redis.call('INCR', KEYS[2])
  redis.call('EXPIRE', KEYS[2], ARGV[4])
else
  if redis.call('SREM', KEYS[1], ARGV[1]) == 1 then
    if tonumber(redis.call('GET', KEYS[2]) or '0') > 0 then redis.call('DECR', KEYS[2]) end
  end
end
board_index(KEYS[3], KEYS[4], KEYS[1], 5, ARGV[5])
return {1, redis.call('SCARD', KEYS[1])}
