-- REMAINING: what an account may still do today.
-- ARGV: 3 account, 4 trust, 5 limit_submit, 6 limit_playtest, 7 limit_simulate,
-- 8 daily_seconds, 9 trust0_cap_s. Returns {submissions, playtests, simulations, seconds, to_midnight_s}.
local now = now_ms()
local day = day_of(now)
local d = redis.call('HMGET', daily_key(day, ARGV[3]), 'submit', 'playtest', 'simulate')
local b = redis.call('HMGET', budget_key(day), 'used', 'trust0')
local function left(limit, used) return math.max(0, tonumber(limit) - (tonumber(used) or 0)) end
local seconds = left(ARGV[8], b[1])
if ARGV[4] == '0' then seconds = math.min(seconds, left(ARGV[9], b[2])) end
return {left(ARGV[5], d[1]), left(ARGV[6], d[2]), left(ARGV[7], d[3]), seconds, to_midnight_s(now)}
