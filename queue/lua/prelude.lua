-- Shared by every script. The only clock is the server's TIME, shifted by an offset that
-- tests use to cross a UTC midnight (always 0 in production).
local P = ARGV[1]
local function now_ms()
  local t = redis.call('TIME')
  return tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000) + tonumber(ARGV[2])
end
local DAY_MS = 86400000
local function day_of(ms) return math.floor(ms / DAY_MS) end
local function to_midnight_s(ms) return math.ceil(((day_of(ms) + 1) * DAY_MS - ms) / 1000) end
local function budget_key(day) return P .. 'budget:' .. day end
local function daily_key(day, account) return P .. 'daily:' .. day .. ':' .. account end
-- Counters of a day live a little longer than the day, for the admin overview.
local COUNTER_TTL = 3 * 86400

-- Counts a finished job in its day's budget hash, by kind and final state (the overview).
local function count_done(jk, state)
  local f = redis.call('HMGET', jk, 'kind', 'day')
  if f[1] and f[2] then
    redis.call('HINCRBY', budget_key(f[2]), 'done:' .. f[1] .. ':' .. state, 1)
  end
end

-- A queued job that will never run: give back what admission took (reservation, daily
-- count), forget its idempotency key so a retry starts afresh, record why, and wake waiters.
local function release(jk, jid, now, state, code, message, job_ttl)
  local f = redis.call('HMGET', jk, 'account', 'trust', 'kind', 'reserved', 'day', 'idem')
  local account, trust, kind, reserved, day, idem = f[1], f[2], f[3], tonumber(f[4]), f[5], f[6]
  redis.call('HINCRBY', budget_key(day), 'used', -reserved)
  if trust == '0' then redis.call('HINCRBY', budget_key(day), 'trust0', -reserved) end
  redis.call('HINCRBY', daily_key(day, account), kind, -1)
  local ik = P .. 'idem:' .. account .. ':' .. idem
  local rec = redis.call('GET', ik)
  if rec and string.sub(rec, -string.len(jid)) == jid then redis.call('DEL', ik) end
  redis.call('HSET', jk, 'state', state, 'finished', now,
    'failure', cjson.encode({code = code, message = message}))
  count_done(jk, state)
  redis.call('EXPIRE', jk, job_ttl)
  redis.call('PUBLISH', P .. 'done:' .. jid, state)
end
