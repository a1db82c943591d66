-- The shared prelude, prepended to every registered script (horst_store::script). Not a
-- script of its own: it has no KEYS; its one argument is the clock offset, which the registry
-- appends after the script's declared ARGV and which is taken off here, so the script sees
-- exactly the ARGV its header lists.
--
-- The only clock is the server's TIME, shifted by that offset (ms; 0 in production; tests
-- move it to cross a UTC midnight in every crate). No helper builds a key: every key a script
-- touches arrives in KEYS (Redis Cluster routes a script by its KEYS).
--
-- A number held as text (an ARGV entry, a stored field) is read with `s + 0` where
-- tonumber(s) would be the obvious way: tonumber converts the text twice (it checks, then
-- converts: two strtod calls, about 900 instructions for a 13-digit time, by callgrind),
-- arithmetic once. For text that is always a number; `(s or 0) + 0` where it may be missing.
local CLOCK_OFFSET_MS = table.remove(ARGV) + 0
-- Read once a run: a script is one step, and so is a group of calls (run_group below), which
-- then shares one TIME instead of a command for each call (an admission's, a completion's).
local clock_ms = false
local function now_ms()
  if not clock_ms then
    local t = redis.call('TIME')
    clock_ms = t[1] * 1000 + math.floor(t[2] / 1000) + CLOCK_OFFSET_MS
  end
  return clock_ms
end
local DAY_MS = 86400000
-- The UTC day of `ms` as a number of days since the Unix epoch.
local function day_of(ms) return math.floor(ms / DAY_MS) end
-- Whole seconds from `ms` to the next UTC midnight (at least 1).
local function to_midnight_s(ms) return math.ceil(((day_of(ms) + 1) * DAY_MS - ms) / 1000) end
-- The UTC date of `ms` as 'YYYY-MM-DD' (civil_from_days; Redis's Lua has no os.date).
local function utc_date(ms)
  local z = day_of(ms) + 719468
  local era = math.floor(z / 146097)
  local doe = z - era * 146097
  local yoe = math.floor((doe - math.floor(doe / 1460) + math.floor(doe / 36524) - math.floor(doe / 146096)) / 365)
  local y = yoe + era * 400
  local doy = doe - (365 * yoe + math.floor(yoe / 4) - math.floor(yoe / 100))
  local mp = math.floor((5 * doy + 2) / 153)
  local d = doy - math.floor((153 * mp + 2) / 5) + 1
  local m = mp + 3
  if mp >= 10 then m = mp - 9 end
  if m <= 2 then y = y + 1 end
  return string.format('%04d-%02d-%02d', y, m, d)
end

-- A group script's loop (horst_store's `Script::group_of`): runs `one` (the inner script's
-- text as a function) once for each call the group carries, with that call's nk KEYS and
-- na ARGV, which it makes its KEYS and ARGV (locals of the group script's that its helpers
-- read too: Redis's globals are read-only). The reply: the calls' replies in order,
-- {'error', message} for one whose run raised or returned an error (a refused write, as at
-- maxmemory: the message is Redis's own), which ends that call only: what it wrote before
-- the error stays, as after a call of its own that failed there.
local function run_group(one, nk, na)
  local replies = {}
  for c = 0, #KEYS / nk - 1 do
    local ok, reply = pcall(one, {unpack(KEYS, c * nk + 1, c * nk + nk)},
      {unpack(ARGV, c * na + 1, c * na + na)})
    if not ok or (type(reply) == 'table' and reply.err) then
      -- redis.call raises the server's error as a string (a table with `err` in some
      -- versions), Lua itself a string; a script may return redis.error_reply's table. An
      -- error inside an array would fail the whole reply on a cluster connection.
      if type(reply) == 'table' then reply = reply.err end
      reply = {'error', tostring(reply)}
    end
    replies[c + 1] = reply
  end
  return replies
end
