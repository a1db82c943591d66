-- Sign-up's caps, shared by sign_up.lua (the authority, atomic with the write) and
-- sign_up_room.lua (the read-only look before a password is hashed): the registry sends the
-- store's prelude, then this file, then the script (horst_store::script,
-- `Script::with_helpers`). Not a script of its own: no KEYS, no ARGV. Both scripts pass the
-- caps' zsets first in their KEYS and the window and caps first in their ARGV, in the order
-- their headers document.

-- {'network_cap', wait_ms}, {'daily_cap', wait_ms} or {'taken_cap', wait_ms} (the network was
-- told of as many taken names as it may) if a cap is reached at `now`, else nil.
-- Counts only read (entries older than the window are ignored).
local function sign_up_cap(now)
  local window = tonumber(ARGV[1])
  local since = '(' .. (now - window)
  local function wait(k)
    local oldest = redis.call('ZRANGEBYSCORE', k, since, '+inf', 'WITHSCORES', 'LIMIT', 0, 1)
    if oldest[2] then return tonumber(oldest[2]) + window - now end
    return window
  end
  local function count(k) return redis.call('ZCOUNT', k, since, '+inf') end
  if count(KEYS[1]) >= tonumber(ARGV[2]) then return {'network_cap', wait(KEYS[1])} end
  if count(KEYS[3]) >= tonumber(ARGV[4]) then return {'network_cap', wait(KEYS[3])} end
  if count(KEYS[2]) >= tonumber(ARGV[3]) then return {'daily_cap', wait(KEYS[2])} end
  if count(KEYS[4]) >= tonumber(ARGV[5]) then return {'daily_cap', wait(KEYS[4])} end
  -- Taken names this network was told of: past their cap, sign-up is no oracle of names.
  if count(KEYS[5]) >= tonumber(ARGV[6]) then return {'taken_cap', wait(KEYS[5])} end
  return nil
end
