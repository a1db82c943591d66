-- The board's Lua helpers, shared by the scripts that change what a thread list shows
-- (board_write.lua, board_endorse.lua, board_change.lua): the registry sends the store's
-- prelude, then this file, then the script (horst_store::script, `Script::with_helpers`).
-- Not a script of its own: no KEYS, no ARGV.
--
-- A thread's listing indexes are 12 sorted sets, passed in KEYS from position `first` in
-- this order (gateway/src/keys.rs `board_index`, gateway/src/board.rs `IndexKeys`):
--   by activity (score lastPostAtMs):  all, kind, status, kind+status, level, level+status
--   by endorsements (score endorsements * ENDORSED_SPAN + lastPostAtMs): the same six
-- An idea thread has no level: its two level keys are passed but left alone. A thread is in
-- its indexes exactly when it is not withdrawn and its first post is neither hidden nor
-- withdrawn; a blocked author and an unreadable level are judged when reading.

-- Endorsements weigh more than any time in ms before the year 2286; exact (whole numbers in
-- a double) up to 900 endorsements, a few ms off in the tie-break by activity beyond.
local ENDORSED_SPAN = 10000000000000

local function board_unindex(first, id)
  for i = first, first + 11 do
    redis.call('ZREM', KEYS[i], id)
  end
end

-- Puts thread `id` into the 12 keys from KEYS[first] with its scores now, or takes it out
-- of them when agents cannot list it, from the thread hash, its first post and endorsers.
local function board_index(thread_key, first_post_key, endorsers_key, first, id)
  local t = redis.call('HMGET', thread_key, 'withdrawn', 'firstPostId', 'lastPostAtMs', 'kind')
  local listed = t[2] and t[2] ~= '' and t[1] ~= '1'
  if listed then
    local p = redis.call('HMGET', first_post_key, 'postId', 'hidden', 'withdrawn')
    listed = p[1] == t[2] and p[2] ~= '1' and p[3] ~= '1'
  end
  if not listed then return board_unindex(first, id) end
  local at = tonumber(t[3]) or 0
  local endorsements = redis.call('SCARD', endorsers_key)
  local scores = {
    string.format('%.0f', at),
    string.format('%.0f', endorsements * ENDORSED_SPAN + at),
  }
  for order = 0, 1 do
    for j = 0, 5 do
      if j < 4 or t[4] == 'level' then
        redis.call('ZADD', KEYS[first + order * 6 + j], scores[order + 1], id)
      end
    end
  end
end
