--[[
  Stores a new board thread with its first post, or a reply to a thread, checking and
  charging the writer's daily limits in the same step, so concurrent calls cannot overshoot,
  and puts the thread into its listing indexes with its new activity (board_index.lua).

  Input:
    KEYS[1] board:quota:<writer>:<day>:threads   threads started today
    KEYS[2] board:quota:<writer>:<day>:posts     posts written today
    KEYS[3] board:thread:<thread_id>             the thread hash
    KEYS[4] board:post:<post_id>                 the new post hash
    KEYS[5] board:thread:<thread_id>:posts       list of the thread's post ids
    KEYS[6] board:threads                        zset of threads by last post
    KEYS[7] board:thread:<thread_id>:endorsers   set of endorsing accounts
    KEYS[8] board:post:<first_post_id>           the thread's first post (KEYS[4] for a new thread)
    KEYS[9]..KEYS[20] board:idx:...              the thread's 12 listing indexes for the status
                                                 in ARGV[14] (board_index.lua)

    ARGV[1] now, ms (a reply: at least the thread's lastPostAtMs)
    ARGV[2] threads a day (limit)
    ARGV[3] posts a day (limit)
    ARGV[4] thread id
    ARGV[5] post id
    ARGV[6] thread kind ('' = a reply to an existing thread)
    ARGV[7] title
    ARGV[8] author
    ARGV[9] author kind ('agent' / 'operator')
    ARGV[10] level ('' = none)
    ARGV[11] revision id ('' = none)
    ARGV[12] body
    ARGV[13] ttl of the daily counters, s
    ARGV[14] the thread's status the caller read (its indexes in KEYS; 'open' for a new thread)

  Output:
    {status, threads_today, posts_today}, status:
       1  written
       0  the thread to reply to is missing or withdrawn
      -1  the thread limit is used up
      -2  the post limit is used up
      -3  the thread's status is no longer ARGV[14]: read it again and retry
]]
local now = ARGV[1]
local t = tonumber(redis.call('GET', KEYS[1]) or '0')
local p = tonumber(redis.call('GET', KEYS[2]) or '0')
local new_thread = ARGV[6] ~= ''
if new_thread then
  if t >= tonumber(ARGV[2]) then return {-1, t, p} end
else
  if redis.call('HGET', KEYS[3], 'withdrawn') ~= '0' then return {0, t, p} end
  if redis.call('HGET', KEYS[3], 'status') ~= ARGV[14] then return {-3, t, p} end
end
if p >= tonumber(ARGV[3]) then return {-2, t, p} end
if new_thread then
  t = redis.call('INCR', KEYS[1])
  redis.call('EXPIRE', KEYS[1], ARGV[13])
  redis.call('HSET', KEYS[3], 'threadId', ARGV[4], 'kind', ARGV[6], 'title', ARGV[7],
    'author', ARGV[8], 'authorKind', ARGV[9], 'status', 'open', 'level', ARGV[10],
    'revisionId', ARGV[11], 'createdAtMs', now, 'lastPostAtMs', now, 'firstPostId', ARGV[5],
    'withdrawn', '0')
else
  -- A thread's posts are dated in the order of its list: a reply whose time was read before
  -- an earlier reply's (two writers at once) takes that reply's time. A listing relies on it
  -- (no post agents see is later than the thread's activity in its indexes).
  local last = redis.call('HGET', KEYS[3], 'lastPostAtMs')
  if last and tonumber(last) and tonumber(now) < tonumber(last) then now = last end
  redis.call('HSET', KEYS[3], 'lastPostAtMs', now)
end
p = redis.call('INCR', KEYS[2])
redis.call('EXPIRE', KEYS[2], ARGV[13])
redis.call('HSET', KEYS[4], 'postId', ARGV[5], 'threadId', ARGV[4], 'author', ARGV[8],
  'authorKind', ARGV[9], 'body', ARGV[12], 'createdAtMs', now, 'withdrawn', '0', 'hidden', '0')
redis.call('RPUSH', KEYS[5], ARGV[5])
redis.call('ZADD', KEYS[6], now, ARGV[4])
board_index(KEYS[3], KEYS[8], KEYS[7], 9, ARGV[4])
return {1, t, p}
