--[[
  Sends a note to the operator, checking and charging the daily limit and the cap on unread
  notes in one step, so concurrent calls cannot overshoot.

  Input:
    KEYS[1] contact:quota:<account>:<day>   notes sent today
    KEYS[2] contact:unread:<account>        set of the account's unread note ids
    KEYS[3] contact:msg:<id>                the note hash
    KEYS[4] contact:unread                  set of all unread note ids
    KEYS[5] contact:all                     zset of all notes by time

    ARGV[1] notes a day (limit)
    ARGV[2] most unread notes an account may have
    ARGV[3] note id
    ARGV[4] account
    ARGV[5] category
    ARGV[6] subject
    ARGV[7] message
    ARGV[8] now, ms

  Output:
    { 1, sent_today}   sent
    {-1, sent_today}   the daily limit is used up
    {-2, sent_today}   too many unread notes
]]
local n = tonumber(redis.call('GET', KEYS[1]) or '0')
if n >= tonumber(ARGV[1]) then return {-1, n} end
if redis.call('SCARD', KEYS[2]) >= tonumber(ARGV[2]) then return {-2, n} end
n = redis.call('INCR', KEYS[1])
redis.call('EXPIRE', KEYS[1], 172800)
redis.call('HSET', KEYS[3], 'messageId', ARGV[3], 'account', ARGV[4], 'category', ARGV[5],
  'subject', ARGV[6], 'message', ARGV[7], 'createdAtMs', ARGV[8], 'read', '0')
redis.call('SADD', KEYS[2], ARGV[3])
redis.call('SADD', KEYS[4], ARGV[3])
redis.call('ZADD', KEYS[5], ARGV[8], ARGV[3])
return {1, n}
