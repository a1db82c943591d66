--[[
  REMAINING: what an account may still do today.

  Input:
    KEYS[1] budget:<day>            today's seconds, and the account's jobs by kind
                                    ('d:<account>:<kind>', admit.lua)

    ARGV[1] <day> the keys are for  ARGV[5] simulations a day
    ARGV[2] trust                   ARGV[6] daily seconds
    ARGV[3] submissions a day       ARGV[7] trust-0 share, s
    ARGV[4] playtests a day         ARGV[8] the account

  Output:
    {'ok', submissions, playtests, simulations, seconds, to_midnight_s}
    {'day', day}   ARGV[1] is not today on the server clock: call again with these keys

  Cluster note: as in admit, the caller passes its guess of the day and the script checks it.
]]
local now = now_ms()
local day = day_of(now)
if tostring(day) ~= ARGV[1] then return {'day', day} end
local a = 'd:' .. ARGV[8] .. ':'
local b = redis.call('HMGET', KEYS[1], 'used', 'trust0', a .. 'submit', a .. 'playtest',
  a .. 'simulate')
local d = {b[3], b[4], b[5]}
local function left(limit, used) return math.max(0, tonumber(limit) - (tonumber(used) or 0)) end
local seconds = left(ARGV[6], b[1])
if ARGV[2] == '0' then seconds = math.min(seconds, left(ARGV[7], b[2])) end
return {'ok', left(ARGV[3], d[1]), left(ARGV[4], d[2]), left(ARGV[5], d[3]), seconds, to_midnight_s(now)}
