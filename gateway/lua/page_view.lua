--[[
  Counts one view of a game page, per UTC day (Redis's clock) and in total.

  Input:
    KEYS[1] pageviews:day:<YYYY-MM-DD>   today's counts by page (the caller names today, read
                                         from the same clock; ARGV[3] is checked against it)
    KEYS[2] pageviews:total              counts by page, ever

    ARGV[1] page (game, level or board)
    ARGV[2] seconds to keep a day's counts
    ARGV[3] the UTC day of KEYS[1]

  Output:
    1         counted
    {'day', d} the UTC day is d, not ARGV[3] (midnight passed): call again with d
]]
local t = redis.call('TIME')
-- The UTC date of the Unix day (civil_from_days; Redis's Lua has no os.date).
local z = math.floor(tonumber(t[1]) / 86400) + 719468
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
local day = string.format('%04d-%02d-%02d', y, m, d)
if day ~= ARGV[3] then return {'day', day} end
redis.call('HINCRBY', KEYS[1], ARGV[1], 1)
redis.call('EXPIRE', KEYS[1], ARGV[2])
redis.call('HINCRBY', KEYS[2], ARGV[1], 1)
return 1
