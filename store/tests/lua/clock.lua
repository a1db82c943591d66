--[[
  A test script: what a script sees of its arguments and the clock.

  Input:
    KEYS[1] any key (not touched)

    ARGV[1] anything
    ARGV[2] anything

  Output:
    {#ARGV, now_ms(), utc_date(now_ms())}
]]
local now = now_ms()
return {#ARGV, now, utc_date(now)}
