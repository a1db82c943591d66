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
local day = utc_date(now_ms())
if day ~= ARGV[3] then return {'day', day} end
redis.call('HINCRBY', KEYS[1], ARGV[1], 1)
redis.call('EXPIRE', KEYS[1], ARGV[2])
redis.call('HINCRBY', KEYS[2], ARGV[1], 1)
return 1
